"""R2D2's actor: sequences carry the LSTM state the actor had before their first step (zeros at an
episode's start), the previous action and reward it fed the network, and a priority each."""

import numpy as np
import torch

from distrl.components.recurrent_actor import RecurrentActor
from distrl.envs import make_env
from distrl.nets.recurrent_q import RecurrentQNetwork
from tests.fakes import NoParameters, RecordingSink


def actor(epsilons=(0.3, 0.3), flush_size=1):
    torch.manual_seed(0)
    net = RecurrentQNetwork((4,), 2, lstm_units=8, hidden=(16,))
    sink = RecordingSink()
    act = RecurrentActor(lambda j: make_env("CartPole-v1", "train", seed=10 + j), net, list(epsilons), sink=sink,
                         source=NoParameters(), burn_in=2, trace=3, period=3, n_step=2, gamma=0.99,
                         rescale_eps=1e-3, priority_eta=0.9, flush_size=flush_size, pull_every=10_000, seed=3)
    return act, net, sink


def sequences(sink):
    out = []
    for batch, priorities in sink.batches:
        for i in range(len(priorities)):
            out.append(({k: v[i] for k, v in batch.items()}, priorities[i]))
    return out


def test_sequences_carry_the_state_before_their_first_step():
    act, net, sink = actor(epsilons=(0.3,))
    act.run(40)
    seqs = [s for s, _ in sequences(sink)]
    first, second = seqs[0], seqs[1]
    assert first["mask"].tolist() == [False, False, True, True, True]  # an episode's first: padding, then steps 0-2
    assert not first["state_h"].any() and not first["state_c"].any()  # the initial state, zeros
    # the second starts at step 1: its state is the network's after step 0 (previous action and reward 0)
    with torch.no_grad():
        _, (h, c) = net(torch.as_tensor(first["obs"][2])[None, None], torch.zeros(1, 1), torch.zeros(1, 1))
    assert np.allclose(second["state_h"], h[0, 0].numpy(), atol=1e-6)
    assert np.allclose(second["state_c"], c[0, 0].numpy(), atol=1e-6)
    # within an episode, each step's previous action and reward are the step before's
    assert second["prev_action"][1:].tolist() == second["action"][:-1].tolist()
    assert second["prev_reward"][1:].tolist() == second["reward"][:-1].tolist()
    assert np.array_equal(second["obs"][:3], first["obs"][3:])  # steps 1, 2 and the state after: the overlap


def test_a_new_episode_starts_from_zeros_and_every_sequence_has_a_priority():
    act, _, sink = actor()
    act.run(150)  # CartPole episodes under a random-ish policy last ~10-40 steps: several end
    act.flush()
    seqs = sequences(sink)
    starts = [s for s, _ in seqs if not s["mask"][0]]  # episodes' first sequences
    assert len(starts) >= 4 and act.episodes >= 2
    for s in starts:
        assert not s["state_h"].any() and s["prev_action"][2] == 0 and s["prev_reward"][2] == 0
    ends = [s for s, _ in seqs if not s["mask"][-1]]  # padded after an end
    assert ends and all(s["discount"][s["mask"]][-1] == 0.0 for s in ends)  # CartPole's end is a terminal
    priorities = np.array([p for _, p in seqs])
    assert np.all(np.isfinite(priorities)) and np.all(priorities > 0)
    assert act.sent == len(seqs)
