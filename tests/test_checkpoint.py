"""Checkpoints: atomic, weights_only, refused when from another architecture, shape, or corrupt."""

import pytest
import torch

from distrl.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint, param_shapes, save_checkpoint
from distrl.errors import CheckpointError
from distrl.nets import make_q_network
from tests.cases import cases, names


def _save(tmp_path, step, net, arch="apex"):
    return save_checkpoint(tmp_path, step, {"learner": [{"online": net.state_dict()}]},
                           {"architecture": arch, "shapes": param_shapes(net.state_dict())},
                           counters={"frames": 40 * step}, returns=[1.0, 2.5])


def test_round_trip_keeps_newest_three(tmp_path):
    net = make_q_network((4,), 2, hidden=(8,))
    for step in (1, 2, 3, 4):
        _save(tmp_path, step, net)
    assert [p.name for p in list_checkpoints(tmp_path)] == [f"ckpt-{s:010d}.pt" for s in (2, 3, 4)]
    assert not list((tmp_path / "checkpoints").glob("*.tmp"))
    data = load_checkpoint(latest_checkpoint(tmp_path), "apex", param_shapes(net.state_dict()))
    for k, v in net.state_dict().items():
        assert torch.equal(data["roles"]["learner"][0]["online"][k], v)
    assert data["meta"]["step"] == 4 and data["meta"]["format"] == 2
    assert data["counters"] == {"frames": 160} and data["returns"] == [1.0, 2.5] and "rng" not in data


def test_other_architecture_is_refused(tmp_path):
    net = make_q_network((4,), 2, hidden=(8,))
    path = _save(tmp_path, 1, net, arch="gorila")
    with pytest.raises(CheckpointError, match="from architecture 'gorila', not 'apex'"):
        load_checkpoint(path, "apex", param_shapes(net.state_dict()))


def test_other_network_shape_is_refused(tmp_path):
    path = _save(tmp_path, 1, make_q_network((4,), 2, hidden=(8,)))
    other = make_q_network((4,), 2, hidden=(16,))
    with pytest.raises(CheckpointError, match="another network shape"):
        load_checkpoint(path, "apex", param_shapes(other.state_dict()))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "pickle"])
def test_corrupt_checkpoint_is_refused_and_others_untouched(tmp_path, damage):
    net = make_q_network((4,), 2, hidden=(8,))
    good = _save(tmp_path, 1, net)
    bad = _save(tmp_path, 2, net)
    if damage == "truncate":
        bad.write_bytes(bad.read_bytes()[:100])
    elif damage == "garbage":
        bad.write_bytes(b"not a checkpoint at all")
    else:  # arbitrary pickled objects are not loaded by weights_only
        import pickle
        bad.write_bytes(pickle.dumps(object()))
    before = {p: p.read_bytes() for p in (good, bad)}
    with pytest.raises(CheckpointError, match=f"{bad.name} is corrupt.*resume from {good.name}"):
        load_checkpoint(bad, "apex", param_shapes(net.state_dict()))
    assert {p: p.read_bytes() for p in (good, bad)} == before


def test_no_checkpoint_to_resume(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        latest_checkpoint(tmp_path)


def test_unknown_format_is_refused(tmp_path):
    net = make_q_network((4,), 2, hidden=(8,))
    path = _save(tmp_path, 1, net)
    data = torch.load(path, weights_only=True)
    for old in (1, 99):  # format 1 (a top-level "learner" or "ps") was never released
        data["meta"]["format"] = old
        torch.save(data, path)
        with pytest.raises(CheckpointError, match="not a distrl checkpoint of format 2"):
            load_checkpoint(path, "apex", param_shapes(net.state_dict()))


@pytest.mark.parametrize("arch", names())
def test_every_architecture_writes_the_one_format(tmp_path, arch):
    from distrl import config as C
    from distrl.architectures import make_architecture
    from distrl.training import train

    env, overrides, roles = cases(arch).checkpoint
    cfg = C.build_config(arch, env, overrides={"runtime": "inline", "max_frames": 400, "seed": 1,
                                               "eval_episodes": 0, "eval_every": 0,
                                               "run_dir": str(tmp_path / "run"), **overrides})
    train(cfg, live=False)
    path = latest_checkpoint(tmp_path / "run")
    raw = torch.load(path, weights_only=True)
    assert set(raw) - {"rng"} == {"meta", "roles", "counters", "returns"} and raw["meta"]["format"] == 2
    assert {k: len(v) for k, v in raw["roles"].items()} == roles
    assert raw["counters"]["frames"] >= 400 and ("rng" in raw) == cases(arch).saves_rng
    # every architecture reads it back the same way
    restored = make_architecture(cfg).topology().checkpoints.restore(tmp_path / "run")
    assert restored["path"] == str(path) and restored["counters"] == raw["counters"]
