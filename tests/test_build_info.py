"""The build's commit and date are text: in the reproducibility appendix (HTML and the
LaTeX of the PDF) and in every page's footer, with no JavaScript to fill them."""

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attention_geometry.book.sphinx_pages import build_line, fill_footer

ROOT = Path(__file__).resolve().parents[1]
INFO = {"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": False, "date": "2026-05-01 12:00 UTC"}
FOOTER = '<p>Text: CC BY 4.0. <span id="ag-build">Commit and build date: see the reproducibility appendix.</span></p>'


def test_build_line_states_the_commit_and_the_date():
    assert build_line(INFO) == f"Built 2026-05-01 12:00 UTC from commit {INFO['commit']}."
    assert build_line({**INFO, "dirty": True}, short=True) == (
        "Built 2026-05-01 12:00 UTC from commit 0123456789 with uncommitted changes.")
    assert build_line({"commit": None, "dirty": None, "date": INFO["date"]}) == (
        "Built 2026-05-01 12:00 UTC (not from a git checkout).")


def test_the_docstring_examples_run():
    import doctest

    from attention_geometry.book import sphinx_pages

    result = doctest.testmod(sphinx_pages)
    assert result.attempted >= 2 and result.failed == 0


def test_the_footer_is_filled_as_text_with_the_commit_linked_to_the_appendix():
    page = fill_footer(f"<html>{FOOTER}</html>", INFO, "../book/appendix_reproducibility.html")
    assert ('<span id="ag-build">Built 2026-05-01 12:00 UTC from commit '
            '<a href="../book/appendix_reproducibility.html">0123456789</a>.</span>') in page
    assert "see the reproducibility appendix" not in page
    assert fill_footer(page, {**INFO, "date": "2026-05-02 08:00 UTC"}).count("2026-05-02") == 1  # a later build
    assert fill_footer("<html>no footer</html>", INFO) == "<html>no footer</html>"


def _git(folder: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C", str(folder), *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("builder", ["html", "latex"])
def test_the_directive_writes_the_build_line_into_the_page(tmp_path, builder):
    """``{ag-build-info}`` in a MyST page: the commit of the repository and a date, as text of
    the page in HTML and in the LaTeX source of a PDF; the page is read again on a second
    build with nothing changed (so its date is that build's)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser", "attention_geometry.book.sphinx_pages"]\n'
                                 'latex_documents = [("index", "toy.tex", "Toy", "T", "manual")]\n')
    (src / "index.md").write_text("# Toy\n\n## This build\n\n```{ag-build-info}\n```\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "toy")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "sphinx", "-q", "-W", "-b", builder, str(src), str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = (out / ("index.html" if builder == "html" else "toy.tex")).read_text().replace(r"\sphinxhyphen{}", "-")
    line = re.search(r"Built (\d{4}-\d\d-\d\d \d\d:\d\d UTC) from commit ([0-9a-f]{40})\.", html.unescape(page))
    assert line and line.group(2) == commit, page[-3000:]
    if builder == "html":
        again = subprocess.run([c for c in cmd if c != "-q"], capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert "0 added, 1 changed, 0 removed" in again.stdout, again.stdout


@pytest.mark.book
def test_the_built_appendix_states_the_commit_and_the_date_of_the_build(built_book):
    head = _git(ROOT, "rev-parse", "HEAD")
    page = (built_book / "book" / "appendix_reproducibility.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert re.search(rf"Built \d{{4}}-\d\d-\d\d \d\d:\d\d UTC from commit {head}\b", text), (
        f"the reproducibility appendix does not state HEAD ({head[:10]}) and a date: rebuild with `make book`")
    footer = re.search(r'<span id="ag-build">(.*?)</span>', page, re.S).group(1)
    assert head[:10] in footer and re.search(r"\d{4}-\d\d-\d\d", footer), footer
