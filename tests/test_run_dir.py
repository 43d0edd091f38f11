"""A run directory is the user's data: distrl never appends to, or replaces, a file it did not write.
In a directory that is not a distrl run, any file distrl would write refuses the run (exit 2, one line
naming the file and the choices) before anything is written; other files there are left alone."""

import json

import pytest

from distrl.cli import main
from distrl.config import build_config
from distrl.errors import ConfigError
from distrl.training import RUN_FILES, is_run, train

TINY = ["--runtime", "inline", "--max-frames", "300", "--seed", "1", "--quiet", "--set", "replay.min_size=50",
        "--set", "eval_episodes=0"]


def _train(capsys, run, *extra):
    code = main(["train", "apex", "--env", "CartPole-v1", "--run-dir", str(run), *TINY, *extra])
    captured = capsys.readouterr()
    return code, [line for line in captured.err.strip().splitlines() if line], captured


def _refused(capsys, run, *extra):
    code, err, captured = _train(capsys, run, *extra)
    assert code == 2 and len(err) == 1 and "Traceback" not in captured.err, captured
    return err[0]


def test_a_users_metrics_csv_refuses_the_run(capsys, tmp_path):
    run = tmp_path / "mine"
    run.mkdir()
    data = b"step,loss\n1,0.5\n"
    (run / "metrics.csv").write_bytes(data)
    line = _refused(capsys, run)
    assert str(run / "metrics.csv") in line and "not a distrl run" in line
    assert "--run-dir" in line and "move" in line
    assert (run / "metrics.csv").read_bytes() == data
    assert sorted(p.name for p in run.iterdir()) == ["metrics.csv"]  # no config.json, no tb/, nothing


@pytest.mark.parametrize("overwrite", [False, True], ids=["plain", "overwrite"])
def test_a_foreign_config_json_refuses_even_with_overwrite(capsys, tmp_path, overwrite):
    run = tmp_path / "mine"
    run.mkdir()
    data = b'{"model": "resnet50", "lr": 0.1}\n'
    (run / "config.json").write_bytes(data)
    (run / "metrics.csv").write_text("mine\n")
    line = _refused(capsys, run, *(["--overwrite"] if overwrite else []))
    assert str(run / "config.json") in line and "--overwrite" in line
    assert (run / "config.json").read_bytes() == data
    assert (run / "metrics.csv").read_text() == "mine\n"
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "metrics.csv"]


@pytest.mark.parametrize("text", ["not json at all", "[1, 2]", '{"architecture": "apex"}',
                                  '{"architecture": "resnet", "env": "CartPole-v1"}'])
def test_what_counts_as_a_distrl_run(tmp_path, text):
    (tmp_path / "config.json").write_text(text)
    assert not is_run(tmp_path)
    (tmp_path / "config.json").write_text('{"architecture": "apex", "env": "CartPole-v1"}')
    assert is_run(tmp_path)


@pytest.mark.parametrize("name", [n for n in RUN_FILES if n != "config.json"])
def test_every_name_distrl_writes_is_guarded_from_python(tmp_path, name):
    run = tmp_path / "mine"
    (run / name).mkdir(parents=True)  # a folder of the user's under any of distrl's names
    cfg = build_config("apex", "CartPole-v1", None, {"run_dir": str(run), "runtime": "inline", "max_frames": 300})
    with pytest.raises(ConfigError, match="not a distrl run"):
        train(cfg, overwrite=True, live=False)
    assert [p.name for p in run.iterdir()] == [name] and not any((run / name).iterdir())


def test_a_directory_with_only_notes_trains_and_keeps_them(capsys, tmp_path):
    run = tmp_path / "mine"
    run.mkdir()
    (run / "notes.txt").write_text("my notes\n")
    code, err, captured = _train(capsys, run)
    assert code == 0, captured
    assert (run / "notes.txt").read_text() == "my notes\n"
    assert is_run(run) and (run / "metrics.csv").is_file() and (run / "summary.json").is_file()


def test_overwrite_replaces_an_earlier_run_and_keeps_the_users_notes(capsys, tmp_path):
    run = tmp_path / "run"
    code, _, captured = _train(capsys, run, "--seed", "1")
    assert code == 0, captured
    (run / "notes.txt").write_text("seed 1 looked odd\n")
    line = _refused(capsys, run, "--seed", "2")  # a real run without --overwrite: today's refusal
    assert "already holds a run" in line
    code, _, captured = _train(capsys, run, "--seed", "2", "--overwrite")
    assert code == 0, captured
    assert json.loads((run / "config.json").read_text())["seed"] == 2
    assert json.loads((run / "summary.json").read_text())["seed"] == 2
    assert (run / "notes.txt").read_text() == "seed 1 looked odd\n"


def test_resume_of_a_foreign_directory_is_refused(capsys, tmp_path):
    (tmp_path / "config.json").write_text('{"model": "resnet50"}')
    code = main(["train", "apex", "--resume", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "no distrl run there" in err
    assert (tmp_path / "config.json").read_text() == '{"model": "resnet50"}'
