#!/usr/bin/env bash
# Every peer comparison with its default (full) settings, then the Markdown report.
# Appends to bench/peers/results/*.jsonl and writes results/BENCHMARKS-peers.md.
#
# Takes hours on a 2-core machine: CartPole 4 contenders x 3 seeds (each up to 200k frames),
# Pong 3 x 10 min, replay ops at 1M items, memory at 100k Atari transitions (SB3's unoptimized
# buffer alone needs ~5.7 GB of RAM). Run it on an otherwise idle machine: every figure is a rate.
# CORES=N pins every contender to N CPUs (default: all); PEERS="pong memory" runs a subset.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

bash "$HERE/setup.sh"
PY="$HERE/.venv/bin/python"
CORES="${CORES:-$(nproc)}"

for name in ${PEERS:-cartpole pong replay memory}; do
  case "$name" in
    cartpole) script=cartpole_solve.py ;;
    pong)     script=pong_throughput.py ;;
    replay)   script=replay_ops.py ;;
    memory)   script=memory.py ;;
    *) echo "unknown comparison $name (cartpole, pong, replay, memory)" >&2; exit 2 ;;
  esac
  echo "=== $name: bench/peers/$script --cores $CORES"
  "$PY" "bench/peers/$script" --cores "$CORES"
done

"$PY" "$HERE/report.py"
