#!/usr/bin/env bash
# Every peer comparison with its default (full) settings, then the Markdown report.
# Appends a sitting to each bench/results/peers-*.jsonl (or under BENCH_RESULTS=DIR) and prints the report
# (REPORT=FILE writes it there too).
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
    cartpole) module=cartpole_solve ;;
    pong)     module=pong_throughput ;;
    replay)   module=replay_ops ;;
    memory)   module=memory ;;
    *) echo "unknown comparison $name (cartpole, pong, replay, memory)" >&2; exit 2 ;;
  esac
  echo "=== $name: -m bench.peers.$module --cores $CORES"
  "$PY" -m "bench.peers.$module" --cores "$CORES"
done

"$PY" -m bench.peers.report ${REPORT:+--out "$REPORT"}
