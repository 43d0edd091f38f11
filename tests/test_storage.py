"""A run directory in an S3 bucket, for real: moto's S3 server on the loopback, credentials and endpoint
from the environment as on any S3. Training writes there (through a local mirror pushed after every
checkpoint and at the end); --resume, eval, load_policy, export and plot read from the bucket as a process
that has never seen the run."""

import json
import shutil
import urllib.request

import numpy as np
import pytest

import distrl
from distrl import storage
from distrl.cli import main
from distrl.errors import ConfigError

pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

URI = "s3://distrl-runs/cartpole/apex-seed1"


@pytest.fixture
def bucket(monkeypatch):
    import s3fs
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://{host}:{port}"}.items():
        monkeypatch.setenv(key, value)
    urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST"))  # no bucket left
    s3fs.S3FileSystem.clear_instance_cache()
    fresh_process()
    fs = s3fs.S3FileSystem()
    fs.mkdir("distrl-runs")
    yield fs
    server.stop()
    s3fs.S3FileSystem.clear_instance_cache()


def fresh_process():
    """What a new process knows of the bucket: nothing mirrored yet."""
    storage.forget_mirrors()


def listing(fs, folder):
    return sorted(p.rsplit("/", 1)[1] for p in fs.ls(f"distrl-runs/cartpole/apex-seed1/{folder}".rstrip("/")))


def test_train_resume_eval_and_load_policy_from_a_bucket(bucket, capsys, tmp_path):
    overrides = {"replay.min_size": 200, "checkpoint_every": 100, "eval_episodes": 2, "replay.checkpoint": True}
    first = distrl.train("apex", "CartPole-v1", max_frames=3000, seed=1, run_dir=URI, overrides=overrides)
    assert first["run_dir"] == URI and first["updates"] > 0
    top = listing(bucket, "")
    assert {"config.json", "metrics.csv", "evaluations.csv", "summary.json", "checkpoints", "tb"} <= set(top), top
    saved = listing(bucket, "checkpoints")
    ckpts = [n for n in saved if n.startswith("ckpt-")]
    assert 1 <= len(ckpts) <= 3  # the newest three, as on a local disk
    newest = ckpts[-1].removeprefix("ckpt-").removesuffix(".pt")
    assert [n for n in saved if n.startswith("replay-")] == [f"replay-{newest}-00.npz"]  # the newest set alone
    assert json.loads(bucket.cat(f"{URI}/summary.json"))["frames"] >= 3000

    fresh_process()
    capsys.readouterr()
    resumed = distrl.resume(URI, overrides={"max_frames": 4000})
    assert f"resuming {URI} from {ckpts[-1]}" in capsys.readouterr().out
    assert resumed["resumed_from"] == f"{URI}/checkpoints/{ckpts[-1]}" and resumed["updates"] > first["updates"]
    after = listing(bucket, "checkpoints")
    later = [n for n in after if n.startswith("ckpt-")]
    assert len(later) <= 3 and later[-1] > ckpts[-1]  # the mirror's rotation reached the bucket
    assert [n for n in after if n.startswith("replay-")] == [later[-1].replace("ckpt", "replay").replace(".pt", "-00.npz")]

    fresh_process()
    result = distrl.evaluate(URI, episodes=2)
    assert result["episodes"] == 2 and result["updates"] == resumed["updates"]
    fresh_process()  # an older checkpoint than the newest, which alone a fresh mirror pulls
    assert len(later) >= 2
    older = distrl.evaluate(URI, episodes=1, checkpoint=later[0])
    assert older["checkpoint"] == f"{URI}/checkpoints/{later[0]}" and older["updates"] == int(later[0][5:15])
    assert bucket.exists(f"{URI}/eval-{later[0][:-3]}.json")
    # the evaluations' mirrors held only what they pulled: the bucket keeps every checkpoint the run kept
    assert [n for n in listing(bucket, "checkpoints") if n.startswith("ckpt-")] == later
    fresh_process()
    policy = distrl.load_policy(URI)
    assert policy.updates == resumed["updates"] and policy.act(np.zeros(4, np.float32)) in (0, 1)
    fresh_process()
    assert main(["eval", URI, "--episodes", "1"]) == 0
    fresh_process()
    written = distrl.export(URI)
    assert written["file"] == f"{URI}/policy.pt" and bucket.exists(f"{URI}/policy.pt.json")
    fresh_process()
    assert main(["plot", URI, "--out", str(tmp_path / "curves.png")]) == 0
    assert (tmp_path / "curves.png").stat().st_size > 0


def test_a_bucket_path_is_checked_as_a_run_directory_is(bucket):
    overrides = {"replay.min_size": 100, "eval_episodes": 0}
    distrl.train("apex", "CartPole-v1", max_frames=300, run_dir=URI, overrides=overrides)
    fresh_process()
    with pytest.raises(ConfigError, match=f"run directory {URI} already holds a run: pass --resume {URI}"):
        distrl.train("apex", "CartPole-v1", max_frames=300, run_dir=URI, overrides=overrides)
    bucket.pipe("distrl-runs/theirs/metrics.csv", b"their data")
    fresh_process()
    with pytest.raises(ConfigError, match="s3://distrl-runs/theirs/metrics.csv exists and .* is not a distrl run"):
        distrl.train("apex", "CartPole-v1", max_frames=300, run_dir="s3://distrl-runs/theirs", overrides=overrides)
    assert bucket.cat("distrl-runs/theirs/metrics.csv") == b"their data"
    fresh_process()
    with pytest.raises(ConfigError, match="s3://distrl-runs/nothing: no distrl run there"):
        distrl.resume("s3://distrl-runs/nothing")
    fresh_process()
    distrl.train("apex", "CartPole-v1", max_frames=300, run_dir=URI, overrides=overrides, overwrite=True)
    assert json.loads(bucket.cat(f"{URI}/summary.json"))["frames"] >= 300


def test_a_mirror_is_deleted_once_the_bucket_holds_it_and_kept_while_it_does_not(bucket, capsys):
    store = storage.store_for(URI)
    (store.local / "metrics.csv").write_text("wall_s,frames\n1.0,100\n")
    folder = store.local.parent
    store.push()
    assert storage.store_for(URI) is store  # one mirror per URI in a process
    fresh_process()  # as at exit: the bucket holds every file, so the temp folder goes
    assert not folder.exists() and bucket.cat(f"{URI}/metrics.csv") == b"wall_s,frames\n1.0,100\n"

    store = storage.store_for(URI)
    (store.local / "checkpoints").mkdir()
    (store.local / "checkpoints" / "ckpt-0000000100.pt").write_bytes(b"not pushed")
    fresh_process()  # a push that never happened: the only copy stays, and is named
    assert (store.local / "checkpoints" / "ckpt-0000000100.pt").read_bytes() == b"not pushed"
    err = capsys.readouterr().err
    assert f"{store.local}, the local copy of {URI}, holds 1 file(s) the URI lacks" in err
    assert "checkpoints/ckpt-0000000100.pt" in err
    shutil.rmtree(store.local.parent)
