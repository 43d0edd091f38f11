"""RMSProp with TensorFlow's semantics (eps inside the square root) against steps computed by hand,
and the one rule shared by A3C's two parameter stores and Ape-X's learner."""

from math import sqrt

import numpy as np
import pytest
import torch

from distrl import config as C
from distrl.algos.rmsprop import RMSProp
from distrl.architectures.a3c.builder import A3C
from distrl.components.learner import make_optimizer
from distrl.params.param_server import ShardedParameterServer, local_shards
from distrl.params.shared_memory import rmsprop_step

LR, DECAY, EPS = 0.1, 0.9, 1e-2


def run(opt_cls, grads, **kwargs):
    """The parameters, starting at [1, 1], after one optimizer step per gradient; and the optimizer."""
    p = torch.tensor([1.0, 1.0], dtype=torch.float64, requires_grad=True)
    opt = opt_cls([p], lr=LR, **kwargs)
    for g in grads:
        p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
    return p.detach().numpy(), opt


def test_centered_rule_by_hand():
    # ms = 0.9 ms + 0.1 g^2;  mg = 0.9 mg + 0.1 g;  p -= 0.1 g / sqrt(ms - mg^2 + 0.01)
    # step 1, g = [1, -2]:  ms = [0.1, 0.4]    mg = [0.1, -0.2]
    #   ms - mg^2 + eps = [0.1 - 0.01 + 0.01, 0.4 - 0.04 + 0.01] = [0.1, 0.37]
    p1 = [1 - 0.1 * 1 / sqrt(0.1), 1 + 0.1 * 2 / sqrt(0.37)]                      # [0.683772, 1.328798]
    # step 2, g = [1, 2]:  ms = [0.09 + 0.1, 0.36 + 0.4] = [0.19, 0.76]
    #   mg = [0.09 + 0.1, -0.18 + 0.2] = [0.19, 0.02]
    #   ms - mg^2 + eps = [0.19 - 0.0361 + 0.01, 0.76 - 0.0004 + 0.01] = [0.1639, 0.7696]
    p2 = [p1[0] - 0.1 * 1 / sqrt(0.1639), p1[1] - 0.1 * 2 / sqrt(0.7696)]           # [0.436765, 1.100818]
    # step 3, g = [-1, 0]:  ms = [0.171 + 0.1, 0.684 + 0] = [0.271, 0.684]
    #   mg = [0.171 - 0.1, 0.018] = [0.071, 0.018]
    #   ms - mg^2 + eps = [0.271 - 0.005041 + 0.01, ...] = [0.275959, ...];  g = 0 leaves p[1] alone
    p3 = [p2[0] + 0.1 * 1 / sqrt(0.275959), p2[1]]                                  # [0.627125, 1.100818]
    grads = [[1.0, -2.0], [1.0, 2.0], [-1.0, 0.0]]
    for n, expected in enumerate([p1, p2, p3], start=1):
        params, opt = run(RMSProp, grads[:n], decay=DECAY, eps=EPS, centered=True)
        np.testing.assert_allclose(params, expected, rtol=1e-12)
    state = opt.state[opt.param_groups[0]["params"][0]]
    np.testing.assert_allclose(state["square_avg"].numpy(), [0.271, 0.684], rtol=1e-12)
    np.testing.assert_allclose(state["grad_avg"].numpy(), [0.071, 0.018], rtol=1e-12)


def test_torch_centered_rmsprop_puts_eps_outside_and_differs():
    # torch: p -= 0.1 g / (sqrt(ms - mg^2) + 0.01); step 1, g = [1, -2]:
    #   sqrt(ms - mg^2) = sqrt([0.09, 0.36]) = [0.3, 0.6]   ->  denominators [0.31, 0.61]
    torch_p1 = [1 - 0.1 / 0.31, 1 + 0.2 / 0.61]                                   # [0.677419, 1.327869]
    ours_p1 = [1 - 0.1 / sqrt(0.1), 1 + 0.2 / sqrt(0.37)]                          # [0.683772, 1.328798]
    theirs, _ = run(torch.optim.RMSprop, [[1.0, -2.0]], alpha=DECAY, eps=EPS, centered=True)
    ours, _ = run(RMSProp, [[1.0, -2.0]], decay=DECAY, eps=EPS, centered=True)
    np.testing.assert_allclose(theirs, torch_p1, rtol=1e-12)
    np.testing.assert_allclose(ours, ours_p1, rtol=1e-12)
    assert abs(theirs[0] - ours[0]) > 6e-3


