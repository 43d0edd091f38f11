"""`distrl export`: each network family's greedy policy as TorchScript and ONNX, run in a process that never
imports distrl (torch alone; onnxruntime alone), takes the same actions as `distrl.load_policy` on 100
observations of the run's env."""

import json
import subprocess
import sys

import numpy as np
import pytest

import distrl
from distrl.cli import main
from distrl.envs import make_env

# Each family: architecture, env, overrides. Its run is a few hundred frames of acting that end with a
# checkpoint: the networks as initialised (from the run's seed) are what the files must reproduce.
NO_UPDATES = {"replay.min_size": 100_000}
FAMILIES = {
    "mlp": ("apex", "CartPole-v1", NO_UPDATES),
    "dpg-actor": ("apex-dpg", "Pendulum-v1", NO_UPDATES),
    "lstm-a3c": ("a3c", "CartPole-v1", {"net.lstm": True}),
    "gaussian-a3c": ("a3c", "Pendulum-v1", {}),
    "minatar": ("apex", "MinAtar/Breakout-v1", NO_UPDATES),
    "atari-cnn": ("apex", "ALE/Pong-v5", NO_UPDATES),
}

# What the exported file's process runs: no distrl, only the runtime the format needs.
RUNNER = """
import json, sys
import numpy as np
fmt, path, obs_file, recurrent, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
obs = np.load(obs_file)
if fmt == "torchscript":
    import torch
    policy = torch.jit.load(path)
    run = lambda *x: [t.numpy() for t in (lambda r: r if isinstance(r, tuple) else (r,))(policy(*map(torch.as_tensor, x)))]
else:
    import onnxruntime
    session = onnxruntime.InferenceSession(path)
    names = [i.name for i in session.get_inputs()]
    run = lambda *x: session.run(None, dict(zip(names, x)))
if recurrent:
    meta = json.load(open(path + ".json"))
    h = np.zeros([1, *meta["state_shape"]], np.float32)
    c = h.copy()
    actions = []
    for o in obs:
        a, h, c = run(o[None], h, c)
        actions.append(a[0])
    actions = np.array(actions)
else:
    actions = run(obs)[0]
assert "distrl" not in sys.modules
np.save(out, actions)
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {}


def trained(runs, tmp_path_factory, family):
    if family not in runs:
        if family == "minatar":
            pytest.importorskip("minatar")
        architecture, env, overrides = FAMILIES[family]
        run_dir = tmp_path_factory.mktemp(family) / "run"
        distrl.train(architecture, env, max_frames=200, actors=1, seed=2, run_dir=run_dir,
                     overrides={"eval_episodes": 0, **overrides})
        runs[family] = run_dir
    return runs[family]


def observations(env_id: str, n: int = 100) -> np.ndarray:
    """n observations of the run's env under a random policy, as the env returns them."""
    env = make_env(env_id, "eval", seed=5)
    env.action_space.seed(5)
    obs, _ = env.reset(seed=5)
    out = []
    while len(out) < n:
        out.append(obs)
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    return np.stack(out)


@pytest.mark.parametrize("fmt", ["torchscript", "onnx"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_an_exported_policy_runs_without_distrl_and_acts_as_load_policy(runs, tmp_path_factory, tmp_path, family, fmt):
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("onnxscript")
    run_dir = trained(runs, tmp_path_factory, family)
    architecture, env_id, _ = FAMILIES[family]
    written = distrl.export(run_dir, format=fmt, out=tmp_path / f"policy.{fmt}")
    meta = json.loads((tmp_path / f"policy.{fmt}.json").read_text())
    assert meta["env"] == env_id and meta["format"] == fmt and meta["architecture"] == architecture
    assert meta["recurrent"] is (family == "lstm-a3c")
    obs = observations(env_id)
    assert meta["observation"]["shape"] == list(obs.shape[1:]) and meta["observation"]["dtype"] == str(obs.dtype)
    np.save(tmp_path / "obs.npy", obs)
    proc = subprocess.run([sys.executable, "-c", RUNNER, fmt, written["file"], str(tmp_path / "obs.npy"),
                           "1" if meta["recurrent"] else "0", str(tmp_path / "actions.npy")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    exported = np.load(tmp_path / "actions.npy")

    policy = distrl.load_policy(run_dir)
    policy.reset()
    expected = np.array([policy.act(o) for o in obs])
    if meta["action"]["type"] == "discrete":
        assert exported.shape == (100,) and exported.tolist() == expected.tolist()
        assert len(set(expected.tolist())) >= 1
    else:
        assert exported.shape == expected.shape == (100, *meta["action"]["shape"])
        np.testing.assert_allclose(exported, expected, rtol=1e-5, atol=1e-5)


def test_the_sidecar_states_the_atari_preprocessing(runs, tmp_path_factory, tmp_path):
    meta_path = distrl.export(trained(runs, tmp_path_factory, "atari-cnn"), out=tmp_path / "pong.pt")["about"]
    meta = json.loads(open(meta_path).read())
    steps = {w["name"]: w["kwargs"] for w in meta["observation"]["preprocessing"]}
    assert steps["gymnasium.make"]["id"] == "ALE/Pong-v5"
    assert steps["AtariPreprocessing"]["frame_skip"] == 4 and steps["AtariPreprocessing"]["screen_size"] == 84
    assert steps["FrameStackObservation"]["stack_size"] == 4
    assert meta["observation"] == {**meta["observation"], "shape": [4, 84, 84], "dtype": "uint8"}
    assert meta["action"] == {"type": "discrete", "n": 6, "dtype": "int64"}


def test_export_errors_are_one_line(capsys, tmp_path, runs, tmp_path_factory):
    assert main(["export", str(tmp_path)]) == 2
    assert "no distrl run there" in capsys.readouterr().err
    run_dir = trained(runs, tmp_path_factory, "mlp")
    assert main(["export", str(run_dir), "--format", "tflite"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "distrl: error: unknown export format 'tflite': choose one of torchscript, onnx", err
    assert main(["export", str(run_dir), "--out", str(tmp_path / "p.pt")]) == 0
    assert (tmp_path / "p.pt").exists() and (tmp_path / "p.pt.json").exists()
