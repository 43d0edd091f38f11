"""R2D2's sequences cut by hand: where they start, what they hold, their padding and stored state."""

import numpy as np
import pytest

from distrl.replay.sequence_adder import SequenceAdder
from tests.replay_files import load_table, save_table


def play(adder, steps, start_obs=0, end_at=None, terminal=True):
    """Feed `steps` steps whose obs is 10*i, state 's<i>', action i, reward i/10; the last one ends the episode
    when end_at is reached. Returns every sequence emitted."""
    out = []
    for i in range(steps):
        end = end_at is not None and i == end_at - 1
        out += adder.add(np.array([10.0 * (i + start_obs)]), f"s{i}", np.array([10.0 * (i + 1 + start_obs)]), end,
                         prev_action=float(i - 1), prev_reward=(i - 1) / 10, action=float(i), reward=i / 10,
                         discount=0.0 if (end and terminal) else 0.99)
    return out


def test_traces_tile_an_episode_with_burn_in_from_the_previous_trace():
    adder = SequenceAdder(burn_in=2, trace=3)  # period 3, length 5
    seqs = play(adder, 8, end_at=8)
    assert [s["start"] for s in seqs] == [0, 1, 4]
    first, second, last = seqs
    # the episode's first: two padding steps (no burn-in: the initial state is exact), then steps 0-2
    assert first["obs"][:, 0].tolist() == [0, 0, 0, 10, 20, 30] and first["mask"].tolist() == [0, 0, 1, 1, 1]
    assert first["state"] == "s0" and first["action"].tolist() == [0, 0, 0, 1, 2]
    # burn-in 1-2 (the first trace's tail), trace 3-5, and the observation after step 5
    assert second["obs"][:, 0].tolist() == [10, 20, 30, 40, 50, 60] and second["mask"].all()
    assert second["state"] == "s1" and second["reward"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])
    # burn-in 4-5, trace 6-7 then padding; the terminal's discount and the final observation kept
    assert last["obs"][:, 0].tolist() == [40, 50, 60, 70, 80, 0] and last["mask"].tolist() == [1, 1, 1, 1, 0]
    assert last["discount"].tolist() == pytest.approx([0.99, 0.99, 0.99, 0.0, 0.0]) and last["state"] == "s4"
    assert last["prev_action"].tolist() == [3, 4, 5, 6, 7]  # the state after the end sees step 7's action
    # every step is in exactly one trace: the real steps after each sequence's burn-in
    in_traces = []
    for seq in seqs:
        virtual_start = seq["start"] - int(np.argmax(seq["mask"]))  # before its leading padding
        in_traces += [virtual_start + j for j in range(2, 5) if seq["mask"][j]]
    assert sorted(in_traces) == list(range(8))


def test_an_episode_ending_on_a_sequence_boundary_adds_no_empty_sequence():
    adder = SequenceAdder(burn_in=2, trace=3)
    seqs = play(adder, 6, end_at=6)
    assert [s["start"] for s in seqs] == [0, 1]
    assert seqs[1]["obs"][-1, 0] == 60 and seqs[1]["discount"][-1] == 0.0  # the terminal observation after step 5


def test_the_next_episode_starts_afresh():
    adder = SequenceAdder(burn_in=2, trace=3)
    play(adder, 4, end_at=4)
    seqs = play(adder, 3, start_obs=100)  # a new episode: state s0 again, and padding before it
    assert len(seqs) == 1 and seqs[0]["start"] == 0 and seqs[0]["state"] == "s0"
    assert seqs[0]["obs"][:, 0].tolist() == [0, 0, 1000, 1010, 1020, 1030]


def test_a_truncated_episode_keeps_its_discount():
    adder = SequenceAdder(burn_in=0, trace=4)
    (seq,) = play(adder, 3, end_at=3, terminal=False)
    assert seq["discount"].tolist() == pytest.approx([0.99, 0.99, 0.99, 0.0]) and seq["mask"].tolist() == [1, 1, 1, 0]
    assert seq["obs"][:, 0].tolist() == [0, 10, 20, 30, 0]  # the state after the truncation, to bootstrap from


def test_a_shorter_period_overlaps_the_traces():
    adder = SequenceAdder(burn_in=0, trace=4, period=2)
    seqs = play(adder, 7, end_at=7)
    assert [s["start"] for s in seqs] == [0, 2, 4, 6]
    assert [s["mask"].sum() for s in seqs] == [4, 4, 3, 1]


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        SequenceAdder(burn_in=2, trace=3, period=4)  # steps 3..3 of every 4 would never be learned from
    with pytest.raises(ValueError):
        SequenceAdder(burn_in=-1, trace=3)
    with pytest.raises(ValueError):
        SequenceAdder(burn_in=0, trace=3).add(np.zeros(1), None, np.zeros(1), False, reward=1.0)


def test_the_replay_table_carries_sequences(tmp_path):
    from distrl.replay import ReplayTable
    from distrl.replay.samplers import PrioritizedSampler

    adder = SequenceAdder(burn_in=2, trace=3)
    seqs = [dict(s, state=None) for s in play(adder, 8, end_at=8)]
    items = {k: np.stack([s[k] for s in seqs]) for k in ("obs", "prev_action", "prev_reward", "action", "reward",
                                                         "discount", "mask")}
    items["state_h"] = items["state_c"] = np.arange(3 * 4, dtype=np.float32).reshape(3, 4)
    table = ReplayTable(10, PrioritizedSampler(alpha=0.9, beta=0.6), seed=1)
    keys = table.add(items, np.array([1.0, 2.0, 3.0]))
    restored = load_table(save_table(table, tmp_path))
    for t in (table, restored):
        got_keys, batch, weights = t.sample(64)
        slot = {int(k): i for i, k in enumerate(keys)}
        for j, k in enumerate(got_keys):
            i = slot[int(k)]
            assert np.array_equal(batch["obs"][j], items["obs"][i]) and np.array_equal(batch["mask"][j], items["mask"][i])
        assert batch["obs"].shape == (64, 6, 1) and weights.shape == (64,)
