"""Bad input: exit code 2, one line naming the problem and the fix, no traceback, nothing written."""

import json
import os
import subprocess
import sys

import pytest

from distrl.cli import main
from distrl.errors import ConfigError


def run_cli(capsys, *args):
    code = main(list(args))
    err = capsys.readouterr().err.strip()
    return code, err


CASES = [
    (["train", "dqnx", "--env", "CartPole-v1"], "unknown architecture 'dqnx'"),
    (["train", "apex", "--env", "NoSuchEnv-v9"], "unknown env id 'NoSuchEnv-v9'"),
    (["train", "apex", "--env", "CartPole-v1", "--actors", "-2"], "invalid value -2 for actors"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "learner.gamma=1.5"], "learner.gamma"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "learner.lr=fast"], "bad value 'fast' for learner.lr"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "learner.nope=1"], "unknown config key 'learner.nope'"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "noequals"], "--set expects key=value"),
    (["train", "apex", "--env", "CartPole-v1", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["train", "apex", "--env", "CartPole-v1", "--preset", "nope"], "unknown preset 'nope'"),
    (["train", "apex", "--env", "CartPole-v1", "--runtime", "mpi"], "invalid value 'mpi' for runtime"),
    (["train", "apex", "--env", "CartPole-v1", "--max-frames", "ten"], "invalid int value"),
    (["train", "apex"], "missing --env"),
    (["train", "apex", "--env", "Pendulum-v1"], "apex needs a discrete action space"),
    (["train", "gorila", "--env", "Pendulum-v1"], "gorila needs a discrete action space"),
    (["train", "gorila", "--env", "CartPole-v1", "--set", "ps.shards=0"], "invalid value 0 for ps.shards"),
    (["train", "gorila", "--env", "CartPole-v1", "--set", "ps.shards=1000000"], "cannot split"),
    (["train", "gorila", "--env", "CartPole-v1", "--set", "replay.mode=both"], "invalid value 'both' for replay.mode"),
    (["train", "gorila", "--env", "CartPole-v1", "--set", "replay.alpha=0.6"], "unknown config key 'replay.alpha'"),
    (["train", "apex", "--env", "CartPole-v1", "--preset", "apex-atari", "--set", "replay.beta=2"],
     "replay.beta"),
    (["train", "apex-dpg", "--env", "ALE/Pong-v5"], "apex-dpg needs a continuous (Box) action space"),
    (["train", "apex-dpg", "--env", "CartPole-v1"], "apex-dpg needs a continuous (Box) action space"),
    (["train", "apex-dpg", "--env", "Pendulum-v1", "--set", "replay.alpha_evict=0.4"], "replay.alpha_evict"),
    (["train", "apex-dpg", "--env", "Pendulum-v1", "--set", "net.critic_hidden=400"], "net.critic_hidden"),
    (["train", "ba3c", "--env", "Pendulum-v1"], "ba3c needs a discrete action space"),
    (["train", "ba3c", "--env", "CartPole-v1", "--set", "sync.fraction=1.5"], "invalid value 1.5 for sync.fraction"),
    (["train", "ba3c", "--env", "CartPole-v1", "--set", "sync.mode=semi"], "invalid value 'semi' for sync.mode"),
    (["train", "a3c", "--env", "Pendulum-v1", "--set", "algo=sarsa"], "algo=sarsa needs discrete actions"),
    (["train", "a3c", "--env", "CartPole-v1", "--set", "rl.reward_scale=0"], "invalid value 0.0 for rl.reward_scale"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "nodes=actors=node-b"], "invalid value 'actors=node-b' for nodes"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "replay.checkpoint=maybe"], "for replay.checkpoint"),
    (["train", "apex", "--env", "CartPole-v1", "--set", "ray.niceness=evaluator=25"], "'evaluator=25' for ray.niceness"),
    (["train", "apex", "--env", "CartPole-v1", "--chaos", "-1", "--runtime", "ray"], "give a positive number of seconds"),
]


@pytest.mark.parametrize("argv,needle", CASES, ids=[" ".join(c[0][1:4]) for c in CASES])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, argv, needle):
    code = main([*argv, *(["--run-dir", str(tmp_path / "run")] if len(argv) > 2 else [])])
    out, err = capsys.readouterr()
    err = err.strip()
    assert code == 2 and out == ""  # only the error: no preset line before it
    assert len(err.splitlines()) == 1, err
    assert needle in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing was written for a refused run


def test_existing_run_dir_is_refused_and_untouched(capsys, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"architecture": "apex", "env": "CartPole-v1"}))
    (run / "metrics.csv").write_text("precious\n")
    code, err = run_cli(capsys, "train", "apex", "--env", "CartPole-v1", "--run-dir", str(run))
    assert code == 2 and "already holds a run" in err and "--resume" in err
    assert (run / "metrics.csv").read_text() == "precious\n"


