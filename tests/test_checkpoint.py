"""Checkpoints: atomic, weights_only, refused when from another architecture, shape, or corrupt."""

import pytest
import torch

from distrl.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint, param_shapes, save_checkpoint
from distrl.errors import CheckpointError
from distrl.nets import make_q_network


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


def test_a_format_1_checkpoint_loads_in_the_roles_shape(tmp_path):
    """Files written before the one format (a top-level "learner" with "torch_rng", or "ps" as a list of
    shards or A3C's single shared store) load as roles, unchanged on disk."""
    net = make_q_network((4,), 2, hidden=(8,))
    shapes = param_shapes(net.state_dict())
    rng = torch.get_rng_state()
    old = {"meta": {"architecture": "apex", "shapes": shapes, "format": 1, "step": 7},
           "learner": {"online": net.state_dict(), "updates": 7}, "torch_rng": rng,
           "counters": {"frames": 300}, "returns": [9.0]}
    (tmp_path / "checkpoints").mkdir()
    path = tmp_path / "checkpoints" / "ckpt-0000000007.pt"
    torch.save(old, path)
    before = path.read_bytes()
    data = load_checkpoint(path, "apex", shapes)
    assert data["roles"]["learner"][0]["updates"] == 7 and torch.equal(data["rng"], rng)
    assert data["counters"] == {"frames": 300} and data["returns"] == [9.0] and data["meta"]["step"] == 7
    assert path.read_bytes() == before
    for ps, shards in (([{"version": 1}, {"version": 2}], 2), ({"version": 5}, 1)):  # Gorila/BA3C; A3C shared
        torch.save({"meta": {"architecture": "a3c", "shapes": shapes, "format": 1, "step": 1}, "ps": ps,
                    "counters": {}, "returns": []}, path)
        data = load_checkpoint(path, "a3c", shapes)
        assert len(data["roles"]["ps"]) == shards and "rng" not in data


def test_unknown_format_is_refused(tmp_path):
    net = make_q_network((4,), 2, hidden=(8,))
    path = _save(tmp_path, 1, net)
    data = torch.load(path, weights_only=True)
    data["meta"]["format"] = 99
    torch.save(data, path)
    with pytest.raises(CheckpointError, match="not a distrl checkpoint"):
        load_checkpoint(path, "apex", param_shapes(net.state_dict()))


FIVE = [("apex", "CartPole-v1", {"replay.min_size": 64}, {"learner": 1}),
        ("apex-dpg", "Pendulum-v1", {"replay.min_size": 64}, {"learner": 1}),
        ("gorila", "CartPole-v1", {"replay.min_size": 32, "ps.shards": 2}, {"ps": 2}),
        ("a3c", "CartPole-v1", {}, {"ps": 1}),
        ("ba3c", "CartPole-v1", {"ps.shards": 3}, {"ps": 3})]


@pytest.mark.parametrize("arch,env,overrides,roles", FIVE, ids=[f[0] for f in FIVE])
def test_every_architecture_writes_the_one_format(tmp_path, arch, env, overrides, roles):
    from distrl import config as C
    from distrl.architectures import make_architecture
    from distrl.training import train

    cfg = C.build_config(arch, env, overrides={"runtime": "inline", "max_frames": 400, "seed": 1,
                                               "eval_episodes": 0, "eval_every": 0,
                                               "run_dir": str(tmp_path / "run"), **overrides})
    train(cfg, live=False)
    path = latest_checkpoint(tmp_path / "run")
    raw = torch.load(path, weights_only=True)
    assert set(raw) - {"rng"} == {"meta", "roles", "counters", "returns"} and raw["meta"]["format"] == 2
    assert {k: len(v) for k, v in raw["roles"].items()} == roles
    assert raw["counters"]["frames"] >= 400 and ("rng" in raw) == (arch in ("apex", "apex-dpg"))
    restored = make_architecture(cfg).restore(tmp_path / "run")  # every wiring reads it back the same way
    assert restored["path"] == str(path) and restored["counters"] == raw["counters"]
