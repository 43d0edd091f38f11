"""The code's shape: no module reaches into another's underscore names (src, tests and bench alike),
so what one module keeps private can change without breaking another; the import contracts of
pyproject.toml hold (layers, Ray only in runtime/, no cycles); ruff's pyflakes, isort and bugbear
rules pass; mypy passes (every module checked, architectures/, components/ and runtime/ strictly)."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def private_imports(path: Path) -> list[str]:
    """`from distrl.x import _name` and `import distrl._x` / `from distrl._x import ...` in one file."""
    label, found = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "distrl":
            parts = node.module.split(".")
            names = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            if any(p.startswith("_") for p in parts) or names:
                found.append(f"{label}:{node.lineno}: from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "distrl" and any(p.startswith("_") for p in alias.name.split(".")):
                    found.append(f"{label}:{node.lineno}: import {alias.name}")
    return found


def python_files() -> list[Path]:
    files = [*(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    return [f for f in files if not any(part.startswith(".venv") for part in f.parts)]  # .gitignore's .venv, .venv-*


def test_no_module_imports_another_modules_underscore_names():
    files = python_files()
    assert len(files) > 50  # the walk found the code
    found = [hit for f in files for hit in private_imports(f)]
    assert not found, "\n".join(found)


def test_the_check_catches_a_private_import(tmp_path):
    bad = tmp_path / "probe.py"
    bad.write_text("from distrl.replay.table import _SLOT_MASK, SumTree\nimport distrl._hidden\nfrom numpy import _x\n")
    assert private_imports(bad) == [f"{bad}:1: from distrl.replay.table import _SLOT_MASK", f"{bad}:2: import distrl._hidden"]


def tool(name: str) -> str:
    """A console script of the test extra, from the interpreter running the tests."""
    return str(Path(sys.executable).with_name(name))


def test_import_contracts_hold():
    proc = subprocess.run([tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "3 kept, 0 broken" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_passes():
    proc = subprocess.run([tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_passes():
    """pyproject.toml's [tool.mypy]: the builders, the roles and the placements are checked against the
    Protocols of contracts.py, and every function there is typed."""
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_named_seeds_keep_the_layout_runs_were_seeded_with():
    from distrl.architectures.common import Seeds, spawn_seeds
    old = spawn_seeds(7, 2 * 3 + 3)  # Gorila's: 3 actors, 3 replays, evaluator, spare, net
    seeds = Seeds(7, 3, ("evaluator", "spare", "net"), blocks=("replay",))
    assert seeds.workers == old[:3] and seeds.blocks["replay"] == old[3:6]
    assert (seeds["evaluator"], seeds["net"]) == (old[6], old[8])
    assert len(set(old)) == len(old)  # every role draws its own stream


def state_io(path: Path) -> list[str]:
    """Calls that read or write a run's state as files: torch.save/torch.load, numpy's savez/load."""
    label, found = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in \
                {("torch", "save"), ("torch", "load"), ("np", "savez"), ("np", "savez_compressed"), ("np", "load")}:
            found.append(f"{label}:{node.lineno}: {node.func.value.id}.{node.func.attr}")
    return found


def test_only_checkpoint_py_reads_and_writes_state_files():
    """One place saves a checkpoint and restores it (issue 55): roles hand the driver their state as data."""
    src = ROOT / "src" / "distrl"
    found = [hit for f in src.rglob("*.py") if f.name != "checkpoint.py" for hit in state_io(f)]
    assert not found, "\n".join(found)
    assert state_io(src / "checkpoint.py")  # the check sees the calls it looks for

