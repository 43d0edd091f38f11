import json

from distrl.cli import main


def fake_run(path, seed, scale):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"architecture": "apex", "env": "CartPole-v1",
                                                  "preset": "apex-cartpole", "runtime": "inline", "seed": seed}))
    rows = ["wall_s,frames,updates,episode_return_mean,env_frames_per_s"]
    rows += [f"{i},{i * 1000},{i * 250},{scale * i},{1000 + i}" for i in range(1, 11)]
    (path / "metrics.csv").write_text("\n".join(rows) + "\n")


def test_plot_writes_a_png_for_seeds_of_one_config(tmp_path, capsys):
    fake_run(tmp_path / "s1", 1, 10.0)
    fake_run(tmp_path / "s2", 2, 20.0)
    out = tmp_path / "curves.png"
    assert main(["plot", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(out), "--x", "updates"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_plot_refuses_bad_input(tmp_path, capsys):
    fake_run(tmp_path / "s1", 1, 1.0)
    assert main(["plot", str(tmp_path / "s1"), "--x", "episodes"]) == 2
    assert "invalid value 'episodes' for --x" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "has no metrics.csv" in capsys.readouterr().err
