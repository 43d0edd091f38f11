#!/bin/bash
# One lease of the GPU machine for issue 34 (run from the repository root by the device tool, with .whl
# carried): install the carried wheels, the learner-path bench on the GPU, then bench/pong.py for the
# rest of the budget with py-spy on the learner and one shard mid-run; everything worth keeping in $OUT.
#   PONG_BUDGET_S (default 470), PONG_SETS (more arguments: --tag h200 to name the files by the GPU, --set K=V,
#   --arch a3c|ba3c|gorila|r2d2, or --game ALE/Breakout-v5: the files kept are every game's),
#   PROFILE_AT_S (default 200), LEARNER_PATH=0 STEP_BENCH=0 to skip the learner benches (then PONG_BUDGET_S=500 fits
#   a 600 s call: issue 34's 10 minutes for A3C, BA3C or Gorila); bench/pong.py's plan
#   sets the actors, shards, GPU shares, vector env and sample threads from the machine
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src:$PWD PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc; free -g | head -2
python3 -c "import torch, ray, gymnasium, ale_py, lz4; print(torch.__version__, ray.__version__, gymnasium.__version__, ale_py.__version__, lz4.__version__)" || exit 1
timeout 60 python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/test_staging.py 2>&1 | tail -3
# the DQN learner's step alone on the GPU at batch 512 (about 40 s): its ceiling beside the run's rate, and
# whether staging every field (not only the frames) lifts it; STEP_BENCH=0 skips it
[ "${STEP_BENCH:-1}" = 1 ] && timeout 120 python3 -m bench.dqn_learner_step --device cuda --shapes pong-b512 \
    --variants staged,bf16,bf16+staged --seconds 3 --rounds 2 --out $OUT/dqn-learner-step-gpu.jsonl
[ "${LEARNER_PATH:-1}" = 1 ] && timeout 120 python3 -m bench.learner_path --seconds 8 --transitions 4000 --shards 4 --codecs zlib,lz4,shared-lz4,shared-raw --out $OUT/learner-path-gpu.jsonl 2>&1 | grep -v -E "A.L.E|Stella"
( sleep ${PROFILE_AT_S:-200}
  for role in LearnerWorker ReplayShard; do
    pid=$(ps -eo pid,args | grep -E "ray::${role}" | grep -v grep | head -1 | awk '{print $1}')
    [ -n "$pid" ] && py-spy record --pid $pid --duration 40 --rate 40 --nonblocking --threads --format raw -o $OUT/pyspy-$role.txt >/dev/null 2>&1 &
  done; wait ) &
timeout $(( ${PONG_BUDGET_S:-470} + 60 )) python3 -m bench.pong --budget-s ${PONG_BUDGET_S:-470} ${PONG_SETS:-}
tail -30 runs/bench-atari-*-seed1.log
tar czf $OUT/pong-run.tgz --exclude='*.pt' --exclude='checkpoint*' runs/bench-atari-*-seed1/*.csv runs/bench-atari-*-seed1/*.json runs/bench-atari-*-seed1.log bench/results/atari-*-gpu* bench/figures/atari-*-gpu* 2>/dev/null
ls -la $OUT
