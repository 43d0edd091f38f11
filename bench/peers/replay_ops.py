"""Comparison 3: prioritized replay operations per second at 1M items, distrl against cpprb.

Run from the repository root: bench/peers/.venv/bin/python -m bench.peers.replay_ops [--items 1000000]
     [--rounds 2000] [--atari-items 100000] [--cores N] [--quick]

The operations are the learner's and the actors' (Ape-X): add 50 transitions, sample 512,
update 512 priorities; alpha 0.6, beta 0.4, every priority drawn uniformly from [0.01, 1.01).
Contenders, each in its own process pinned to the same --cores CPUs:

  distrl              distrl.replay.ReplayTable(capacity, PrioritizedSampler(0.6, 0.4), FifoRemover())
                      called in-process.
  distrl-ray          the same table as a Ray actor (ray.remote(ReplayTable), as distrl's ray runtime
                      runs it, but with its sampler and remover built inside the actor: see
                      _remote_table_cls), called from the driver: adds with up to 8 in flight (the actors'
                      ray.max_inflight_adds), sample then update each round (the learner waits for
                      the sample, not for the update).
  cpprb               cpprb.PrioritizedReplayBuffer(capacity, env_dict, alpha=0.6) in-process: a C++
                      ring buffer with segment trees; it overwrites the oldest item at capacity.

Index operations use CartPole-sized items (obs and next_obs 4 float32, action int64, reward and
discount/done float32: 48 B), so the figures are the sum-tree and bookkeeping cost, not copying.
Reported for each: adds/s while filling to --items (transitions/s), sample+update rounds/s at
--items, and mixed rounds/s at --items (add 50 + sample 512 + update 512; distrl trims its FIFO
every 100 rounds as Ape-X's learner does, cpprb overwrites).

distrl-ray also inserts Atari transitions (obs and next_obs 4x84x84 uint8 stacks of real Pong
frames from bench/replay.py) into a fresh table compressing obs and next_obs, 50 per add with 8 in
flight: transitions/s inserted (issue target 20,000/s). As distrl's actors do, the batches are
deflated by the sender (`distrl.replay.pack`, its cost per transition reported apart: on a cluster
it is spread over the actors); for comparison, the same raw batches deflated by the table itself.
Batches are put into Ray's object store once and cycled, so the figure is the replay actor's
ingestion (deserialize, file the bytes, index), not the sender's serialization.
Prints figures only and asserts nothing about times.
"""

from __future__ import annotations

import argparse
import os
import time

from bench.peers import common as K

ADD, SAMPLE, ALPHA, BETA, INFLIGHT = 50, 512, 0.6, 0.4, 8
FRAMES = ("obs", "next_obs")  # the fields distrl deflates for Atari
CONTENDERS = ("distrl", "cpprb", "distrl-ray")  # in-process pair first: Ray's teardown takes CPU for seconds


def _batches(rng, n: int = 64) -> list[dict]:
    from bench.replay import cartpole_batches
    return cartpole_batches(n, rng)


def _prio(rng, n: int):
    return rng.random(n) + 0.01


def _timed(fn, count: int) -> float:
    t = time.perf_counter()
    for i in range(count):
        fn(i)
    return time.perf_counter() - t


# ------------------------------------------------------------------ in-process contenders

