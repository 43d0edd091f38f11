"""The cluster examples run README's cluster command, as far as can be checked without Slurm or Kubernetes:
the same `distrl train` flags (the address aside, which KubeRay gives a job as RAY_ADDRESS), a head with
no CPUs, and token authentication on every process of the cluster."""

import re
import shlex
import subprocess
from pathlib import Path

import yaml

from distrl.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SLURM = ROOT / "examples" / "slurm" / "apex-pong.sbatch"
RAYJOB = ROOT / "examples" / "kuberay" / "rayjob.yaml"


def readme_command() -> list[str]:
    section = (ROOT / "README.md").read_text().split("### A cluster of machines", 1)[1]
    block = re.search(r"```bash\n(distrl train .*?)\n```", section, flags=re.S).group(1)
    return shlex.split(block)


def train_flags(argv: list[str]) -> dict:
    """`distrl train ...` as the CLI parses it, without the address and its own variables."""
    args = vars(build_parser().parse_args(argv[1:]))
    return {k: v for k, v in args.items() if k != "address"}


def test_the_readme_command_parses():
    argv = readme_command()
    flags = train_flags(argv)
    assert flags["runtime"] == "ray" and flags["run_dir"].startswith("s3://")
    assert build_parser().parse_args(argv[1:]).address == "HEAD_IP:6379"


def test_the_slurm_script_runs_the_readme_command_on_a_head_with_no_cpus():
    text = SLURM.read_text()
    assert subprocess.run(["bash", "-n", str(SLURM)], capture_output=True).returncode == 0  # it parses
    line = next(line for line in text.splitlines() if line.startswith("distrl train"))
    assert train_flags(shlex.split(line)) == train_flags(readme_command())
    assert "export RAY_AUTH_MODE=token" in text and "RAY_AUTH_TOKEN=" in text
    assert re.search(r"ray start --head .*--num-cpus 0", text) and '--address "$address"' in line


def test_the_rayjob_runs_the_readme_command_with_a_token_on_every_pod():
    job = yaml.safe_load(RAYJOB.read_text())
    assert job["kind"] == "RayJob"
    assert train_flags(shlex.split(job["spec"]["entrypoint"])) == train_flags(readme_command())
    cluster = job["spec"]["rayClusterSpec"]
    assert cluster["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    pods = [cluster["headGroupSpec"]["template"]] + [g["template"] for g in cluster["workerGroupSpecs"]]
    for pod in pods:
        for container in pod["spec"]["containers"]:
            env = {e["name"]: e for e in container["env"]}
            assert env["RAY_AUTH_MODE"]["value"] == "token" and "secretKeyRef" in env["RAY_AUTH_TOKEN"]["valueFrom"]
