"""Fixtures the Ray test modules share, and where pytest-xdist runs them."""

import pytest

from distrl.training import train

RAY = pytest.mark.xdist_group("ray")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`make test`, --dist loadgroup) the tests that run Ray go to one worker, one
    after another, beside the other worker's one-process tests: a Ray run already keeps 2 cores busy,
    and with two at once each Ray module took 2-3x as long."""
    for item in items:
        if "local_ray" in item.fixturenames:
            item.add_marker(RAY)


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
