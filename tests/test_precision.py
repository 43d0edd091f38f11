"""learner.bf16 where the learner's device computes bfloat16 in hardware, float32 with a note elsewhere."""

import pytest

from distrl import config as C
from distrl.architectures.apex.builder import Apex
from distrl.architectures.apex_dpg.builder import ApexDPG
from distrl.architectures.dqn.builder import DQN
from distrl.architectures.r2d2.builder import R2D2
from distrl.nets import precision
from distrl.nets.precision import has_bf16_units, use_bf16

WITH = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n"
AMX = "flags\t\t: fpu avx2 amx_tile amx_bf16 amx_int8\n"
WITHOUT = "flags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_vnni\n"  # AVX512 without its bf16 instructions


@pytest.fixture
def cpuinfo(tmp_path):
    def write(text: str):
        path = tmp_path / "cpuinfo"
        path.write_text(text)
        return path
    return write


def test_cpu_units_are_read_from_cpuinfo_flags(cpuinfo, tmp_path):
    assert has_bf16_units("cpu", cpuinfo(WITH)) and has_bf16_units("cpu", cpuinfo(AMX))
    assert not has_bf16_units("cpu", cpuinfo(WITHOUT))
    assert not has_bf16_units("cpu", tmp_path / "absent")  # not Linux: no cpuinfo, float32
    assert not has_bf16_units("meta", cpuinfo(WITH))  # only a CPU's flags speak for the CPU


def test_bf16_is_used_only_where_asked_and_supported_and_a_refusal_says_why(cpuinfo, capsys, monkeypatch):
    monkeypatch.setattr(precision, "_noted", set())
    assert use_bf16(True, "cpu", cpuinfo(WITH))
    assert not use_bf16(False, "cpu", cpuinfo(WITH))
    assert capsys.readouterr().err == ""
    assert not use_bf16(True, "cpu", cpuinfo(WITHOUT))
    err = capsys.readouterr().err
    assert "learner.bf16" in err and "no bfloat16 units" in err and "float32" in err
    assert not use_bf16(True, "cpu", cpuinfo(WITHOUT)) and capsys.readouterr().err == ""  # said once


def test_the_builders_resolve_learner_bf16_against_this_machine(tmp_path):
    here = has_bf16_units("cpu")
    dpg = ApexDPG(C.build_config("apex-dpg", "Pendulum-v1", overrides={
        "learner.bf16": True, "run_dir": str(tmp_path / "dpg"), "net.actor_hidden": (8, 8), "net.critic_hidden": (8, 8)}))
    assert dpg.make_learner().bf16 is here
    r2d2 = R2D2(C.build_config("r2d2", "CartPole-v1", overrides={"learner.bf16": True, "run_dir": str(tmp_path / "r")}))
    learner = r2d2.make_learner()
    assert learner.cfg.bf16 is here and r2d2.cfg.learner.bf16  # the run's config keeps what was asked
    for arch, cls in (("apex", Apex), ("dqn", DQN)):  # the DQN learner's, from its own config
        builder = cls(C.build_config(arch, "CartPole-v1", overrides={"learner.bf16": True, "run_dir": str(tmp_path / arch)}))
        assert builder.make_learner().bf16 is here


def test_actor_bf16_acts_in_bfloat16_where_the_cpu_has_units_and_its_q_values_stay_float32(tmp_path):
    """Ape-X's actor.bf16: the acting pass in autocast, its q-values (the priorities' source) float32 and within
    bfloat16's rounding of the float32 pass; the same numbers as float32 where the CPU has no units."""
    import numpy as np

    here = has_bf16_units("cpu")
    arch = Apex(C.build_config("apex", "CartPole-v1", overrides={"actor.bf16": True, "run_dir": str(tmp_path / "a")}))

    class Sink:
        def add(self, batch, priorities):
            pass

    actor = arch.make_actor(0, sink=Sink(), source=arch.make_learner())
    assert actor.bf16 is here and arch.cfg.actor.bf16
    obs = [np.random.default_rng(k).normal(size=4).astype(np.float32) for k in range(8)]
    q = actor._q_values(obs)
    actor.bf16 = False
    q32 = actor._q_values(obs)
    assert q.dtype == np.float32 and q.shape == q32.shape == (8, 2)
    assert np.allclose(q, q32, rtol=0.05, atol=0.02)
    assert (not np.array_equal(q, q32)) is here  # bfloat16's hidden layers round where they run
