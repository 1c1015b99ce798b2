"""Lay the book out for Jupyter Book and build the HTML.

:func:`stage_book` writes ``_build/stage/``: the configuration, every page of
``_toc.yml`` (a chapter as its executed notebook, the generated appendices as
Markdown, the preface with its section "What the book finds" written from the
ledger, :func:`~.findings.fill_generated`) and the files under ``book/`` that pages use (images).
A chapter's notebook, which readers download, is staged without this machine's
paths (:func:`~.notebooks.strip_machine_paths`). A file is rewritten only when its bytes change, so Sphinx's incremental build stays
incremental; anything else in the stage (a page removed from the toc) is
deleted.

:func:`build_html` runs Jupyter Book on the stage with its own execution off
and warnings as errors. It is skipped when neither the stage nor the commit (which
the pages state) has changed since the last successful build. After a build, the
HTML of pages that left the toc is removed, so the built book holds exactly the toc's pages.
"""

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Callable

from .appendices import caveats_page, errata_page, parameters_page, reproducibility_page
from .findings import PREFACE_MARKER, fill_generated
from .ledger import ConflictingVerdicts, book_ledger, check_one_verdict, ledger_page, write_ledger_files
from .notebooks import has_machine_paths, strip_machine_paths
from .files import write_bytes_atomic, write_json_atomic, write_text_atomic
from .project import Project
from .provenance import tree_state
from .toc import GENERATED_PAGES, book_chapters, chapter_for_source, has_code, page_source, toc_pages

__all__ = ["stage_book", "build_html", "build_pdf", "run_jupyter_book", "page_assets", "HtmlBuildFailed", "CONFIG_FILES"]

CONFIG_FILES = ("_config.yml", "_toc.yml", "references.bib")
STAMP = ".attention-geometry-stamp"  # in _build/html: the stage's digest at the last build
PAGES = ".attention-geometry-pages.json"  # in _build/html: the toc's pages at the last build


class HtmlBuildFailed(RuntimeError):
    """Jupyter Book exited with an error (its warnings were printed above)."""


def _sync(data: bytes, dst: Path) -> None:
    """Write ``data`` to ``dst`` only if the bytes differ (keeps Sphinx incremental)."""
    if dst.exists() and dst.read_bytes() == data:
        return
    write_bytes_atomic(dst, data)


def _published(notebook: bytes, project: Project) -> bytes:
    """An executed notebook as the book offers it for download: without this machine's
    paths (a notebook executed before :mod:`.execute` stripped them has them stripped here)."""
    text = notebook.decode()
    if not has_machine_paths(text, project.root):
        return notebook
    nb = json.loads(text)
    strip_machine_paths(nb, project.root)
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()


def _generated(kind: str, project: Project) -> str:
    chapters = book_chapters(project)
    if kind == "parameters":
        return parameters_page(chapters, project)
    if kind == "errata":
        return errata_page(chapters, project)
    if kind == "caveats":
        return caveats_page(chapters, project)
    if kind == "claims":
        return ledger_page(book_ledger(project=project) or [])
    return reproducibility_page(chapters, project)


def page_assets(project: Project, pages: list[str]) -> list[tuple[Path, str]]:
    """What the pages use (images, data) from the folders of the pages, not the root's:
    ``(file, path relative to the root)``."""
    out = []
    for folder in sorted({(project.root / p).parent for p in pages} - {project.root}):
        for asset in sorted(folder.rglob("*")):
            if asset.is_file() and asset.suffix not in (".md", ".ipynb") and ".ipynb_checkpoints" not in asset.parts:
                out.append((asset, asset.relative_to(project.root).as_posix()))
    return out


def stage_book(project: Project) -> Path:
    """Lay out the book in ``_build/stage``; return that folder."""
    stage = project.stage
    wanted: set[Path] = set()

    def put(data: bytes, rel: str) -> None:
        _sync(data, stage / rel)
        wanted.add(stage / rel)

    for name in CONFIG_FILES:
        if (project.root / name).exists():
            put((project.root / name).read_bytes(), name)
    pages = toc_pages(project)
    for page in pages:
        if page in GENERATED_PAGES:
            put(_generated(GENERATED_PAGES[page], project).encode(), f"{page}.md")
            continue
        src = page_source(project, page)
        if has_code(src):
            chapter = chapter_for_source(project, src)
            executed = project.executed / f"{chapter.stem}.ipynb"
            if not executed.exists():
                raise FileNotFoundError(f"{chapter.name}: no executed notebook at {executed}")
            put(_published(executed.read_bytes(), project), f"{page}.ipynb")
        else:  # a prose page; the preface's "What the book finds" is written from the ledger here
            text = src.read_text()
            if PREFACE_MARKER in text:
                text = fill_generated(text, book_ledger(project=project))
            put(text.encode(), f"{page}.md")
    for asset, rel in page_assets(project, pages):
        put(asset.read_bytes(), rel)
    if stage.exists():
        for old in sorted(stage.rglob("*"), reverse=True):  # pages that left the toc, old assets
            if old.is_file() and old not in wanted:
                old.unlink()
            elif old.is_dir() and not any(old.iterdir()):
                old.rmdir()
    return stage


