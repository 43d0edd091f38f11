"""Every Python snippet of README.md runs, as a user runs it: saved as a script, in a fresh directory
(its runs/ land there), with the installed distrl. The README cannot rot."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def test_the_readme_has_python_snippets():
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_readme_snippet_runs(tmp_path, index):
    script = tmp_path / f"snippet{index}.py"
    script.write_text(SNIPPETS[index])
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
