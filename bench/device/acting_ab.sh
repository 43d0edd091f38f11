#!/bin/bash
# A short lease for issue 34: Ape-X on Pong with free-running actors (no replay ratio), 10 actors x 8 envs,
# their forward pass on the CPU (A) and on a 0.05 share of the GPU each (B): the acting and learner ceilings.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src:$PWD PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
S=${SEG_S:-75}
for v in cpu gpu; do
  extra=""; [ $v = gpu ] && extra="--set ray.actor_gpus=0.05 --set ray.learner_gpus=0.5"
  # the result (bench/results.py's schema, with the speed index measured first) and the figure go to $OUT/ab-$v
  timeout $((S + 55)) python3 -m bench.pong --budget-s $S --run-dir runs/ab-$v --out-root $OUT/ab-$v \
    --set learner.prefetch_threads=4 --set replay.samples_per_insert=0 $extra > $OUT/ab-$v.txt 2>&1
  tail -4 runs/ab-$v.log >> $OUT/ab-$v.txt
  cp runs/ab-$v/metrics.csv $OUT/ab-$v-metrics.csv; cp runs/ab-$v/gpu.csv $OUT/ab-$v-gpu.csv 2>/dev/null
  python3 -c "
import csv; r=list(csv.DictReader(open('runs/ab-$v/metrics.csv'))); r=[x for x in r if float(x['updates'])>0][2:]
f=lambda k: sum(float(x[k] or 0) for x in r)/max(1,len(r))
print('$v', len(r), 'rows: env frames/s', round(f('env_frames_per_s')), 'learner updates/s', round(f('learner_updates_per_s'),1))"
done
