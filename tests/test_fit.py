"""distrl/config/fit.py: apex-atari-fast sized from the machine, as bench/pong.py measured each choice; a
key the user sets keeps the user's value; a cluster or an inline run keeps the preset's own."""

import pytest

from distrl import config as C
from distrl.config.fit import Machine, atari_plan, fitted

LAPTOP = Machine(cores=2, gpu=False, memory_gib=24.0, bf16=True)
GPU_BOX = Machine(cores=16, gpu=True, memory_gib=128.0, bf16=False)


def test_two_cores_without_a_gpu_get_one_actor_a_bf16_learner_with_fused_adam_at_batch_64_and_two_samples_per_insert():
    values, why = atari_plan(LAPTOP)
    assert values["actors"] == 1 and values["learner.batch_size"] == 64 and values["learner.bf16"] is True
    assert values["replay.samples_per_insert"] == 2.0 and values["torch_threads"] == 1
    assert values["learner.fused_adam"] is True and "fused Adam" in why
    assert "2 cores, no GPU" in why and "bfloat16" in why
    assert "learner.bf16" not in atari_plan(Machine(2, False, 24.0, bf16=False))[0]


def test_a_gpu_machine_puts_the_learner_on_what_the_actors_leave_of_the_gpu():
    values, why = atari_plan(GPU_BOX)
    # 16 cores: 4 shards, the learner and the evaluator leave 10 actors, 0.05 of the GPU each
    assert (values["actors"], values["replay.shards"], values["ray.learner_gpus"]) == (10, 4, 0.5)
    assert values["replay.share_frames"] is True and "raw" in why  # 128 GiB hold raw frames
    # the actors' GPU shares and the learner's fill the one GPU exactly: Ray could place no less, and more would wait
    assert values["actors"] * values["ray.actor_gpus"] + values["ray.learner_gpus"] == pytest.approx(1.0)
    assert "replay.share_frames" not in atari_plan(Machine(16, True, 32.0, False))[0]


def test_keys_the_user_sets_win_and_other_presets_are_not_sized():
    values, why = fitted("apex-atari-fast", "ray", "", {"actors": 3, "learner.batch_size": 32}, LAPTOP)
    assert "actors" not in values and "learner.batch_size" not in values and values["replay.shards"] == 1
    assert why.startswith("sized for this machine: 2 cores")
    assert fitted("apex-atari", "ray", "", {}, LAPTOP) is None
    assert fitted("apex-atari-fast", "inline", "", {}, LAPTOP)[0] == {}
    assert fitted("apex-atari-fast", "ray", "10.0.0.5:6379", {}, LAPTOP)[0] == {}


def test_the_sized_values_make_a_valid_config():
    values, _ = atari_plan(LAPTOP)
    cfg = C.build_config("apex", "ALE/Pong-v5", "apex-atari-fast", {**values, "runtime": "ray"})
    assert cfg.actors == 1 and cfg.learner.batch_size == 64 and cfg.replay.samples_per_insert == 2.0
    assert cfg.learner.fused_adam is True
