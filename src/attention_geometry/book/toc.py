"""The table of contents and the chapters' sources.

Every page of ``_toc.yml`` is built. A page whose source has code cells is a
chapter: it must have an entry in the project's chapter registry (its parameter
specification), and it is executed before the book is built. The appendices are
generated at build time and have no source (:data:`GENERATED_PAGES`).
"""

import re
from pathlib import Path

import yaml

from .project import Project
from .registry import Chapter

__all__ = ["GENERATED_PAGES", "toc_pages", "page_source", "has_code", "chapter_for_source",
           "book_chapters", "parameters_cell", "stray_notebooks"]

# page (as in _toc.yml) -> which appendix generates it
GENERATED_PAGES = {
    "book/appendix_parameters": "parameters",
    "book/appendix_errata": "errata",
    "book/appendix_caveats": "caveats",
    "book/appendix_reproducibility": "reproducibility",
    "book/appendix_claims": "claims",
}


def toc_pages(project: Project | None = None) -> list[str]:
    """Every page of ``_toc.yml`` in reading order, as paths without suffix."""
    project = project or Project.find()
    toc = yaml.safe_load(project.toc.read_text())
    pages = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            walk(entry.get("sections"))
            for part in entry.get("parts", []) or []:
                walk(part.get("chapters"))
            walk(entry.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return pages


def page_source(project: Project, page: str) -> Path:
    """The Markdown source of a toc page (not for generated pages)."""
    path = project.root / f"{page}.md"
    if not path.exists():
        raise FileNotFoundError(f"_toc.yml lists {page!r} but {path} does not exist")
    return path


def stray_notebooks(project: Project) -> list[str]:
    """One message per ``<page>.ipynb`` lying beside a toc page's ``<page>.md`` (as
    ``jupytext --to ipynb`` writes it): the book is built from the ``.md`` only."""
    messages = []
    for page in toc_pages(project):
        notebook = project.root / f"{page}.ipynb"
        if page not in GENERATED_PAGES and notebook.exists() and (project.root / f"{page}.md").exists():
            messages.append(
                f"{page}.ipynb lies beside {page}.md, the page's source: the book is built from the .md "
                f"alone. Move it out of the book (or delete it); to keep edits made in it, first run "
                f".venv/bin/jupytext --to myst {page}.ipynb -o {page}.md (make lab opens the .md as a "
                "notebook, without an .ipynb)")
    return messages


def has_code(path: Path) -> bool:
    return re.search(r"^```\{code-cell\}", path.read_text(), flags=re.M) is not None


def chapter_for_source(project: Project, source: Path) -> Chapter:
    rel = source.relative_to(project.root).as_posix()
    for chapter in project.chapters.values():
        if chapter.source == rel:
            return chapter
    raise KeyError(
        f"{rel} has code cells but no entry in the chapter registry "
        "(attention_geometry.book.registry.CHAPTERS: its parameter specification and smoke set)"
    )


def book_chapters(project: Project | None = None) -> list[Chapter]:
    """The executable chapters, in the order of ``_toc.yml``."""
    project = project or Project.find()
    sources = (page_source(project, p) for p in toc_pages(project) if p not in GENERATED_PAGES)
    return [chapter_for_source(project, src) for src in sources if has_code(src)]


_CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)


def _cell_tags_and_source(body: str) -> tuple[list[str], str]:
    """A MyST code cell's tags and its code (options as ``:key: value`` lines or a
    ``---`` YAML block, then the code)."""
    lines = body.splitlines()
    options: dict = {}
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        options = yaml.safe_load("\n".join(lines[1:end])) or {}
        lines = lines[end + 1:]
    else:
        while lines and lines[0].startswith(":"):
            key, _, value = lines.pop(0)[1:].partition(":")
            options[key.strip()] = yaml.safe_load(value) if value.strip() else None
    tags = options.get("tags") or []
    return (tags if isinstance(tags, list) else [tags]), "\n".join(lines).strip("\n")


def parameters_cell(chapter: Chapter, project: Project | None = None) -> dict:
    """The defaults in the chapter's one ``parameters`` cell, evaluated.

    Read straight from the MyST source (a regular expression, not Jupytext:
    this runs on every build, also when nothing changed)."""
    project = project or Project.find()
    text = (project.root / chapter.source).read_text()
    cells = [source for tags, source in (_cell_tags_and_source(m.group(2)) for m in _CODE_CELL.finditer(text))
             if "parameters" in tags]
    if len(cells) != 1:
        raise ValueError(f"{chapter.source}: expected one 'parameters' cell, found {len(cells)}")
    namespace: dict = {}
    exec(compile(cells[0], f"{chapter.source}:parameters", "exec"), {}, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("_")}
