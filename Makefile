# Two entry points for a fresh machine: `make run` (install + a short Ape-X training) and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
# uv installs the rest: it fetches and unpacks in parallel, where pip took most of CI's time on a fresh
# machine (the test extras: Ray, MuJoCo, dm-control, MkDocs, ...); if it fails, pip installs instead. It
# compiles the bytecode as pip does: without it every Ray worker of the first test run compiled Ray's modules
# again (the quick tier took 6:39 instead of 4:41)
UV     := $(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(PY)
PYTHON ?= python3

.PHONY: run test test-learning test-all test-chaos bench clean

# torch==2.13.0 first, with pip: it is the CPU wheel on this machine's disk (pip's find-links); letting a
# resolver pick a bare `torch` pulls a multi-GB CUDA build. Installed, it satisfies distrl's torch pin.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip uv
	$(PIP) torch==2.13.0
	$(UV) -e . || $(PIP) -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(UV) -e ".[test]" || $(PIP) -e ".[test]"
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/distrl train apex --env CartPole-v1 --runtime inline --max-frames 60000 --seed 1 \
		--run-dir runs/quickstart --overwrite

# The quick tier: unit tests with hand-computed values, integration runs, the layout checks and one
# short learning run per architecture (tests/test_learning_smoke.py), two at a time with pytest-xdist.
# A module's tests stay on one worker (--dist loadfile): the Ray modules start one local Ray each.
test: $(VENV)/.installed-test
	$(VENV)/bin/pytest -m "not learning" -n 2 --dist loadfile

# The learning tier: the acceptance trainings, the chaos, signal and three-host cases and 35 s of
# bench/pong.py. The one-process runs go two at a time, longest first (each is single-threaded and
# deterministic; tests/conftest.py orders them); those marked `alone` (Ray, a subprocess, a wall-clock
# budget) go one at a time after them, so no fault case shares the 2 cores.
LEARNING := learning and not nondeterministic and not long
test-learning: $(VENV)/.installed-test
	$(VENV)/bin/pytest -m "$(LEARNING) and not alone" -n 2 --dist load --maxschedchunk 1
	$(VENV)/bin/pytest -m "$(LEARNING) and alone"

# Everything, the learning runs on ray whose outcome varies and the three longest chaos cases too.
test-all: $(VENV)/.installed-test
	$(VENV)/bin/pytest

# Every architecture's chaos run (about 25 min on 2 cores).
test-chaos: $(VENV)/.installed-test
	$(VENV)/bin/pytest tests/chaos

bench: $(VENV)/.installed
	$(PY) -m bench.replay

clean:
	rm -rf $(VENV) runs .pytest_cache
