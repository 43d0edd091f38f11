"""n-step transitions by hand: n = 3, gamma = 0.5, rewards 1, 2, 3, 4."""

import pytest

from distrl.replay.adder import NStepAdder


def run(terminated: bool, truncated: bool):
    adder = NStepAdder(3, 0.5)
    out = []
    for t, r in enumerate([1.0, 2.0, 3.0, 4.0]):
        last = t == 3
        out += adder.add(f"s{t}", t, r, f"s{t + 1}", terminated and last, truncated and last)
    return out


def test_full_nstep_then_cut_short_at_terminal():
    out = run(terminated=True, truncated=False)
    assert [t["obs"] for t in out] == ["s0", "s1", "s2", "s3"]
    assert [t["next_obs"] for t in out] == ["s3", "s4", "s4", "s4"]
    assert [t["reward"] for t in out] == pytest.approx([1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3 + 0.25 * 4,
                                                        3 + 0.5 * 4, 4])
    assert [t["discount"] for t in out] == [0.125, 0.0, 0.0, 0.0]


def test_truncation_keeps_the_bootstrap_discount():
    out = run(terminated=False, truncated=True)
    assert [t["reward"] for t in out] == pytest.approx([2.75, 4.5, 5.0, 4.0])
    assert [t["discount"] for t in out] == [0.125, 0.125, 0.25, 0.5]


def test_no_transition_spans_an_episode_boundary():
    adder = NStepAdder(3, 0.9)
    first = adder.add("a0", 0, 1.0, "a1", True, False)
    adder.reset()
    assert [t["obs"] for t in first] == ["a0"] and first[0]["discount"] == 0.0
    assert adder.add("b0", 0, 1.0, "b1", False, False) == []
    assert adder.add("b1", 0, 1.0, "b2", False, False) == []
    (t,) = adder.add("b2", 0, 1.0, "b3", False, False)
    assert t["obs"] == "b0" and t["reward"] == pytest.approx(1 + 0.9 + 0.81)


def test_one_step_is_plain_q_learning():
    (t,) = NStepAdder(1, 0.99).add("s", 1, 2.0, "s'", False, False, extra="q")
    assert (t["reward"], t["discount"], t["extra"]) == (2.0, 0.99, "q")
