"""bench/screens.py: a screen's spec is read or refused clearly, and a sitting of screens is appended to
its result file with each screen's rows and summary, earlier sittings kept."""

import argparse

import pytest

from bench import results, screens


def test_a_screen_is_name_game_and_its_values():
    assert screens.parse_screen("fw:Freeway:rl.t_max=20,rl.entropy_beta=0.003") == \
        ("fw", "Freeway", ["rl.t_max=20", "rl.entropy_beta=0.003"])
    assert screens.parse_screen("base:Breakout") == ("base", "Breakout", [])
    for bad in ("fw:Pong:rl.t_max=20", "fw", "fw:Freeway:rl.t_max", ":Freeway"):
        with pytest.raises(argparse.ArgumentTypeError, match="NAME:GAME"):
            screens.parse_screen(bad)


def test_screens_append_one_sitting_with_each_screen_s_rows_and_summary(tmp_path):
    out = tmp_path / "screens.jsonl"
    ran = []

    def fake_run(arch, game, values, seed, budget_s, run_dir):
        ran.append((arch, game, values, seed, budget_s))
        return [{"wall_s": 290.0, "frames": 1000, "updates": 10, "return_mean_100": 5.0, "eval_mean": None},
                {"wall_s": 300.0, "frames": 2000, "updates": 20, "return_mean_100": 12.0, "eval_mean": 11.0}]

    argv = ["--arch", "a3c", "--out", str(out), "--no-speed-index", "--budget-s", "300",
            "--screen", "bo-tmax20:Breakout:rl.t_max=20", "--screen", "bo-base:Breakout"]
    assert screens.main(argv, run=fake_run) == 0
    assert screens.main(argv, run=fake_run) == 0  # a second sitting: the first is kept
    assert ran[0] == ("a3c", "Breakout", ["rl.t_max=20"], 1, 300.0) and ran[1][2] == []
    first, second = results.read(out)
    assert first.header["screens"] == {"bo-tmax20": {"game": "Breakout", "set": "rl.t_max=20"},
                                       "bo-base": {"game": "Breakout", "set": ""}}
    assert second.contenders() == ["bo-tmax20", "bo-base"]
    (done,) = [r for r in second.of("bo-tmax20") if r.get("summary")]
    # the 5-minute marks are the last row's (300 s); Breakout's paper DQN score 10 was first reached at 300 s
    assert done["return_at_5m"] == 12.0 and done["eval_at_5m"] == 11.0 and done["set"] == "rl.t_max=20"
    assert done["time_to_paper_dqn_5m"] == {"wall_s": 300.0, "frames": 2000}
