"""Env construction, DQN preprocessing, evaluation and score normalisation (fast: real ALE, few hundred steps)."""

from __future__ import annotations

import cv2
import gymnasium
import numpy as np
import pytest

from distrl.envs import evaluate, game_name, human_normalized, is_atari, make_env
from distrl.envs.scores import ATARI_SCORES
from distrl.errors import ConfigError


def _random_actions(n_actions: int, steps: int, seed: int = 0) -> list[int]:
    return [int(a) for a in np.random.default_rng(seed).integers(n_actions, size=steps)]


# ---------------------------------------------------------------- Atari preprocessing


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_atari_obs_is_uint8_stack_of_four_84x84(mode):
    env = make_env("ALE/Pong-v5", mode, seed=0)
    assert env.observation_space.shape == (4, 84, 84)
    assert env.observation_space.dtype == np.uint8
    obs, _ = env.reset()
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    for _ in range(5):
        obs, *_ = env.step(0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert env.observation_space.contains(obs)
    # No sticky actions: the classic DQN / Ape-X protocol.
    assert env.unwrapped.ale.getFloat("repeat_action_probability") == 0.0
    env.close()


def test_reward_clipped_in_train_only_and_episode_return_unclipped():
    # Asterix pays 50 points per item, so a raw reward > 1 shows up within a few steps.
    steps = 100
    actions = _random_actions(9, steps)
    rewards = {}
    final_info = {}
    for mode in ("train", "eval"):
        env = make_env("ALE/Asterix-v5", mode, seed=0, max_episode_frames=4 * steps)
        env.reset()
        rs = []
        for t, a in enumerate(actions):  # noqa: B007 - t is read after the loop
            _, r, terminated, truncated, info = env.step(a)
            rs.append(float(r))
            if terminated or truncated:
                break
        assert truncated and t == steps - 1  # the cap is max_episode_frames // 4 agent steps
        rewards[mode], final_info[mode] = np.array(rs), info
        env.close()
    raw, clipped = rewards["eval"], rewards["train"]
    assert raw.max() > 1.0
    assert np.abs(clipped).max() <= 1.0
    np.testing.assert_array_equal(clipped, np.clip(raw, -1.0, 1.0))
    # info["episode"] is the unclipped game score in both modes.
    for mode in ("train", "eval"):
        assert final_info[mode]["episode"]["r"] == pytest.approx(raw.sum())
        assert final_info[mode]["episode"]["l"] == steps
    assert final_info["train"]["episode"]["r"] > clipped.sum()


def test_noop_reset_takes_between_1_and_30_noops():
    env = make_env("ALE/Pong-v5", "eval", seed=0)
    counts = []
    for _ in range(20):
        env.reset()
        # frameskip=1 at the ALE level, so each no-op is exactly one emulator frame.
        counts.append(env.unwrapped.ale.getEpisodeFrameNumber())
    assert all(1 <= c <= 30 for c in counts), counts
    assert len(set(counts)) > 3  # random, not a constant
    env.close()

    env = make_env("ALE/Pong-v5", "eval", noop_max=0)
    env.reset(seed=0)
    assert env.unwrapped.ale.getEpisodeFrameNumber() == 0
    env.close()


def test_step_repeats_action_4_frames_and_maxpools_last_two():
    env = make_env("ALE/Pong-v5", "eval", seed=0)
    env.reset()
    ale, action_set = env.unwrapped.ale, env.unwrapped._action_set
    pooled_differs_from_last = 0
    for a in _random_actions(env.action_space.n, 40):
        state = ale.cloneState()
        obs, *_ = env.step(a)
        # Replay the same step by hand on the emulator (deterministic without sticky actions).
        ale.restoreState(state)
        frames = []
        for _ in range(4):
            ale.act(action_set[a])
            frames.append(ale.getScreenGrayscale().copy())
        expected = cv2.resize(np.maximum(frames[2], frames[3]), (84, 84), interpolation=cv2.INTER_AREA)
        np.testing.assert_array_equal(obs[-1], expected)
        last_only = cv2.resize(frames[3], (84, 84), interpolation=cv2.INTER_AREA)
        pooled_differs_from_last += not np.array_equal(obs[-1], last_only)
    assert pooled_differs_from_last > 0  # the check above would catch a missing max-pool
    env.close()


def test_life_loss_flag_in_train_only_and_game_continues():
    actions = _random_actions(4, 500)
    lost_at = {}
    for mode in ("train", "eval"):
        env = make_env("ALE/Breakout-v5", mode, seed=0)
        _, info = env.reset()
        assert info["lives"] == 5
        for t, a in enumerate(actions):
            _, _, terminated, truncated, info = env.step(a)
            if mode == "eval":
                assert "life_loss" not in info
            else:
                assert info["life_loss"] == (info["lives"] == 4)
            if info["lives"] == 4:
                assert not (terminated or truncated)  # a life loss is not the end of the game
                lost_at[mode] = t
                break
        frame = env.unwrapped.ale.getEpisodeFrameNumber()
        _, _, terminated, _, info = env.step(0)
        assert not terminated and env.unwrapped.ale.getEpisodeFrameNumber() > frame  # no reset
        if mode == "train":
            assert info["life_loss"] is False
        env.close()
    assert lost_at["train"] == lost_at["eval"]


def test_seed_makes_first_reset_reproducible():
    obs = []
    for _ in range(2):
        env = make_env("ALE/Pong-v5", "train", seed=3)
        o, _ = env.reset()
        obs.append((o, env.unwrapped.ale.getEpisodeFrameNumber(), env.action_space.sample()))
        env.close()
    np.testing.assert_array_equal(obs[0][0], obs[1][0])
    assert obs[0][1:] == obs[1][1:]

    a, b = make_env("CartPole-v1", seed=7), make_env("CartPole-v1", seed=7)
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])  # later resets follow the same stream
    assert a.action_space.sample() == b.action_space.sample()