def _distrl(items: int, rounds: int) -> dict:
    import numpy as np

    from distrl.replay import FifoRemover, PrioritizedSampler, ReplayTable

    rng = np.random.default_rng(0)
    batches = _batches(rng)
    table = ReplayTable(items, PrioritizedSampler(ALPHA, BETA), FifoRemover(), seed=0)
    fill_s = _timed(lambda i: table.add(batches[i % len(batches)], priorities=_prio(rng, ADD)), items // ADD)

    def round_(i):
        keys, _, _ = table.sample(SAMPLE)
        table.update_priorities(keys, _prio(rng, SAMPLE))

    table.sample(SAMPLE)  # first-call imports and caches
    su_s = _timed(round_, rounds)

    def mixed(i):
        table.add(batches[i % len(batches)], priorities=_prio(rng, ADD))
        round_(i)
        if i % 100 == 99:
            table.trim()

    mixed_s = _timed(mixed, rounds)
    return _rates(items, fill_s, rounds, su_s, mixed_s, size=len(table))


def _cpprb(items: int, rounds: int) -> dict:
    import numpy as np
    from cpprb import PrioritizedReplayBuffer

    rng = np.random.default_rng(0)
    batches = [{"obs": b["obs"], "next_obs": b["next_obs"], "act": b["action"], "rew": b["reward"],
                "done": 1.0 - b["discount"]} for b in _batches(rng)]
    rb = PrioritizedReplayBuffer(items, {"obs": {"shape": 4, "dtype": np.float32},
                                         "next_obs": {"shape": 4, "dtype": np.float32},
                                         "act": {"dtype": np.int64}, "rew": {"dtype": np.float32},
                                         "done": {"dtype": np.float32}}, alpha=ALPHA)
    fill_s = _timed(lambda i: rb.add(**batches[i % len(batches)], priorities=_prio(rng, ADD)), items // ADD)

    def round_(i):
        s = rb.sample(SAMPLE, beta=BETA)
        rb.update_priorities(s["indexes"], _prio(rng, SAMPLE))

    rb.sample(SAMPLE, beta=BETA)
    su_s = _timed(round_, rounds)

    def mixed(i):
        rb.add(**batches[i % len(batches)], priorities=_prio(rng, ADD))
        round_(i)

    mixed_s = _timed(mixed, rounds)
    return _rates(items, fill_s, rounds, su_s, mixed_s, size=int(rb.get_stored_size()))


def _rates(items: int, fill_s: float, rounds: int, su_s: float, mixed_s: float, **extra) -> dict:
    return {"items": items, "adds_per_s": items / fill_s, "add_call_us": fill_s / (items // ADD) * 1e6,
            "sample_update_rounds_per_s": rounds / su_s, "sample_update_ms": su_s / rounds * 1e3,
            "mixed_rounds_per_s": rounds / mixed_s, "mixed_ms": mixed_s / rounds * 1e3, **extra}


# ------------------------------------------------------------------ through Ray

def _bounded_adds(table, refs: list, calls: int) -> float:
    """`calls` adds of the batches in `refs` (cycled), at most INFLIGHT unanswered; seconds taken."""
    import ray
    inflight: list = []
    t = time.perf_counter()
    for i in range(calls):
        inflight.append(table.add.remote(refs[i % len(refs)]))
        if len(inflight) > INFLIGHT:
            _, inflight = ray.wait(inflight, num_returns=len(inflight) - INFLIGHT)
    ray.get(inflight)
    return time.perf_counter() - t


def _remote_table_cls():
    """ReplayTable as a Ray actor whose sampler and remover are built inside the actor.

    Built there as distrl's ReplayShard builds them (components/workers.py), not passed in: Ray hands
    numpy arrays inside constructor arguments to the actor read-only, and FifoRemover writes into
    its preallocated 2x64 queue in place, so with adds of <= 64 items every add raises after
    storing the items ("assignment destination is read-only") and the FIFO never learns of them."""
    from distrl.replay import FifoRemover, PrioritizedSampler, ReplayTable

    class ReplayTableActor(ReplayTable):
        def __init__(self, capacity: int, seed: int, compress: tuple = ()):
            super().__init__(capacity, PrioritizedSampler(ALPHA, BETA), FifoRemover(), seed, compress)

    return ReplayTableActor


def _distrl_ray(items: int, rounds: int, atari_items: int, pong_frames: int, cores: int) -> dict:
    K.protect_ray()
    import numpy as np
    import ray

    from distrl.runtime.ray import connect
    connect("", max(cores, 2))  # as distrl's runs start their local Ray (the table actor takes one CPU)
    try:
        rng = np.random.default_rng(0)
        remote = ray.remote(_remote_table_cls()).options(num_cpus=1)
        table = remote.remote(items, 0)
        refs = [ray.put(b) for b in _batches(rng)]
        ray.get(table.__len__.remote())  # the actor is up before the clock starts
        fill_s = _bounded_adds(table, refs, items // ADD)

        def round_(i):
            keys, _, _ = ray.get(table.sample.remote(SAMPLE))
            table.update_priorities.remote(keys, _prio(rng, SAMPLE))

        round_(0)
        su_s = _timed(round_, rounds)
        ray.get(table.__len__.remote())  # the last updates are applied

        def mixed(i):
            table.add.remote(refs[i % len(refs)])
            round_(i)
            if i % 100 == 99:
                table.trim.remote()

        mixed_s = _timed(mixed, rounds)
        size = ray.get(table.__len__.remote())
        out = _rates(items, fill_s, rounds, su_s, mixed_s, size=size)
        ray.kill(table)

        from bench.replay import pong_transitions  # real preprocessed Pong stacks
        t = time.perf_counter()
        data = pong_transitions(pong_frames)
        gen_s = time.perf_counter() - t
        from distrl.replay import pack
        chunks = [{k: v[i:i + ADD] for k, v in data.items()} for i in range(0, pong_frames - ADD + 1, ADD)]
        t = time.perf_counter()
        packed = [pack(c, FRAMES) for c in chunks]  # what distrl's actors do before sending (components/workers.py)
        pack_s = time.perf_counter() - t
        calls = max(1, atari_items // ADD)
        out.update({"atari_items": calls * ADD, "pong_distinct_transitions": pong_frames,
                    "pong_generation_s": round(gen_s, 1),
                    "atari_pack_us_per_item": pack_s / (len(chunks) * ADD) * 1e6})
        # deflated by the sender (distrl's runtime since 2026-11-23), then by the table itself (before)
        for suffix, batches in (("", packed), ("_table_deflates", chunks)):
            atari_refs = [ray.put(b) for b in batches]
            atari = remote.remote(max(atari_items, ADD), 0, FRAMES)
            ray.get(atari.__len__.remote())
            atari_s = _bounded_adds(atari, atari_refs, calls)
            stored = ray.get(atari.nbytes.remote()) / max(1, ray.get(atari.__len__.remote()))
            out.update({f"atari_inserts_per_s{suffix}": calls * ADD / atari_s,
                        f"atari_add_call_ms{suffix}": atari_s / calls * 1e3, f"atari_bytes_per_item{suffix}": stored})
            ray.kill(atari)
        return out
    finally:
        ray.shutdown()


# ------------------------------------------------------------------ parent

def child(args: argparse.Namespace) -> None:
    K.limit_cores(args.cores)
    run = {"distrl": lambda: _distrl(args.items, args.rounds), "cpprb": lambda: _cpprb(args.items, args.rounds),
           "distrl-ray": lambda: _distrl_ray(args.items, args.rounds, args.atari_items, args.pong_frames,
                                             args.cores)}[args.child]
    K.guarded(run)


def print_table(rows: list[dict]) -> None:
    print(f"\n{'contender':<11} {'items':>9} {'adds/s':>11} {'us/add(50)':>10} {'s+u rounds/s':>12} {'ms/round':>8} "
          f"{'mixed/s':>8}  status")
    for r in rows:
        print(f"{r['contender']:<11} {K.fmt(r.get('items')):>9} {K.fmt(r.get('adds_per_s')):>11} "
              f"{K.fmt(r.get('add_call_us'), 1):>10} {K.fmt(r.get('sample_update_rounds_per_s')):>12} "
              f"{K.fmt(r.get('sample_update_ms'), 3):>8} {K.fmt(r.get('mixed_rounds_per_s')):>8}  {r['status']}")
    by = {r["contender"]: r for r in rows if r["status"] == "ok"}
    if "distrl" in by and "cpprb" in by:
        a, b = by["distrl"], by["cpprb"]
        print(f"\ndistrl / cpprb, sample+update rounds/s (target >= 1): "
              f"{a['sample_update_rounds_per_s'] / b['sample_update_rounds_per_s']:.2f}; "
              f"adds/s: {a['adds_per_s'] / b['adds_per_s']:.2f}; mixed: {a['mixed_rounds_per_s'] / b['mixed_rounds_per_s']:.2f}")
    if "distrl-ray" in by and "distrl" in by:
        a, b = by["distrl-ray"], by["distrl"]
        print(f"distrl-ray / distrl in-process, sample+update rounds/s: "
              f"{a['sample_update_rounds_per_s'] / b['sample_update_rounds_per_s']:.2f}; "
              f"adds/s: {a['adds_per_s'] / b['adds_per_s']:.2f}")
    if "distrl-ray" in by:
        r = by["distrl-ray"]
        print(f"distrl-ray Atari inserts: {K.fmt(r['atari_inserts_per_s'])} transitions/s over {K.fmt(r['atari_items'])} "
              f"(target >= 20,000/s; {K.fmt(r['atari_add_call_ms'], 2)} ms per add of {ADD}, "
              f"{K.fmt(r['atari_bytes_per_item'])} B stored per transition), deflated by the sender at "
              f"{K.fmt(r.get('atari_pack_us_per_item'), 1)} us per transition")
        if "atari_inserts_per_s_table_deflates" in r:
            print(f"  with the table deflating instead (distrl before 2026-11-23): "
                  f"{K.fmt(r['atari_inserts_per_s_table_deflates'])} transitions/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--atari-items", type=int, default=100_000, help="Atari transitions inserted through Ray")
    ap.add_argument("--pong-frames", type=int, default=1000, help="distinct real Pong transitions, cycled")
    ap.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--quick", action="store_true", help="100k items, 200 rounds, 5,000 Atari transitions")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-speed-index", action="store_true", help="skip the speed index (about 10 s): for trial runs")
    ap.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if args.quick:
        args.items, args.rounds, args.atari_items, args.pong_frames = 100_000, 200, 5_000, 300

    rows = []
    for name in args.contenders:
        print(f"{name} ...", end=" ", flush=True)
        t = time.perf_counter()
        argv = ["--child", name, "--items", str(args.items), "--rounds", str(args.rounds), "--atari-items",
                str(args.atari_items), "--pong-frames", str(args.pong_frames), "--cores", str(args.cores)]
        out = K.run_child("bench.peers.replay_ops", argv, 3600, K.child_log("replay", name))
        rows.append({"contender": name, **out, "process_s": round(time.perf_counter() - t, 1)})
        print(out["status"] if out["status"] != "ok" else f"done in {rows[-1]['process_s']} s")
    print_table(rows)
    settings = {"items": args.items, "rounds": args.rounds, "atari_items": args.atari_items,
                "pong_frames": args.pong_frames, "cores": args.cores, "add": ADD, "sample": SAMPLE,
                "alpha": ALPHA, "beta": BETA, "inflight_adds": INFLIGHT, "quick": args.quick,
                "items_kind": "CartPole-sized (48 B) for the index operations; Atari stacks for distrl-ray's inserts"}
    K.finish("replay", rows, settings, not args.no_write,
             K.figures(rows, "status", "adds_per_s", "sample_update_rounds_per_s", "atari_inserts_per_s"), speed=not args.no_speed_index)


if __name__ == "__main__":
    main()
