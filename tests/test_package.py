"""A clean wheel works: built from the checkout, installed into a fresh venv, its `distrl` command and
package are the wheel's own (not the checkout's), and it ships the LICENSE. Offline: nothing is downloaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import distrl

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str | Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120, **kwargs)


def test_clean_wheel_installs_and_runs(tmp_path):
    # Built from a copy of what a clean clone holds, so setuptools' build/ and egg-info stay out of the checkout.
    source, dist = tmp_path / "source", tmp_path / "dist"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                 "-w", dist, source)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("distrl-*.whl")

    venv = tmp_path / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", venv)
    assert made.returncode == 0, made.stderr
    python, command = venv / "bin" / "python", venv / "bin" / "distrl"
    # The dev venv's pip installs into the fresh venv (--python), so the fresh venv needs no pip of its own.
    installed = _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # The dependencies (torch, ray, gymnasium...) come from the dev venv: tests download nothing. A directory
    # added by a .pth file is not itself scanned for .pth files, so the dev venv's editable distrl (its
    # __editable__ .pth) is not picked up, and the fresh venv's own site-packages comes first on sys.path.
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    helped = _run(command, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "train" in helped.stdout

    version = _run(command, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"distrl {distrl.__version__}"

    where = _run(python, "-c", "import distrl; print(distrl.__file__)", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve().is_relative_to(venv.resolve()), where.stdout

    with zipfile.ZipFile(wheel) as zf:
        licenses = [n for n in zf.namelist() if n.split("/")[0].endswith(".dist-info") and n.endswith("/LICENSE")]
        assert licenses, zf.namelist()
        assert "MIT License" in zf.read(licenses[0]).decode()
