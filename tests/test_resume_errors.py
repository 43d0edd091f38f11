"""--resume against bad checkpoints, end to end through the CLI: exit 2, one line naming the problem
and the fix, and every file of the run left byte for byte as it was."""

import hashlib
import pickle
import shutil

import pytest

from distrl.cli import main

TINY = ["--runtime", "inline", "--max-frames", "600", "--seed", "1", "--quiet", "--set", "replay.min_size=100",
        "--set", "checkpoint_every=20", "--set", "eval_episodes=0"]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One short real Ape-X run with three checkpoints; each test works on a copy."""
    run = tmp_path_factory.mktemp("runs") / "apex"
    assert main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(run), *TINY]) == 0
    assert len(list((run / "checkpoints").glob("ckpt-*.pt"))) == 3
    return run


def _fingerprint(run):
    return {p.relative_to(run): hashlib.sha256(p.read_bytes()).hexdigest() for p in run.rglob("*") if p.is_file()}


def _resume(capsys, architecture, run, *extra):
    before = _fingerprint(run)
    code = main(["train", architecture, "--resume", str(run), "--quiet", *extra])
    captured = capsys.readouterr()
    err = [line for line in captured.err.strip().splitlines() if line]
    assert code == 2 and len(err) == 1 and "Traceback" not in captured.err, captured
    assert _fingerprint(run) == before  # nothing deleted, moved or rewritten
    return err[0]


def _damage(newest, how):
    if how == "truncated":
        newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    elif how == "not a checkpoint":
        newest.write_bytes(b"these are not the weights you are looking for")
    elif how == "pickled object":  # weights_only=True refuses to build arbitrary objects
        newest.write_bytes(pickle.dumps(ValueError("boom")))


@pytest.mark.parametrize("how", ["truncated", "not a checkpoint", "pickled object"])
def test_damaged_newest_checkpoint_names_the_file_and_the_way_out(capsys, tmp_path, finished_run, how):
    run = shutil.copytree(finished_run, tmp_path / "run")
    *older, newest = sorted((run / "checkpoints").glob("ckpt-*.pt"))
    _damage(newest, how)
    line = _resume(capsys, "apex", run)
    assert f"{newest.name} is corrupt or not a distrl checkpoint" in line
    assert f"move it aside to resume from {older[-1].name}" in line


def test_checkpoint_from_another_architecture(capsys, tmp_path, finished_run):
    # A Gorila run directory whose checkpoints folder holds Ape-X's files (copied by hand).
    gorila = tmp_path / "gorila"
    assert main(["train", "gorila", "--env", "CartPole-v1", "--run-dir", str(gorila), "--runtime", "inline",
                 "--max-frames", "300", "--quiet", "--set", "replay.min_size=50", "--set", "eval_episodes=0"]) == 0
    shutil.rmtree(gorila / "checkpoints")
    shutil.copytree(finished_run / "checkpoints", gorila / "checkpoints")
    line = _resume(capsys, "gorila", gorila)
    assert "is from architecture 'apex', not 'gorila'" in line and "distrl train apex" in line


def test_checkpoint_of_another_network_shape(capsys, tmp_path, finished_run):
    run = shutil.copytree(finished_run, tmp_path / "run")
    line = _resume(capsys, "apex", run, "--set", "net.hidden=32")
    assert "holds another network shape" in line and "resume with the config it was made with" in line


def test_resume_of_a_run_without_checkpoints(capsys, tmp_path, finished_run):
    run = shutil.copytree(finished_run, tmp_path / "run")
    shutil.rmtree(run / "checkpoints")
    line = _resume(capsys, "apex", run)
    assert "no checkpoint in" in line and "nothing to resume" in line


def test_resume_with_another_architecture_named(capsys, tmp_path, finished_run):
    run = shutil.copytree(finished_run, tmp_path / "run")
    line = _resume(capsys, "gorila", run)
    assert "holds an 'apex' run, not 'gorila'" in line and "distrl train apex --resume" in line


def test_resume_says_what_it_found(capsys, tmp_path, finished_run):
    run = shutil.copytree(finished_run, tmp_path / "run")
    newest = sorted((run / "checkpoints").glob("ckpt-*.pt"))[-1]
    assert main(["train", "apex", "--resume", str(run), "--max-frames", "800", "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"resuming {run} from {newest.name} (")
    assert "2 older checkpoint(s) kept" in first and "replay: not saved (replay.checkpoint=true keeps it)" in first


def test_chaos_needs_the_ray_runtime(capsys, tmp_path):
    code = main(["train", "apex", "--env", "CartPole-v1", "--runtime", "inline", "--chaos", "5",
                 "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--chaos 5.0 kills Ray worker processes" in err
    assert not (tmp_path / "run").exists()


def test_ctrl_c_checkpoints_and_resume_continues(capsys, tmp_path, monkeypatch):
    """An interrupted inline run writes a checkpoint where it stopped, exits 130 and says how to go on."""
    from distrl.components.monitor import Monitor
    calls = {"n": 0}
    original = Monitor.log

    def log(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Monitor, "log", log)
    run = tmp_path / "run"
    code = main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(run), *TINY[:-2], "--set", "log_every_s=0.001",
                 "--max-frames", "100000"])
    assert code == 130 and "continue with --resume" in capsys.readouterr().err
    newest = sorted((run / "checkpoints").glob("ckpt-*.pt"))[-1]  # written at the interruption
    monkeypatch.setattr(Monitor, "log", original)
    assert main(["train", "apex", "--resume", str(run), "--max-frames", "900", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith(f"resuming {run} from {newest.name}")


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path):
    """kill, Slurm and Kubernetes stop with SIGTERM, and a script's `distrl train ... &` starts with SIGINT
    ignored: SIGTERM must save where the run stopped and exit 130, not die without a checkpoint."""
    import os
    import signal
    import subprocess
    import sys
    import time
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "distrl.cli", "train", "apex", "--env", "CartPole-v1",
                             "--run-dir", str(run), *TINY[:-2], "--set", "checkpoint_every=100000",
                             "--max-frames", "10000000"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (run / "metrics.csv").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "continue with --resume" in err
    assert list((run / "checkpoints").glob("ckpt-*.pt"))  # none was due: this one is the interruption's
