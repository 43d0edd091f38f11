"""The documentation site builds with warnings as errors (mkdocs.yml: strict), and holds what a reader
looks for: a page per architecture, the cluster guide, the results index and the API reference made
from the docstrings."""

import subprocess
import sys

from bench.runs import ROOT

PAGES = sorted(p.stem for p in (ROOT / "docs" / "architectures").glob("*.md"))


def test_the_site_builds_strict_with_every_page(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    assert len(PAGES) >= 7  # the seven systems of the papers
    for name in PAGES:
        page = (site / "architectures" / name / "index.html").read_text()
        assert "<table>" in page, f"{name}: no rendered table"
    assert "A cluster of machines" in (site / "cluster" / "index.html").read_text()
    assert "<table>" in (site / "results" / "index.html").read_text()
    api = (site / "api" / "index.html").read_text()
    assert "distrl.api.train" in api and "distrl.api.load_policy" in api  # made from the docstrings