def test_resume_of_a_directory_without_a_run(capsys, tmp_path):
    code, err = run_cli(capsys, "train", "apex", "--resume", str(tmp_path))
    assert code == 2 and "no distrl run there" in err


def test_subprocess_has_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "distrl.cli", "train", "apex", "--env", "Nope-v0"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.startswith("distrl")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr


def test_a_refused_atari_id_prints_no_emulator_banner(tmp_path):
    """apex-dpg knows an Atari id's actions are discrete without making the env, whose emulator would
    print its banner to the process's stderr before the error."""
    proc = subprocess.run([sys.executable, "-m", "distrl.cli", "train", "apex-dpg", "--env", "ALE/Pong-v5",
                           "--run-dir", str(tmp_path / "run")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("distrl: error: apex-dpg needs a continuous (Box) action space"), proc.stderr


def test_python_dash_m_distrl_is_the_command():
    proc = subprocess.run([sys.executable, "-m", "distrl", "train", "apex", "--env", "Nope-v0"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 2 and "Nope-v0" in proc.stderr and "Traceback" not in proc.stderr


def test_presets_lists_sources(capsys):
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert "apex-atari" in out and "Horgan et al. 2018" in out and "apex-cartpole" in out


def test_more_role_processes_than_the_cores_hold_is_refused_before_ray_starts(tmp_path):
    """--actors 100000 once started over a hundred Ray workers on 2 cores (load 82) and trained nothing."""
    proc = subprocess.run([sys.executable, "-m", "distrl.cli", "train", "apex", "--env", "CartPole-v1", "--runtime",
                           "ray", "--actors", "100000", "--run-dir", str(tmp_path / "run")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    cpus = len(os.sched_getaffinity(0))
    # apex: the actors, a learner, a replay and an evaluator; 4 role processes per CPU on a local Ray
    assert line == (f"distrl: error: --actors 100000 needs 100003 Ray processes (one per role instance), but this "
                    f"machine's {cpus} CPUs hold {4 * cpus} role processes (4 per CPU): use --actors "
                    f"{4 * cpus - 3} or fewer, or join a larger cluster with --address"), line
    assert not (tmp_path / "run").exists()


def test_role_room_on_a_joined_cluster_is_one_cpu_each():
    from distrl.errors import ConfigError
    from distrl.runtime.ray.placement import check_room
    check_room(7, 2, 7, 1, "the Ray cluster")  # exactly full: accepted
    with pytest.raises(ConfigError, match=r"--actors 3 needs 8 Ray processes .* the Ray cluster's 7 CPUs hold 7 "
                                          r"role processes \(one each\): use --actors 2 or fewer"):
        check_room(8, 3, 7, 1, "the Ray cluster")
    with pytest.raises(ConfigError, match="its other roles alone do not fit"):
        check_room(9, 1, 2, 4, "this machine")


@pytest.mark.parametrize("missing, said", [
    ("ray", "distrl: error: --runtime ray needs Ray, a dependency of distrl: pip install 'ray>=2.40'"),
    ("lz4", "distrl: error: --runtime ray needs the module lz4, a dependency of distrl that this environment lacks"),
])
def test_a_missing_module_of_the_ray_runtime_is_named(tmp_path, missing, said):
    """Only a missing Ray is reported as one; another module the runtime imports (lz4, a dependency an
    environment made before it was added lacks) is named as itself."""
    code = (f"import sys; sys.modules[{missing!r}] = None; sys.modules[{missing + '.block'!r}] = None; "
            "from distrl.cli import main; sys.exit(main(['train', 'apex', '--env', 'CartPole-v1', '--runtime', "
            f"'ray', '--max-frames', '100', '--quiet', '--run-dir', {str(tmp_path / 'run')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith(said)
    assert "Traceback" not in proc.stderr


def test_ray_niceness_for_a_role_the_run_lacks_fails_before_anything_starts():
    pytest.importorskip("ray")
    from distrl import config as C
    from distrl.architectures.base import Role
    from distrl.runtime.ray.placement import RayPlacement
    cfg = C.build_config("apex", "CartPole-v1", overrides={"runtime": "ray", "ray.niceness": "evaluators=19"})
    roles = [Role("actors", 2, object), Role("evaluator", 1, object)]
    expected = r"ray.niceness='evaluators=19' names evaluators, not a role of apex \(its roles: actors, evaluator\)"
    with pytest.raises(ConfigError, match=expected):
        RayPlacement.check(roles, cfg)