# ---------------------------------------------------------------- other envs and errors


class _Float64Env(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (3,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3), {}

    def step(self, action):
        return np.ones(3), 1.0, True, False, {}


@pytest.mark.filterwarnings("ignore:.*precision lowered")
def test_non_atari_obs_float32_and_episode_stats():
    env = make_env("CartPole-v1", "eval", seed=0, max_episode_frames=50_000)
    assert env.observation_space.dtype == np.float32
    obs, _ = env.reset()
    assert obs.dtype == np.float32
    assert env.spec.max_episode_steps == 500  # CartPole keeps its own TimeLimit
    for t in range(1, 1000):  # noqa: B007 - t is read after the loop
        obs, _, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            break
    assert info["episode"]["l"] == t and info["episode"]["r"] == pytest.approx(t)

    gymnasium.register("DistrlTestFloat64-v0", entry_point=_Float64Env, disable_env_checker=True)
    try:
        env = make_env("DistrlTestFloat64-v0")
        assert env.observation_space.dtype == np.float32
        assert env.reset()[0].dtype == np.float32
        assert env.step(0)[0].dtype == np.float32
    finally:
        del gymnasium.registry["DistrlTestFloat64-v0"]


@pytest.mark.parametrize("bad_id", ["Foo-v9", "CartPole-v9", "ALE/Pongg-v5"])
def test_unknown_env_id_is_config_error(bad_id):
    with pytest.raises(ConfigError) as exc:
        make_env(bad_id)
    message = str(exc.value)
    assert bad_id in message and "\n" not in message


@pytest.mark.parametrize(
    "kwargs",
    [dict(mode="test"), dict(mode="Train"), dict(max_episode_frames=0), dict(noop_max=-1), dict(frame_stack=0)],
)
def test_bad_arguments_are_config_errors(kwargs):
    with pytest.raises(ConfigError) as exc:
        make_env("ALE/Pong-v5", **kwargs)
    assert "\n" not in str(exc.value)


def test_missing_dependency_is_config_error(monkeypatch):
    """Gymnasium's DependencyNotInstalled (its message names the pip command) becomes one ConfigError line."""

    def missing(env_id, **kwargs):
        raise gymnasium.error.DependencyNotInstalled('MuJoCo is not installed, run `pip install "gymnasium[mujoco]"`')

    monkeypatch.setattr(gymnasium, "make", missing)
    with pytest.raises(ConfigError, match="needs a package that is not installed.*pip install") as exc:
        make_env("HalfCheetah-v5")
    assert "\n" not in str(exc.value)


def test_mujoco_task_makes_float_observations_and_box_actions():
    env = make_env("HalfCheetah-v5", seed=0)
    obs, _ = env.reset()
    assert obs.shape == (17,) and obs.dtype == np.float32 and env.action_space.shape == (6,)
    env.close()


def test_dm_control_task_by_id_flat_float_observations():
    """walker-walk through Shimmy: its dict of observations (orientations 14, height 1, velocity 9)
    flattened to one float32 vector, 1,000 steps then a truncation, the return in info["episode"]."""
    pytest.importorskip("shimmy")
    env = make_env("dm_control/walker-walk-v0", "train", seed=0)
    obs, _ = env.reset()
    assert obs.shape == (24,) == env.observation_space.shape and obs.dtype == np.float32
    assert env.action_space.shape == (6,) and float(env.action_space.low[0]) == -1.0
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            break
    assert (steps, terminated, truncated) == (1000, False, True) and info["episode"]["r"] == pytest.approx(total)
    env.close()


def test_dm_control_without_the_extra_names_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "shimmy", None)  # import shimmy raises ImportError
    with pytest.raises(ConfigError, match=r"need dm_control and shimmy .*pip install 'distrl\[dmc\]'") as exc:
        make_env("dm_control/cheetah-run-v0")
    assert "\n" not in str(exc.value)


