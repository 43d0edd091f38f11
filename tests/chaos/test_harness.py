"""The pieces the chaos runs rely on: the state digest that proves a restore exact, and the restart
count that must equal the kills."""

import torch

from distrl.checkpoint import state_digest


def _learner_state():
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    return {"online": net.state_dict(), "optimizer": opt.state_dict(), "updates": 7}


def test_digest_sees_every_tensor_counter_and_dtype():
    state = _learner_state()
    same = {"updates": 7, "optimizer": state["optimizer"],
            "online": {k: v.clone() for k, v in state["online"].items()}}  # other key order, copies
    assert state_digest(state) == state_digest(same)
    bumped = dict(state, updates=8)
    assert state_digest(bumped) != state_digest(state)
    as_double = dict(state, online={k: v.double() for k, v in state["online"].items()})
    assert state_digest(as_double) != state_digest(state)
    nudged = {**state, "optimizer": {**state["optimizer"], "state": {
        0: {**state["optimizer"]["state"][0], "exp_avg": state["optimizer"]["state"][0]["exp_avg"] + 1e-7}}}}
    assert state_digest(nudged) != state_digest(state)


def test_restarts_are_counted_once_per_death():
    from distrl.runtime.driver import count_restart
    faults, pids = {"restarts": 0}, {}
    for i, pid in ((0, 100), (1, 200), (0, 100)):  # first reports: nothing died
        count_restart(pids, i, pid, faults, "restarts")
    assert faults["restarts"] == 0
    count_restart(pids, 0, None, faults, "restarts")  # its running call failed: a death
    count_restart(pids, 0, None, faults, "restarts")  # a second call sent before Ray noticed: same death
    count_restart(pids, 0, 101, faults, "restarts")  # the new process reports
    assert faults["restarts"] == 1
    count_restart(pids, 1, 201, faults, "restarts")  # killed between calls: no failed call, new pid
    assert faults["restarts"] == 2
