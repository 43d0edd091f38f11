"""Fixtures the Ray test modules share, and the order of the learning runs."""

import pytest

from distrl.training import train


def pytest_collection_modifyitems(config, items):
    """In `make test-learning` (pytest-xdist, --dist load, one test at a time) the runs go longest
    first, by the seconds their `learning` mark gives (their time alone on 2 cores), so the two
    workers end together."""
    items.sort(key=lambda item: -seconds(item))  # stable: the rest keep their order


def seconds(item) -> float:
    mark = item.get_closest_marker("learning")
    return float(mark.kwargs.get("seconds", 0)) if mark else 0.0


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray for the module's tests (distrl's runs join it instead of starting their own)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=8, include_dashboard=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture
def train_with_hook(monkeypatch):
    """train() through the CLI's path with `hook(state)` passed to the runtime's driver on every tick,
    for fault injection: `train_with_hook(runtime_module, cfg, hook)`."""
    def run(runtime_module, cfg, hook):
        original = runtime_module.run
        monkeypatch.setattr(runtime_module, "run", lambda *args, **kwargs: original(*args, **{**kwargs, "hook": hook}))
        return train(cfg, live=False)
    return run
