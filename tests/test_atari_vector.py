"""AtariVector (ale-py's C++ vector env) against make_env, game for game: the same observations, rewards,
ends and infos for the same actions (no-op starts off: they draw from different RNGs)."""

import numpy as np
import pytest

from distrl.envs import make_env
from distrl.envs.atari_vector import AtariVector
from distrl.errors import ConfigError
from tests.fakes import NoParameters, RecordingSink


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("cap,ending", [(600, "truncated"), (1200, "terminated")])
def test_each_game_is_what_make_env_gives_for_the_same_actions(mode, cap, ending):
    # Breakout: lives to lose, FIRE among the random actions; a 600-frame cap cuts games mid-play, with 1,200
    # frames these actions lose every life first.
    k, steps = 2, 400
    vec = AtariVector("ALE/Breakout-v5", k, mode=mode, noop_max=0, max_episode_frames=cap)
    envs = [make_env("ALE/Breakout-v5", mode, seed=j, noop_max=0, max_episode_frames=cap) for j in range(k)]
    obs = vec.reset()
    np.testing.assert_array_equal(obs, np.stack([e.reset()[0] for e in envs]))
    actions = np.random.default_rng(0).integers(vec.num_actions, size=(steps, k))
    ends = life_losses = 0
    for t in range(steps):
        obs, rewards, terminated, truncated, infos = vec.step(actions[t])
        for j, env in enumerate(envs):
            o, r, te, tr, info = env.step(int(actions[t, j]))
            assert (te, tr) == (terminated[j], truncated[j]) and r == rewards[j], (t, j)
            if mode == "train" and not te:  # also on the step the time limit cuts
                assert infos[j]["life_loss"] == info["life_loss"]
                life_losses += info["life_loss"]
            if te or tr:
                ends += (te if ending == "terminated" else tr)
                np.testing.assert_array_equal(infos[j]["final_obs"], o)
                assert infos[j]["episode"] == {"r": pytest.approx(info["episode"]["r"]), "l": info["episode"]["l"]}
                o, _ = env.reset()
            np.testing.assert_array_equal(obs[j], o, err_msg=f"step {t}, game {j}")
    assert ends >= 2 and (mode == "eval" or life_losses > 0)  # the cases that differ were met


def test_rewards_are_clipped_for_training_only():
    for mode, clip in (("train", True), ("eval", False)):
        vec = AtariVector("ALE/Asterix-v5", 1, mode=mode, noop_max=0, max_episode_frames=400)
        vec.reset()
        rewards = [vec.step(np.array([a]))[1][0] for a in np.random.default_rng(0).integers(9, size=99)]
        assert (max(rewards) == 1.0) if clip else (max(rewards) > 1.0)


def test_a_non_atari_id_is_refused():
    with pytest.raises(ConfigError, match="'CartPole-v1' is not one"):
        AtariVector("CartPole-v1", 2)


def test_an_apex_actor_on_the_vector_env_acts_and_sends_as_on_make_envs(tmp_path, monkeypatch):
    """actor.vector_env: Ape-X's actor steps its games through AtariVector; with no-op starts off (they draw
    from different RNGs), the same seed and the same net, it sends the same transitions and priorities as
    over make_env's games, game overs and restarts included."""
    import functools

    import distrl.architectures.apex.builder as apex
    from distrl.architectures import make_architecture
    from distrl.config import build_config
    monkeypatch.setattr(apex, "make_env", functools.partial(make_env, noop_max=0))
    monkeypatch.setattr(apex, "AtariVector", functools.partial(AtariVector, noop_max=0))

    sent = []
    for vector in (False, True):
        cfg = build_config("apex", "ALE/Breakout-v5", overrides={
            "run_dir": str(tmp_path / f"v{vector}"), "actors": 1, "actor.envs_per_actor": 2,
            "actor.vector_env": vector, "actor.flush_size": 50, "max_episode_frames": 320})
        builder = make_architecture(cfg)
        sink = RecordingSink()
        actor = builder.make_actor(0, sink, NoParameters())
        actor.run(110)
        sent.append(sink.batches)
        assert actor.episodes >= 2
    assert len(sent[0]) == len(sent[1]) >= 3
    for (a, pa), (b, pb) in zip(*sent):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        np.testing.assert_allclose(pa, pb, rtol=1e-6)


def test_vector_env_is_refused_for_a_non_atari_env():
    from distrl.config import build_config
    with pytest.raises(ConfigError, match="actor.vector_env.*'CartPole-v1' is not Atari"):
        build_config("apex", "CartPole-v1", overrides={"actor.vector_env": "true"})