def _stage_digest(stage: Path) -> str:
    h = hashlib.sha256()
    h.update(f"jupyter-book {importlib.metadata.version('jupyter-book')}\n".encode())
    for path in sorted(p for p in stage.rglob("*") if p.is_file()):
        h.update(path.relative_to(stage).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _prune_removed_pages(project: Project, pages: list[str]) -> list[Path]:
    """Delete the built HTML of pages no longer in the toc; return what was deleted."""
    html = project.html
    current = set(pages)
    previous, removed = set(), []
    if (html / PAGES).exists():
        try:
            previous = set(json.loads((html / PAGES).read_text()))
        except ValueError:
            previous = set()
    # pages built before; and any page in a folder that holds toc pages (not the root,
    # where Sphinx puts its own pages: index, search, genindex)
    folders = {Path(p).parent for p in pages if Path(p).parent != Path(".")}
    candidates = previous | {
        f.relative_to(html).with_suffix("").as_posix()
        for folder in folders if (html / folder).is_dir() for f in (html / folder).glob("*.html")
    }
    for page in sorted(candidates - current):
        for path in [html / f"{page}.html", *(html / "_sources").glob(f"{page}.*")]:
            if path.is_file():
                path.unlink()
                removed.append(path)
    write_json_atomic(html / PAGES, sorted(current))
    return removed


# Jupyter Book's own `jb build` path (its configuration reading, external toc and
# Sphinx call), with any output folder: the book and every run report go through it.
# Ctrl-C reaches Jupyter Book too (one process group): it leaves at once, in silence, and the
# command that started it says "interrupted" (its traceback would follow the word otherwise)
_QUIET_ON_INTERRUPT = """
import os, signal
signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(130))
"""

_JUPYTER_BOOK = _QUIET_ON_INTERRUPT + """
import sys
from pathlib import Path
from jupyter_book.sphinx import build_sphinx
stage, out, doctrees, builder, strict = sys.argv[1:6]
result = build_sphinx(Path(stage), Path(out), noconfig=True, path_config=str(Path(stage) / "_config.yml"),
                      confoverrides={"external_toc_path": (Path(stage) / "_toc.yml").as_posix(),
                                     "latex_individualpages": False},
                      doctreedir=doctrees, builder=builder, warningiserror=strict == "1", keep_going=True,
                      quiet=True)
sys.exit(result if isinstance(result, int) else 1)
"""


def run_jupyter_book(project: Project, stage: Path, out: Path, doctrees: Path, *, builder: str = "html",
                     strict: bool = True) -> subprocess.CompletedProcess:
    """Build ``stage`` (a folder with ``_config.yml`` and ``_toc.yml``) into ``out`` with
    Jupyter Book, warnings as errors if ``strict``. Its warnings go to stderr; its
    status lines are returned (``stdout``), to show only on failure."""
    env = {**os.environ, "PYTHONPATH": project.pythonpath()}
    cmd = [sys.executable, "-c", _JUPYTER_BOOK, str(stage), str(out), str(doctrees), builder,
           "1" if strict else "0"]
    return subprocess.run(cmd, cwd=project.root, env=env, stdout=subprocess.PIPE, text=True)


def build_html(project: Project, *, force: bool = False,
               report: Callable[[str], None] = partial(print, flush=True)) -> bool:
    """Stage the book and build its HTML; ``False`` if it was already up to date."""
    stage = stage_book(project)
    # the commit and the tree's state too: the pages state them (the reproducibility appendix and
    # every footer), so a new commit builds again even when no page changed
    state = tree_state(project.root)
    digest = _stage_digest(stage) + f" {state['commit']} {state['dirty']}"
    stamp = project.html / STAMP
    if not force and (project.html / "index.html").exists() and stamp.exists() and stamp.read_text() == digest:
        return False
    stamp.unlink(missing_ok=True)
    report("building HTML with Jupyter Book (warnings are errors) ...")
    done = run_jupyter_book(project, stage, project.html, project.build / ".doctrees")
    if done.returncode != 0:
        sys.stderr.write(done.stdout)
        raise HtmlBuildFailed(f"Jupyter Book failed (exit {done.returncode}); see its warnings above")
    _prune_removed_pages(project, toc_pages(project))
    rows = book_ledger(project=project) or []
    try:
        check_one_verdict(rows)  # one claim, one verdict across chapters
    except ConflictingVerdicts as e:
        raise HtmlBuildFailed(str(e)) from None
    write_ledger_files(rows, project.html)  # claims.json, claims.csv
    write_text_atomic(stamp, digest)
    return True


def build_pdf(project: Project, report: Callable[[str], None] = partial(print, flush=True)) -> Path:
    """The book as a PDF through Jupyter Book's LaTeX builder (``_build/latex/book.pdf``);
    needs TeX Live with XeLaTeX and latexmk (see the README)."""
    stage = stage_book(project)
    report("building the PDF with Jupyter Book's LaTeX builder (a few minutes) ...")
    script = _QUIET_ON_INTERRUPT + "import sys; from jupyter_book.cli.main import main; sys.exit(main())"
    cmd = [sys.executable, "-c", script,
           "build", str(stage), "--path-output", str(project.root), "--builder", "pdflatex", "-q"]
    env = {**os.environ, "PYTHONPATH": project.pythonpath()}
    done = subprocess.run(cmd, cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    pdfs = sorted((project.build / "latex").glob("*.pdf"), key=lambda p: p.stat().st_mtime)
    if done.returncode != 0 or not pdfs:
        sys.stderr.write(done.stdout[-5000:])
        raise HtmlBuildFailed(f"the LaTeX build failed (exit {done.returncode}); the end of its log is above")
    return pdfs[-1]
