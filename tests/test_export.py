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
    "r2d2": ("r2d2", "CartPole-v1", NO_UPDATES),
}

# What the exported files' process runs: no distrl, and only the runtime each format needs (ONNX first,
# so its file is shown to run before torch is ever imported).
RUNNER = """
import json, sys
import numpy as np
obs_file, recurrent = sys.argv[1], sys.argv[2] == "1"
obs = np.load(obs_file)
previous = np.load(obs_file.replace("obs.npy", "previous.npz"))  # the action and reward before each obs
for fmt, path, out in (a.split("=", 2) for a in sys.argv[3:]):
    if fmt == "torchscript":
        import torch
        policy = torch.jit.load(path)
        run = lambda *x: [t.numpy() for t in (lambda r: r if isinstance(r, tuple) else (r,))(policy(*map(torch.as_tensor, x)))]
    else:
        import onnxruntime
        assert "torch" not in sys.modules
        session = onnxruntime.InferenceSession(path)
        names = [i.name for i in session.get_inputs()]
        run = lambda *x: session.run(None, dict(zip(names, x)))
    if recurrent:
        meta = json.load(open(path + ".json"))
        h = np.zeros([1, *meta["state_shape"]], np.float32)
        c = h.copy()
        actions = []
        for o, pa, pr in zip(obs, previous["action"], previous["reward"]):
            if len(meta["inputs"]) == 5:  # R2D2's: the previous action and reward go in too
                a, h, c = run(o[None], pa[None], pr[None], h, c)
            else:
                a, h, c = run(o[None], h, c)
            actions.append(a[0])
        actions = np.array(actions)
    else:
        actions = run(obs)[0]
    np.save(out, actions)
assert "distrl" not in sys.modules
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


def observations(env_id: str, n: int = 100) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """n observations of the run's env under a random policy, as the env returns them, and the action and
    reward before each (zeros before the first: R2D2's network takes them)."""
    env = make_env(env_id, "eval", seed=5)
    env.action_space.seed(5)
    obs, _ = env.reset(seed=5)
    out, actions, rewards = [], [0], [0.0]
    while len(out) < n:
        out.append(obs)
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        actions.append(int(action) if np.ndim(action) == 0 else 0)
        rewards.append(float(reward))
        if terminated or truncated:
            obs, _ = env.reset()
    return np.stack(out), {"action": np.array(actions[:n], np.int64), "reward": np.array(rewards[:n], np.float32)}


def formats() -> list[str]:
    """ONNX where its exporter and runtime are installed (the onnx extra, the test extra's onnxruntime)."""
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError:
        return ["torchscript"]
    return ["onnx", "torchscript"]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_an_exported_policy_runs_without_distrl_and_acts_as_load_policy(runs, tmp_path_factory, tmp_path, family):
    run_dir = trained(runs, tmp_path_factory, family)
    architecture, env_id, _ = FAMILIES[family]
    obs, previous = observations(env_id)
    np.save(tmp_path / "obs.npy", obs)
    np.savez(tmp_path / "previous.npz", **previous)
    jobs = {}
    for fmt in formats():
        written = distrl.export(run_dir, format=fmt, out=tmp_path / f"policy.{fmt}")
        meta = json.loads((tmp_path / f"policy.{fmt}.json").read_text())
        assert meta["env"] == env_id and meta["format"] == fmt and meta["architecture"] == architecture
        assert meta["recurrent"] is (family in ("lstm-a3c", "r2d2"))
        assert meta["observation"]["shape"] == list(obs.shape[1:]) and meta["observation"]["dtype"] == str(obs.dtype)
        jobs[fmt] = (written["file"], tmp_path / f"actions-{fmt}.npy")
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(tmp_path / "obs.npy"), "1" if meta["recurrent"] else "0",
                           *(f"{fmt}={path}={out}" for fmt, (path, out) in jobs.items())],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]

    policy = distrl.load_policy(run_dir)
    policy.reset()
    expected = []
    for o, a, r in zip(obs, previous["action"], previous["reward"]):
        policy.observe(a, r)  # what distrl's evaluation tells a recurrent Q policy; the other kinds ignore it
        expected.append(policy.act(o))
    expected = np.array(expected)
    for fmt, (_, out) in jobs.items():
        exported = np.load(out)
        if meta["action"]["type"] == "discrete":
            assert exported.shape == (100,) and exported.tolist() == expected.tolist(), fmt
        else:
            assert exported.shape == expected.shape == (100, *meta["action"]["shape"]), fmt
            np.testing.assert_allclose(exported, expected, rtol=1e-5, atol=1e-5, err_msg=fmt)


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