def test_is_atari():
    for env_id in ["ALE/Pong-v5", "PongNoFrameskip-v4", "ALE/MontezumaRevenge-v5", "Breakout-v4"]:
        assert is_atari(env_id), env_id
    for env_id in ["CartPole-v1", "Pendulum-v1", "MinAtar/Breakout-v1", "HalfCheetah-v5"]:
        assert not is_atari(env_id), env_id


def test_minatar_obs_uint8_channel_first():
    pytest.importorskip("minatar")
    env = make_env("MinAtar/Breakout-v1", "train", seed=0)
    obs, _ = env.reset()
    assert obs.dtype == np.uint8 and obs.shape == (4, 10, 10) and obs.shape == env.observation_space.shape
    assert obs.max() == 1
    for _ in range(2000):
        obs, _, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            break
    assert terminated and "r" in info["episode"]


# ---------------------------------------------------------------- scores


def test_score_table_has_57_games_with_known_values():
    assert len(ATARI_SCORES) == 57
    assert ATARI_SCORES["pong"] == (-20.7, 14.6)
    assert ATARI_SCORES["breakout"] == (1.7, 30.5)
    assert all(human > random for random, human in ATARI_SCORES.values())


def test_game_name():
    assert game_name("ALE/Pong-v5") == "pong"
    assert game_name("PongNoFrameskip-v4") == "pong"
    assert game_name("MontezumaRevenge") == "montezuma_revenge"
    assert game_name("ALE/MontezumaRevenge-v5") == "montezuma_revenge"
    assert game_name("ALE/UpNDown-v5") == "up_n_down"
    assert game_name("MsPacmanNoFrameskip-v4") == "ms_pacman"
    assert game_name("kung_fu_master") == "kung_fu_master"
    assert game_name("CartPole-v1") is None
    assert game_name("MinAtar/Breakout-v1") is None  # different game, different scale


