#!/bin/bash
# Ape-X DPG's Figure 3 shape on the GPU machine (issue 33), one lease, two calls of about 5.5 minutes
# (run from the repository root by the device tool, with .whl carried: the wheels of bench/README.md
# plus mujoco==4.0.0 and mujoco-core==4.0.0, which gymnasium's MuJoCo tasks need; mujoco-studio and glfw
# only render, and are left out):
#   ACTORS=2,4 bash bench/device/dpg_scaling.sh     # then copy $OUT's results file into bench/results/
#   ACTORS=8,14 bash bench/device/dpg_scaling.sh    # (untracked files travel): it keeps the 2 and 4 rows
#   DPG_ENV (default HalfCheetah-v5), DPG_BUDGET_S (default 150), DPG_SEED (default 1)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src:$PWD PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc
python3 -c "import torch, ray, gymnasium, mujoco; gymnasium.make('${DPG_ENV:-HalfCheetah-v5}'); print(torch.__version__, ray.__version__, gymnasium.__version__, mujoco.__version__)" || exit 1
python3 -m bench.dpg_scaling --env ${DPG_ENV:-HalfCheetah-v5} --seed ${DPG_SEED:-1} --budget-s ${DPG_BUDGET_S:-150} \
    --actors ${ACTORS:-2,4,8,14} --run-root runs/bench-dpg-scaling
cp bench/results/dpg-scaling-* bench/figures/dpg-scaling-* $OUT/
tar czf $OUT/dpg-scaling-runs.tgz --exclude='checkpoints' --exclude='tb' runs/bench-dpg-scaling
ls -la $OUT