def test_momentum_accumulates_lr_scaled_steps_as_tensorflow():
    # non-centered, momentum 0.5: mom = 0.5 mom + 0.1 g / sqrt(ms + eps);  p -= mom
    # step 1, g = [1, -2]:  ms = [0.1, 0.4];  mom = [0.1 / sqrt(0.11), -0.2 / sqrt(0.41)] = [0.301511, -0.312348]
    mom = np.array([0.1 / sqrt(0.11), -0.2 / sqrt(0.41)])
    # step 2, g = [0, 0]:  the step is 0, mom = 0.5 mom, and p keeps moving: p = 1 - mom - 0.5 mom
    params, _ = run(RMSProp, [[1.0, -2.0]], decay=DECAY, eps=EPS, momentum=0.5)
    np.testing.assert_allclose(params, 1 - mom, rtol=1e-12)                        # [0.698489, 1.312348]
    params, _ = run(RMSProp, [[1.0, -2.0], [0.0, 0.0]], decay=DECAY, eps=EPS, momentum=0.5)
    np.testing.assert_allclose(params, 1 - 1.5 * mom, rtol=1e-12)                  # [0.547733, 1.468521]


def test_tensorflow_1_starts_the_mean_square_at_one():
    # centered, ms starts at 1; step 1, g = [1, -2]:  ms = [0.9 + 0.1, 0.9 + 0.4] = [1.0, 1.3]
    #   mg = [0.1, -0.2];  ms - mg^2 + eps = [1 - 0.01 + 0.01, 1.3 - 0.04 + 0.01] = [1.0, 1.27]
    params, _ = run(RMSProp, [[1.0, -2.0]], decay=DECAY, eps=EPS, centered=True, initial_ms=1.0)
    np.testing.assert_allclose(params, [1 - 0.1 / 1.0, 1 + 0.2 / sqrt(1.27)], rtol=1e-12)  # [0.9, 1.177471]


def test_ape_x_learner_uses_the_tensorflow_rule():
    le = C.LearnerConfig()
    opt = make_optimizer([torch.zeros(2, requires_grad=True)], le)
    assert isinstance(opt, RMSProp)
    assert {k: opt.defaults[k] for k in ("lr", "decay", "eps", "momentum", "centered", "initial_ms")} == {
        "lr": 0.00025 / 4, "decay": 0.95, "eps": 1.5e-7, "momentum": 0.0, "centered": True, "initial_ms": 1.0}


def test_fused_adam_is_the_same_rule_in_one_kernel():
    """learner.fused_adam (issue 59): Adam's first step moves each parameter by lr against its gradient's sign."""
    params = {}
    for fused in (False, True):
        le = C.LearnerConfig(optimizer="adam", lr=0.1, fused_adam=fused)
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        opt = make_optimizer([w], le)
        assert bool(opt.defaults["fused"]) is fused
        (w * torch.tensor([3.0, -0.5])).sum().backward()
        opt.step()
        params[fused] = w.detach().numpy()
    np.testing.assert_allclose(params[False], [0.9, -1.9], rtol=1e-6)  # m/sqrt(v) = g/|g| on the first step
    np.testing.assert_allclose(params[True], params[False], rtol=1e-6)


def test_adam_eps_damps_the_step_of_a_small_gradient():
    """learner.adam_eps (issue 59): Adam's first step is lr * g / (|g| + eps). With eps 1e-4, a gradient of 1e-4
    moves by half of lr, where torch's 1e-8 moves it by nearly all of it; a gradient of 3 moves by lr either way."""
    for eps in (1e-4, 1e-8):
        le = C.LearnerConfig(optimizer="adam", lr=0.1, adam_eps=eps)
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        opt = make_optimizer([w], le)
        (w * torch.tensor([3.0, -1e-4])).sum().backward()
        opt.step()
        expected = [1.0 - 0.1 * 3 / (3 + eps), -2.0 + 0.1 * 1e-4 / (1e-4 + eps)]  # [0.9, -1.95] at eps 1e-4
        np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-6)