def test_human_normalized():
    assert human_normalized("ALE/Pong-v5", 0.0) == pytest.approx(20.7 / 35.3)  # 0.5864
    assert human_normalized("ALE/Pong-v5", 0.0) == pytest.approx(0.5864, abs=1e-4)
    assert human_normalized("BreakoutNoFrameskip-v4", 30.5) == pytest.approx(1.0)
    assert human_normalized("breakout", 1.7) == pytest.approx(0.0)
    assert human_normalized("CartPole-v1", 100.0) is None


# ---------------------------------------------------------------- evaluate


def test_evaluate_cartpole_constant_policy_reproducible():
    shapes = []

    def act(obs):
        shapes.append(obs.shape)
        return np.zeros(len(obs), dtype=np.int64)

    returns = evaluate("CartPole-v1", act, episodes=4, seed=1)
    assert len(returns) == 4 and all(isinstance(r, float) for r in returns)
    assert all(5 <= r <= 20 for r in returns)  # always pushing left falls over fast
    assert set(shapes) == {(1, 4)}
    assert evaluate("CartPole-v1", act, episodes=4, seed=1) == returns

    noisy = evaluate("CartPole-v1", act, episodes=5, epsilon=0.5, seed=2)
    assert evaluate("CartPole-v1", act, episodes=5, epsilon=0.5, seed=2) == noisy
    assert evaluate("CartPole-v1", act, episodes=5, epsilon=0.5, seed=3) != noisy


def test_evaluate_together_plays_the_same_episodes_in_batches():
    shapes = []

    def act(obs):  # push toward the pole's lean: episodes of different lengths
        shapes.append(obs.shape)
        return (obs[:, 2] > 0).astype(np.int64)

    alone = evaluate("CartPole-v1", act, episodes=5, seed=4)
    assert set(shapes) == {(1, 4)} and len(set(alone)) > 1
    shapes.clear()
    # 3 slots over 5 episodes: each slot takes the next episode's seed when its own ends, and the returns
    # come back in episode order, equal to one at a time for a policy without randomness
    assert evaluate("CartPole-v1", act, episodes=5, seed=4, together=3) == alone
    assert (3, 4) in shapes and max(s[0] for s in shapes) == 3 and min(s[0] for s in shapes) == 1
    noisy = evaluate("CartPole-v1", act, episodes=5, epsilon=0.5, seed=2, together=3)
    assert evaluate("CartPole-v1", act, episodes=5, epsilon=0.5, seed=2, together=3) == noisy


def test_evaluate_together_plays_a_recurrent_policy_one_at_a_time():
    class Recurrent:
        def __init__(self):
            self.shapes = []

        def reset(self):
            pass

        def __call__(self, obs):
            self.shapes.append(obs.shape)
            return np.zeros(len(obs), dtype=np.int64)

    policy = Recurrent()
    evaluate("CartPole-v1", policy, episodes=3, seed=1, together=3)
    assert set(policy.shapes) == {(1, 4)}  # its state is one episode's: never a batch of several


def test_evaluate_atari_returns_unclipped_scores():
    def act(obs):
        assert obs.shape == (1, 4, 84, 84) and obs.dtype == np.uint8
        return np.zeros(1, dtype=np.int64)

    returns = evaluate("ALE/Asterix-v5", act, episodes=2, epsilon=1.0, seed=0, max_episode_frames=400)
    assert len(returns) == 2
    assert max(returns) > 1.0  # Asterix items are worth 50: not clipped
    assert evaluate("ALE/Asterix-v5", act, episodes=2, epsilon=1.0, seed=0, max_episode_frames=400) == returns


def test_evaluate_rejects_bad_arguments():
    with pytest.raises(ConfigError):
        evaluate("CartPole-v1", lambda o: np.zeros(1, dtype=np.int64), episodes=0)
    with pytest.raises(ConfigError):
        evaluate("CartPole-v1", lambda o: np.zeros(1, dtype=np.int64), episodes=1, epsilon=1.5)
    with pytest.raises(ConfigError, match="together"):
        evaluate("CartPole-v1", lambda o: np.zeros(1, dtype=np.int64), episodes=1, together=0)
