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


def test_plot_comparison_draws_each_contender_against_each_axis(tmp_path):
    """bench/minatar.py's figure: one panel per x axis, one curve per contender (distrl's or a peer's)."""
    import matplotlib
    import numpy as np

    from distrl.plotting import plot_comparison

    drawn = []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    original = plt.Figure.savefig
    plt.Figure.savefig = lambda fig, *a, **k: (drawn.append(fig), original(fig, *a, **k))[1]
    try:
        curve = {"wall_s": np.arange(1.0, 11.0), "frames": np.arange(1.0, 11.0) * 500,
                 "episode_return_mean": np.array([np.nan, *range(9)], dtype=float)}
        out = plot_comparison({"distrl-apex": [curve], "sb3-dqn": [curve]}, tmp_path / "race.png", title="t")
    finally:
        plt.Figure.savefig = original
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axes = drawn[0].axes
    assert [ax.get_xlabel() for ax in axes] == ["wall_s", "frames"]
    assert all([line.get_label() for line in ax.get_lines()] == ["distrl-apex (1 run)", "sb3-dqn (1 run)"]
               for ax in axes)
    assert axes[1].get_lines()[0].get_xdata().max() == 5000  # the frames axis spans the contender's frames


def test_runs_of_different_envs_get_panels_of_their_own_and_no_numpy_warning(tmp_path, recwarn):
    """Returns of CartPole and Pendulum share no scale; a run whose first rows have no episode yet (NaN)
    draws from its first return on, without numpy's "mean of empty slice"."""
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    fake_run(tmp_path / "cartpole", 1, 10.0)
    pendulum = tmp_path / "pendulum"
    pendulum.mkdir()
    (pendulum / "config.json").write_text(json.dumps({"architecture": "apex-dpg", "env": "Pendulum-v1",
                                                      "preset": "apex-dpg-pendulum", "runtime": "inline"}))
    rows = ["wall_s,frames,updates,episode_return_mean,env_frames_per_s"]
    rows += [f"{i},{i * 1000},{i * 250},{'' if i < 4 else -1000 + 50 * i},{900 + i}" for i in range(1, 11)]
    (pendulum / "metrics.csv").write_text("\n".join(rows) + "\n")
    drawn = []
    original = plt.Figure.savefig
    plt.Figure.savefig = lambda fig, *a, **k: (drawn.append(fig), original(fig, *a, **k))[1]
    try:
        assert main(["plot", str(tmp_path / "cartpole"), str(pendulum), "--out", str(tmp_path / "p.png")]) == 0
    finally:
        plt.Figure.savefig = original
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in recwarn]
    titled = {ax.get_title(): ax for ax in drawn[0].axes if ax.get_title()}
    assert set(titled) == {"CartPole-v1", "Pendulum-v1"}
    (line,) = titled["Pendulum-v1"].get_lines()
    assert line.get_xdata().min() >= 3000 and line.get_ydata().min() >= -850  # from the first return (frame 4000)
