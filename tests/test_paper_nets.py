"""The papers' network sizes, checked against the numbers they print (issue 19)."""

from distrl.nets.actor_critic import PolicyValueNet


def count(net) -> int:
    return sum(p.numel() for p in net.parameters())


def test_ba3c_trunk_matches_table_2_of_adamski_et_al_where_the_paper_states_it():
    """Table 2: 538,119 weights with 256 hidden neurons, 332,295 with 128 (and 229,383 with 64): 1,608 per
    neuron = 1,600 features into the layer (64 x 5 x 5 after four conv + max-pool stages) + 1 bias + 6
    policy logits + 1 value, Pong's 6 actions. distrl's fully connected part matches that exactly; the
    rest of the count (the convolutions, which the paper does not spell out, on its colour frames)
    differs: distrl's 4 grey frames give 304,455 with 128 neurons."""
    nets = {h: PolicyValueNet((4, 84, 84), 6, hidden=(h,), cnn="ba3c") for h in (64, 128, 256)}
    assert count(nets[256]) - count(nets[128]) == 538_119 - 332_295 == 128 * 1_608
    assert count(nets[128]) - count(nets[64]) == 332_295 - 229_383 == 64 * 1_608
    assert count(nets[128]) == 304_455  # 98,624 conv + 204,928 fc + 903 heads


def test_a3c_q_methods_use_the_a3c_network_on_atari():
    """Mnih et al. 2016 use one network for all four methods: conv 16 8x8/4, conv 32 4x4/2, 256 units
    (4*64*16+16 + 16*16*32+32 + 2592*256+256 = 4,112 + 8,224 + 663,808), then a linear Q head of 6."""
    from distrl import config as C
    from distrl.architectures.a3c.builder import A3C
    for algo in ("onestep_q", "sarsa", "nstep_q"):
        net = A3C(C.build_config("a3c", "ALE/Pong-v5", overrides={"algo": algo, "actors": 2})).make_net()
        assert count(net) == 4_112 + 8_224 + 663_808 + 256 * 6 + 6


def test_a3c_activation_elu_swaps_every_relu_of_the_atari_torso_and_keeps_its_size():
    """net.activation=elu (issue 59: ReLU units of A3C's first convolution died on 2-core Pong) gives the
    same three layers with ELUs, for the policy-value net and the Q methods' net alike."""
    from torch import nn

    from distrl import config as C
    from distrl.architectures.a3c.builder import A3C
    for algo in ("a3c", "nstep_q"):
        relu, elu = (A3C(C.build_config("a3c", "ALE/Pong-v5", overrides={
            "algo": algo, "actors": 2, "net.activation": act})).make_net() for act in ("relu", "elu"))
        kinds = [[type(m) for m in net.modules() if isinstance(m, (nn.ReLU, nn.ELU))] for net in (relu, elu)]
        assert kinds == [[nn.ReLU] * 3, [nn.ELU] * 3]
        assert count(elu) == count(relu)
