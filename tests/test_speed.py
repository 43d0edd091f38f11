"""bench/speed.py: the machine's speed index is the geometric mean of its three rates over the reference's."""

import math

from bench import speed


def test_the_index_is_the_geometric_mean_of_the_rates_over_the_reference(monkeypatch):
    ref = speed.REFERENCE
    rates = {"learner_step_per_s": 2 * ref["learner_step_per_s"], "mlp_step_bf16_per_s": ref["mlp_step_bf16_per_s"] / 4,
             "env_step_per_s": ref["env_step_per_s"] / 4}
    monkeypatch.setattr(speed, "alternating_rates", lambda cases, **kw: {k: rates[k] for k in cases})
    out = speed.measure()
    assert out["index"] == 0.5  # (2 * 1/4 * 1/4) ** (1/3)
    assert out["scheme"] == speed.SCHEME and out["learner_step_per_s"] == round(rates["learner_step_per_s"], 1)


def test_both_workloads_run_and_leave_torch_threads_as_they_were():
    import torch
    before = torch.get_num_threads()
    out = speed.measure(seconds=0.02, rounds=1)
    assert torch.get_num_threads() == before
    ratios = [out[k] / speed.REFERENCE[k] for k in speed.REFERENCE]
    assert all(r > 0 for r in ratios)
    assert math.isclose(out["index"], math.prod(ratios) ** (1 / 3), abs_tol=0.011)
