# Two entry points for a fresh machine: `make run` (install + a short Ape-X training) and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
PYTHON ?= python3

.PHONY: run test test-fast test-all test-chaos bench clean

# torch==2.13.0 first: it is the CPU wheel; letting pip resolve a bare `torch` pulls a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) torch==2.13.0
	$(PIP) -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) -e ".[test]"
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/distrl train apex --env CartPole-v1 --runtime inline --max-frames 60000 --seed 1 \
		--run-dir runs/quickstart --overwrite

# Everything but the learning runs on ray, whose outcome varies run to run, and the three longest
# chaos cases (see test-all, test-chaos).
test: $(VENV)/.installed-test
	$(VENV)/bin/pytest -m "not nondeterministic and not long"

test-all: $(VENV)/.installed-test
	$(VENV)/bin/pytest

test-fast: $(VENV)/.installed-test
	$(VENV)/bin/pytest -m "not slow and not nondeterministic"

# Every architecture's chaos run (about 25 min on 2 cores).
test-chaos: $(VENV)/.installed-test
	$(VENV)/bin/pytest tests/chaos

bench: $(VENV)/.installed
	$(PY) bench/replay.py

clean:
	rm -rf $(VENV) runs .pytest_cache
