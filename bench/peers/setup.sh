#!/usr/bin/env bash
# One interpreter for every contender of the peer benchmarks: bench/peers/.venv holds distrl
# (editable, from this checkout) beside stable-baselines3, RLlib and cpprb, all pinned, so each
# comparison runs the same torch, gymnasium, ale-py and numpy builds.
#
# Idempotent: skips when .venv/.installed-peers holds exactly the pins below (change a pin and it
# reinstalls into the same venv). PYTHON=python3.11 bash bench/peers/setup.sh picks the interpreter.
#
# DMC=1 bash bench/peers/setup.sh builds bench/peers/.venv-dmc instead, for the DeepMind Control races
# (python -m bench.peers.continuous --env dm_control/walker-walk-v0): dm_control 1.0.50 needs MuJoCo
# below 4.0, and the MuJoCo races run on 4.0, so the two cannot share one venv. Same torch, numpy, Ray
# and stable-baselines3; gymnasium 1.4.0 as the project's own venv (no RLlib here to pin it).
set -euo pipefail

# Pins. torch, ray, ale-py and numpy are those of the project's own .venv (pip freeze there);
# gymnasium is 1.2.2, not the project's 1.4.0, because ray[rllib]==2.60.0 pins gymnasium==1.2.2
# exactly; every contender, distrl included, runs on it here. stable-baselines3 and cpprb are the
# newest on PyPI, and both install beside the rest.
PINS=(
  "torch==2.13.0"              # first and alone: this pin resolves to the CPU wheel here; a bare
                               # `torch` pulled in by another package would fetch a multi-GB CUDA build
  "numpy==2.4.6"
  "gymnasium[mujoco]==1.2.2"   # ray[rllib]==2.60.0 requires exactly this; the mujoco extra for
                               # bench/peers/continuous.py
  "mujoco==4.0.0"              # the project's own .venv has the same
  "ale-py==0.12.1"
  "ray[rllib]==2.60.0"
  "stable-baselines3==2.9.2"
  "cpprb==11.0.0"
  "psutil==7.2.2"              # RSS for the memory comparison
  "minatar==1.0.15"            # MinAtar comparison. GPL-3.0: installed only in this benchmark venv;
                               # distrl itself keeps it an optional extra (distrl[minatar])
)

DMC_PINS=(
  "torch==2.13.0"
  "numpy==2.4.6"
  "gymnasium==1.4.0"
  "mujoco==3.17.0"             # dm_control 1.0.50 fails on 4.0 (the project's dmc extra holds it below)
  "dm-control==1.0.50"
  "shimmy[dm-control]==2.0.1"
  "ray==2.60.0"
  "stable-baselines3==2.9.2"
  "psutil==7.2.2"
)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
if [[ "${DMC:-0}" == "1" ]]; then
  VENV="$HERE/.venv-dmc"
  PINS=("${DMC_PINS[@]}")
fi
MARKER="$VENV/.installed-peers"
PYTHON="${PYTHON:-python3}"
WANT="$(printf '%s\n' "${PINS[@]}" "distrl -e $ROOT")"

if [[ -f "$MARKER" && "$(cat "$MARKER")" == "$WANT" ]]; then
  echo "$VENV is up to date ($MARKER)"
  exit 0
fi

[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check --quiet)
"${PIP[@]}" --upgrade pip
"${PIP[@]}" "${PINS[0]}"
# Everything else in one resolve, with torch held at the CPU build just installed.
"${PIP[@]}" "${PINS[@]}"
"${PIP[@]}" -e "$ROOT"
"$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
import torch
assert not torch.version.cuda, f"torch {torch.__version__} is a CUDA build; reinstall torch==2.13.0 first"
for name in ("distrl", "torch", "numpy", "gymnasium", "ale-py", "ray", "stable-baselines3", "cpprb", "minatar", "mujoco",
             "dm-control"):
    try:
        print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError:
        pass
EOF
printf '%s\n' "$WANT" > "$MARKER"
echo "$VENV ready"
