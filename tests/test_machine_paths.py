"""No absolute path of the machine that built them in what is published or committed
(issue 32 item 7): the notebooks a reader downloads from the book, a stored run's files,
a sweep point's notebooks, a run report's page."""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attention_geometry.book import cli
from attention_geometry.book.execute import ChapterFailed, execute_chapter
from attention_geometry.book.notebooks import strip_machine_paths
from attention_geometry.book.paper import run_paper
from attention_geometry.book.stage import stage_book

from conftest import ROOT, chapter_text, make_project, toy_chapter

# A chapter that prints where it runs and warns from the library, from a cell
# (the warning names the kernel's temporary cell file) and from site-packages.
CHAPTER = chapter_text(
    "Toy", "n = 3",
    """
    import os, sys, warnings, lib_w
    from myst_nb import glue
    lib_w.warn()
    warnings.warn("from a cell")
    warnings.warn_explicit("from an installed package", UserWarning, os.path.join(
        __import__("sysconfig").get_paths()["purelib"], "pkg", "mod.py"), 7)
    print("folder:", os.getcwd())
    print("temporary:", os.path.join(__import__("tempfile").gettempdir(), "x"))
    glue("twice", n * 2, display=False)
    assert n < 50, "n too large"
    """)
LIBRARY = {"lib_w.py": "import warnings\n\ndef warn():\n    warnings.warn('from the library')\n"}


def machine_paths_in(text: str, root: Path) -> list[str]:
    """The absolute paths of this machine in ``text``: the project, the temporary folder,
    the home folder, Python's installation."""
    prefixes = {str(root), str(root.resolve()), tempfile.gettempdir() + "/", str(Path.home()) + "/",
                sys.prefix + "/", sys.base_prefix + "/"}
    return sorted({m.group(0) for p in prefixes for m in re.finditer(re.escape(p) + r"\S{0,40}", text)})


def no_machine_paths(folder: Path, root: Path) -> dict[str, list[str]]:
    return {str(p.relative_to(folder)): found for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix in (".ipynb", ".json", ".csv", ".html", ".txt")
            and (found := machine_paths_in(p.read_text(errors="replace"), root))}


@pytest.fixture
def toy(tmp_path):
    return make_project(tmp_path, {"toy": (CHAPTER, toy_chapter("toy", presets={"paper": {"n": 4}}))},
                        library=LIBRARY)


def test_the_books_downloadable_notebooks_hold_no_machine_path(toy):
    assert cli.main(["book", "--jobs", "1"], project=toy) == 0
    executed = (toy.executed / "toy.ipynb").read_text()
    assert "from the library" in executed and "site-packages/pkg/mod.py:7" in executed
    assert "src/lib_w.py:4" in executed and "folder: book" in executed and "temporary: tmp/x" in executed
    assert json.loads(executed)["metadata"]["papermill"]["input_path"] == "book/toy.md"
    downloads = list((toy.html / "_sources").rglob("*.ipynb"))
    assert downloads
    assert no_machine_paths(toy.html, toy.root) == {}
    assert no_machine_paths(toy.executed, toy.root) == {}


def test_a_notebook_executed_before_paths_were_stripped_is_stripped_when_staged(toy):
    assert cli.main(["book", "--jobs", "1"], project=toy) == 0
    path = toy.executed / "toy.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][-1]["outputs"].append({"name": "stderr", "output_type": "stream",
                                       "text": f"{toy.root}/src/lib_w.py:4: UserWarning\n"})
    path.write_text(json.dumps(nb))
    stage_book(toy)
    staged = (toy.stage / "book" / "toy.ipynb").read_text()
    assert "src/lib_w.py:4: UserWarning" in staged and machine_paths_in(staged, toy.root) == []


def test_a_failed_notebook_holds_no_machine_path(toy):
    out = toy.root / "out" / "toy.ipynb"
    with pytest.raises(ChapterFailed):
        execute_chapter(toy, toy.chapter("toy"), out, {"n": 60})
    failed = out.with_suffix(".failed.ipynb").read_text()
    assert "n too large" in failed and machine_paths_in(failed, toy.root) == []
    assert "_ag_src" not in failed  # the record cell, which names src/, is gone


def test_a_stored_paper_run_holds_no_machine_path(toy):
    run_paper(toy, toy.chapter("toy"), device="cpu", progress=False, report=lambda line: None)
    folder = toy.results / "toy" / "paper"
    assert (folder / "toy.ipynb").exists() and (folder / "provenance.json").exists()
    assert no_machine_paths(folder, toy.root) == {}


def test_strip_machine_paths_keeps_sources_images_and_other_paths():
    root = Path("/home/reader/clone")
    nb = {"cells": [{"source": "open('/home/reader/clone/x')", "outputs": [
        {"output_type": "stream", "text": ["/home/reader/clone/src/a.py:3: W\n", "see /home/reader/notes\n"]},
        {"output_type": "display_data", "data": {"image/png": "AB/home/reader/clone/CD",
                                                    "text/plain": "'/home/reader/clone'"}},
        {"output_type": "error", "traceback": [f"File {tempfile.gettempdir()}/ipykernel_1/2.py:3"]},
    ]}], "metadata": {"note": "/usr/share/doc and a/tmp/b and /tmpfoo"}}
    nb["cells"][0]["outputs"][0]["text"][1] = f"see {Path.home()}/notes\n"
    assert strip_machine_paths(nb, root)
    out = nb["cells"][0]["outputs"]
    assert out[0]["text"] == ["src/a.py:3: W\n", "see ~/notes\n"]
    assert out[1]["data"] == {"image/png": "AB/home/reader/clone/CD", "text/plain": "'.'"}
    assert out[2]["traceback"] == ["File tmp/ipykernel_1/2.py:3"]
    assert nb["cells"][0]["source"] == "open('/home/reader/clone/x')"  # the chapter's own code, as written
    assert nb["metadata"]["note"] == "/usr/share/doc and a/tmp/b and /tmpfoo"
    assert not strip_machine_paths(nb, root)


# Absolute paths a committed file may hold from the machine that wrote it (any machine)
ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:home|Users|root|tmp|var|private|work|mnt|opt|scratch|srv)/[\w.+-]+/")

def test_no_committed_result_holds_a_machine_path():
    listed = subprocess.run(["git", "ls-files", "-z", "results"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    with_paths = {rel for rel in listed.stdout.split("\0") if rel and Path(rel).suffix in (".ipynb", ".json", ".csv")
                  and ABSOLUTE.search((ROOT / rel).read_text(errors="replace"))}
    assert not with_paths, sorted(with_paths)