def test_shared_and_sharded_a3c_stores_apply_the_same_rule(tmp_path):
    # Both of A3C's stores, on the same 4 gradients: the shared store's numpy step and the sharded
    # store's "rmsprop" shards built as the A3C builder builds them (decay 0.99, eps 0.1 from optim).
    cfg = C.build_config("a3c", "CartPole-v1", overrides={
        "run_dir": str(tmp_path / "run"), "ps.store": "sharded", "ps.shards": 3,
        "learner.lr": 0.05, "learner.decay": 0.99, "learner.eps": 0.1})
    arch = A3C(cfg)
    ps = ShardedParameterServer([arch.make_shard(i) for i in range(3)])
    params, stats = arch.initial_params().copy(), np.zeros(arch.n_params, dtype=np.float32)
    rng = np.random.default_rng(0)
    for _ in range(4):
        g = rng.normal(size=arch.n_params).astype(np.float32)
        _, versions = ps.pull()
        ps.push(g, versions)
        rmsprop_step(params, stats, g, lr=0.05, decay=0.99, eps=0.1)
    np.testing.assert_array_equal(ps.pull()[0], params)
    assert not np.array_equal(params, arch.initial_params())


def test_sharded_rmsprop_equals_one_optimizer_on_the_whole_vector():
    x0 = np.array([0.5, -1.0, 2.0, 0.0, 3.0, -0.5, 1.5], dtype=np.float32)
    ps = ShardedParameterServer(local_shards(x0, 3, optimizer="rmsprop", lr=0.05, decay=0.9, eps=0.01))
    whole = torch.tensor(x0, requires_grad=True)
    opt = RMSProp([whole], lr=0.05, decay=0.9, eps=0.01)
    rng = np.random.default_rng(1)
    for _ in range(3):
        g = rng.normal(size=x0.size).astype(np.float32)
        ps.push(g, ps.pull()[1])
        whole.grad = torch.from_numpy(g)
        opt.step()
    np.testing.assert_array_equal(ps.pull()[0], whole.detach().numpy())


def test_a_torch_rmsprop_checkpoint_still_loads():
    # the same state keys (square_avg, grad_avg): the statistics carry over; the group gains decay etc.
    p = torch.tensor([1.0, 1.0], requires_grad=True)
    old = torch.optim.RMSprop([p], lr=LR, alpha=DECAY, eps=EPS, centered=True)
    p.grad = torch.tensor([1.0, -2.0])
    old.step()
    new = RMSProp([p], lr=LR, decay=DECAY, eps=EPS, centered=True)
    new.load_state_dict(old.state_dict())
    new.step()  # g = [1, -2] again: ms = [0.19, 0.76], mg = [0.19, -0.38]
    assert new.param_groups[0]["decay"] == DECAY
    np.testing.assert_allclose(new.state[p]["square_avg"].numpy(), [0.19, 0.76], rtol=1e-6)


def test_a_restored_shard_holds_exactly_the_saved_state():
    """What a restarted A3C shard is checked on (tests/chaos): its state right after loading is the saved
    one, down to every optimizer group key (torch's load_state_dict adds `differentiable`)."""
    from distrl.checkpoint import state_digest
    from distrl.params.param_server import ParamShard
    shard = ParamShard(np.zeros(4, np.float32), optimizer="rmsprop", lr=0.01, decay=0.99, eps=0.1, anneal_updates=100)
    for g in ([1.0, -2.0, 0.5, 0.0], [0.5, 0.5, -1.0, 2.0]):
        shard.push(np.array(g, np.float32), shard.version)
    saved = shard.state_dict()
    restored = ParamShard(np.zeros(4, np.float32), optimizer="rmsprop", lr=0.01, decay=0.99, eps=0.1, anneal_updates=100)
    restored.load_state_dict(saved)
    assert state_digest(restored.state_dict()) == state_digest(saved)
    assert restored.state_dict()["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.01 * (1 - 1 / 100))


def test_bad_hyperparameters_are_refused():
    with pytest.raises(ValueError, match="decay in"):
        RMSProp([torch.zeros(1, requires_grad=True)], lr=0.1, decay=1.0)
