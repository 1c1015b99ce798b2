import os
import signal
import textwrap
from pathlib import Path

import pytest

from attention_geometry.book.project import Project
from attention_geometry.book.registry import Chapter

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"

# The tests send Ctrl-C as a terminal does (SIGINT to a process group) and expect what
# a terminal's user gets. A command started in the background by a non-interactive
# shell (`nohup make test &`, as a CI may be) starts with SIGINT ignored, and every
# process it starts inherits that: make then ignores Ctrl-C, and its shell cannot trap
# it. So the tests, and the processes they start, take Python's default again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

if os.environ.get("PYTEST_XDIST_WORKER"):  # `make test` runs one worker per core: one thread each
    import torch                           # (two threads per worker made torch's small ops 10-20x slower)

    torch.set_num_threads(1)


# `make test` hands whole files to its two workers (--dist loadfile) in collection
# order (--no-loadscope-reorder; xdist's own order, by number of tests, sent the
# few-test files that execute kernels last, and one worker finished a minute after
# the other). The long files go first, longest first (durations on 2 cores, in
# seconds: user_errors 63, chapters 48 with two kernels at a time, build 39, sweep
# 34, paper 24, majority 19, interactive 18, cache 15, run_report 12, recency 11,
# controls 10, selectability 10), so that the files handed out last are short and
# both workers finish together; the chapters' two-kernel file starts first, beside
# another. (cache and controls measured beside run_report on busy cores, scaled to
# its 12 s: 100 and 72 s of wall time to its 90, 23 and 14 CPU-s to its 17.)
SLOW_FILES_FIRST = ("test_chapters.py", "test_user_errors.py", "test_build.py", "test_machine_paths.py",
                    "test_leftovers.py", "test_sweep.py", "test_paper.py",
                    "test_majority.py", "test_interactive.py", "test_cache.py", "test_run_report.py",
                    "test_recency.py", "test_controls.py", "test_selectability.py", "test_browser.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The book built by `make book` (which `make test` runs first)."""
    if not (HTML / "index.html").exists():
        pytest.fail("no built book at _build/html: run `make book` first (make test does)")
    return HTML


def require_browser() -> bool:
    """CI sets AG_REQUIRE_BROWSER=1: there a missing Chromium is a failure, not a skip."""
    return os.environ.get("AG_REQUIRE_BROWSER") == "1"


# The Jupytext header of a chapter, for the toy chapters the tests build.
CHAPTER_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

def chapter_text(title: str, parameters: str, *cells: str) -> str:
    """A toy chapter's MyST body: a title, its parameters cell, then code cells."""
    blocks = [f"# {title}\n", f"```{{code-cell}} ipython3\n:tags: [parameters]\n{parameters}\n```\n"]
    blocks += [f"```{{code-cell}} ipython3\n{textwrap.dedent(cell).strip()}\n```\n" for cell in cells]
    return "\n".join(blocks)


TOY_CONFIG = """\
title: Toy
author: Tests
only_build_toc_files: true
execute:
  execute_notebooks: "off"
html:
  use_repository_button: false
launch_buttons:
  thebe: false
sphinx:
  config:
    intersphinx_mapping: {}
"""


def make_project(root: Path, chapters: dict[str, tuple[str, Chapter]], *, library: dict[str, str] | None = None,
                 pages: dict[str, str] | None = None) -> Project:
    """A toy book project in ``root``: ``chapters`` maps a stem to (cells, spec),
    ``library`` a file under src/ to its text, ``pages`` a prose page's stem to its text.
    The toc lists the prose pages (the first is the root) then the chapters."""
    pages = pages or {"intro": "# Intro\n\nA toy book.\n"}
    (root / "book").mkdir(parents=True, exist_ok=True)
    (root / "src").mkdir(exist_ok=True)
    (root / "requirements.txt").write_text("numpy\n")
    (root / "_config.yml").write_text(TOY_CONFIG)
    for rel, text in (library or {}).items():
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(textwrap.dedent(text))
    for stem, text in pages.items():
        (root / "book" / f"{stem}.md").write_text(text)
    for stem, (body, _) in chapters.items():
        (root / "book" / f"{stem}.md").write_text(CHAPTER_HEADER + textwrap.dedent(body))
    write_toc(root, [*pages, *chapters])
    return Project(root, chapters={spec.name: spec for _, spec in chapters.values()})


def write_toc(root: Path, stems: list[str]) -> None:
    lines = ["format: jb-book", f"root: book/{stems[0]}", "chapters:"]
    lines += [f"  - file: book/{stem}" for stem in stems[1:]]
    (root / "_toc.yml").write_text("\n".join(lines) + "\n")


def toy_model(params: dict | None = None, **class_data):
    """A toy chapter's parameter model: ``params`` maps each name to ``(type, Field(default, ...))``
    (default: ``n``, an integer in [0, 100] at 3); ``class_data``: its smoke, presets and cost."""
    from pydantic import Field

    from attention_geometry.book.params import ChapterParams

    params = params or {"n": (int, Field(3, ge=0, le=100, description="n"))}
    namespace = {"__annotations__": {k: kind for k, (kind, _) in params.items()},
                 **{k: field for k, (_, field) in params.items()}, **class_data}
    return type("ToyParams", (ChapterParams,), namespace)


def toy_chapter(name: str, stem: str | None = None, params: dict | None = None, **kwargs) -> Chapter:
    """A toy chapter; ``params`` and ``smoke``/``presets``/``cost`` make its model (:func:`toy_model`)."""
    class_data = {k: kwargs.pop(k) for k in ("smoke", "presets", "cost") if k in kwargs}
    return Chapter(name=name, source=f"book/{stem or name}.md", model=toy_model(params, **class_data), **kwargs)

