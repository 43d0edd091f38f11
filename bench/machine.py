"""What every bench records about where it ran: `machine_info()` for the results files, `versions()` for
the one line a printed table starts with. Both read package metadata and /proc, never import the
libraries themselves, so they cost nothing before Ray or torch start."""

from __future__ import annotations

import importlib.metadata as md
import os
import platform
from pathlib import Path

from bench.runs import ROOT

LIBRARIES = ("distrl", "torch", "numpy", "gymnasium", "ale-py", "ray", "stable-baselines3", "cpprb")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def commit() -> str | None:
    """The checkout's commit, read from .git without running git (the working tree may differ)."""
    try:
        git = ROOT / ".git"
        if git.is_file():  # a worktree (`git worktree add`): its own HEAD, the refs of the repository's
            git = Path(git.read_text().split("gitdir:", 1)[1].strip())
        common = git / (git / "commondir").read_text().strip() if (git / "commondir").exists() else git
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (common / ref).exists():
            return (common / ref).read_text().strip()
        for line in (common / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return None


def library_versions() -> dict[str, str | None]:
    """Each of LIBRARIES' installed version, None where it is not installed."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = None
    return versions


def machine_info() -> dict:
    return {"cpu_count": os.cpu_count(), "cpus_allowed": len(os.sched_getaffinity(0)), "cpu_model": cpu_model(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "python": platform.python_version(), "platform": platform.platform(), "versions": library_versions(),
            "commit": commit()}


def versions(info: dict | None = None) -> str:
    """One line: Python, every library installed here and the commit, e.g. "Python 3.11.7, distrl 0.1.0,
    torch 2.13.0+cpu, numpy 2.4.6, gymnasium 1.2.2, ale-py 0.12.1, ray 2.60.0, commit 83ccfa8"."""
    info = info or machine_info()
    parts = [f"Python {info['python']}", *(f"{k} {v}" for k, v in info["versions"].items() if v)]
    return ", ".join(parts + ([f"commit {info['commit'][:7]}"] if info.get("commit") else []))


def gpu_name() -> str:
    """The first CUDA device torch sees, or "no GPU" (this one imports torch)."""
    import torch
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
