"""Appendices generated from the book itself at build time (never by hand).

- **Parameters**: every chapter's parameters with their default, smoke value,
  presets, allowed values and meaning, written from the chapter's parameter
  model (:mod:`.chapters`; a test keeps its defaults equal to the chapter's
  ``parameters`` cell).
- **Errata of the papers**: a table per paper of the places where its text is
  wrong as written, from the records of :mod:`.errata` (location, what the paper
  writes, what is right, the evidence in the book, the severity).
- **Caveats and run settings**: every chapter's closing section ("Caveats", or
  "Errata and caveats" as it was called before the papers' errata moved to
  their own page), collected, with the glued numbers still pointing at the
  chapter that computed them, and a link back.
- **Reproducibility**: the commit and the date of the build (the directive
  ``{ag-build-info}`` of :mod:`.sphinx_pages`, filled in as Sphinx reads the page, so
  that the HTML and the PDF state them as text); the environment (package versions of the running
  virtual environment); for each chapter the command that re-runs it, its run
  time and its cache key, read from the executed notebooks; and every stored
  paper-scale run with its provenance and cost.

:func:`.stage.stage_book` writes these pages into the staged book; their
sources do not exist in ``book/``.
"""

import importlib.metadata
import json
import platform
import re
from pathlib import Path

from .cache import META_KEY
from .errata import ERRATA, PAPERS, Erratum
from .paper import PRESET, load_paper_run, regenerate_command
from .project import Project
from .registry import Chapter
from .tables import markdown_table

__all__ = ["chapter_title", "parameters_page", "errata_page", "caveats_page", "reproducibility_page"]


def chapter_title(chapter: Chapter, root: Path) -> str:
    """The chapter's title: the first level-1 heading of its source."""
    for line in (Path(root) / chapter.source).read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return chapter.name


def _cell(value) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def parameters_page(chapters: list[Chapter], project: Project) -> str:
    """The parameters appendix, written from each chapter's parameter model."""
    lines = [
        "(appendix-parameters)=",
        "# Appendix: chapter parameters",
        "",
        "Every chapter's knobs, generated from the chapters themselves: the default is the",
        "value in the chapter's `parameters` cell, the allowed values are what the",
        "chapter's validation accepts, the smoke value is what the tests run. Change any",
        'of them with `make run CHAPTER=<name> PARAMS="name=value ..."`, or over a grid',
        "with `make sweep` (see the README).",
        "",
    ]
    for chapter in chapters:
        doc = Path(chapter.source).name.removesuffix(".md")
        lines += [f"## {chapter_title(chapter, project.root)}", "",
                  f"Chapter {{doc}}`{doc}`, name `{chapter.name}` for `make run` and `make sweep`.", ""]
        lines += ["| parameter | default | smoke | allowed | meaning |", "|---|---|---|---|---|"]
        for name, param in chapter.params.items():
            smoke = _cell(chapter.smoke[name]) if name in chapter.smoke else "(default)"
            lines.append(
                f"| `{name}` | {_cell(param.default)} | {smoke} | "
                f"{_escape(param.allowed())} | {_escape(param.doc)} |"
            )
        for preset, values in chapter.presets.items():
            command = (regenerate_command(chapter.name) if preset == PRESET
                       else f"make run CHAPTER={chapter.name} PRESET={preset}")
            lines += ["", f"Preset `{preset}` (`{command}`): "
                      + ", ".join(f"`{k} = {json.dumps(v)}`" for k, v in values.items())]
        lines.append("")
    return "\n".join(lines)


_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# the chapters' closing section: "Caveats" (with or without more words), or its older name
_CAVEATS = re.compile(r"^(errata and caveats|caveats)\b", re.I)


def _caveats_section(text: str) -> str | None:
    """The body of the first heading "Caveats…" or "Errata and caveats", up to the next heading of its level."""
    lines = text.splitlines()
    in_code = False
    start = level = None
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        m = None if in_code else _HEADING.match(line)
        if start is None and m and _CAVEATS.match(m.group(2).strip()):
            start, level = i + 1, len(m.group(1))
        elif start is not None and m and len(m.group(1)) <= level:
            return "\n".join(lines[start:i])
    return "\n".join(lines[start:]) if start is not None else None


def _point_glue_back(text: str, notebook: str) -> str:
    """Glue roles that read the value from ``notebook`` (the chapter that computed it)."""
    def point_back(m):
        role, key = m.group(1) or "", m.group(2)
        if role == ":text" and ":" not in key:
            key += ":s"  # myst-nb splits off a format before the document: give it one
        return f"{{glue{role}}}`{notebook}::{key}`"

    return re.sub(r"\{glue(:\w+)?\}`(?!\S+::)([^`]+)`", point_back, text)


def _relocate(body: str, notebook: str) -> str:
    """Make a chapter's markdown safe to paste into another page: glue points back
    at the chapter's notebook, labels and names are dropped (they would clash)."""
    body = _point_glue_back(body, notebook)
    body = re.sub(r"^\([^)]+\)=\s*$", "", body, flags=re.M)
    body = re.sub(r"^:(label|name):.*$", "", body, flags=re.M)
    body = re.sub(r"(\$\$)\s*\([\w:-]+\)\s*$", r"\1", body, flags=re.M)
    # code cells and glue figures stay in the chapter
    body = re.sub(r"^```\{(code-cell|glue:figure|glue)\}.*?^```\s*$", "", body, flags=re.M | re.S)
    return body.strip()


def _bibliography(root: Path) -> dict[str, dict[str, str]]:
    """``references.bib`` as key -> {title, author, year} (braces dropped)."""
    path = Path(root) / "references.bib"
    entries: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"@\w+\{([^,\s]+),(.*?)\n\}", path.read_text() if path.exists() else "", re.S):
        fields = dict(re.findall(r"(\w+)\s*=\s*\{(.*)\},?\s*$", m.group(2), re.M))
        entries[m.group(1)] = {k: v.replace("{", "").replace("}", "") for k, v in fields.items()}
    return entries


def _short_citation(entry: dict[str, str]) -> str:
    """"Kim et al. (2025)", "Chowdhury (2026)": the bibliography's author-year style, as text."""
    authors = [a.split(",")[0].strip() for a in entry.get("author", "").split(" and ") if a.strip()]
    names = (authors[0] if len(authors) == 1 else f"{authors[0]} and {authors[1]}" if len(authors) == 2
             else f"{authors[0]} et al." if authors else "?")
    return f"{names} ({entry.get('year', '?')})"


def _erratum_row(erratum: Erratum, notebook: str) -> list[str]:
    return [_point_glue_back(text, notebook) for text in
            (erratum.location, erratum.written, erratum.right, erratum.evidence, erratum.severity)]


def errata_page(chapters: list[Chapter], project: Project, errata: tuple[Erratum, ...] = ERRATA,
                papers: tuple[str, ...] = PAPERS) -> str:
    """The papers' errata: a table per paper with an erratum, in the order of ``papers``."""
    stems = {c.name: c.stem for c in chapters}
    bib = _bibliography(project.root)
    lines = [
        "(appendix-errata)=",
        "# Appendix: errata of the papers",
        "",
        "The places where a paper's text is wrong as written, each with what is right and where",
        "the book shows it. The severity says how much it matters: a *slip with no effect* is a",
        "misprint that nothing later uses; a *wrong number* is a wrong value, formula or factor",
        "whose conclusion still holds; a *wrong conclusion* is a statement that does not hold as",
        "the paper makes it. The book's own caveats, run settings and implementation notes are",
        "on the next page, {ref}`appendix-caveats`.",
        "",
    ]
    for key in papers:
        entry = bib.get(key, {})
        rows = [e for e in errata if e.paper == key and e.chapter in stems]
        lines += [f"## {entry.get('title', key)}", ""]
        if not rows:
            lines += [f"{{cite:t}}`{key}`: no erratum is recorded.", ""]
            continue
        docs = list(dict.fromkeys(stems[e.chapter] for e in rows))
        lines += [f"{{cite:t}}`{key}`, shown in " + " and ".join(f"{{doc}}`{d}`" for d in docs) + ".", ""]
        table = markdown_table(
            ["where in the paper", "what the paper writes", "what is right", "evidence", "severity"],
            [_erratum_row(e, f"{stems[e.chapter]}.ipynb") for e in rows])
        lines += [f"````{{table}} Errata of {_short_citation(entry) if entry else key}.",
                  f":name: errata-{key}", "", table, "````", ""]
    return "\n".join(lines)


def caveats_page(chapters: list[Chapter], project: Project) -> str:
    """Every chapter's closing section ("Caveats" or "Errata and caveats"), collected."""
    lines = [
        "(appendix-caveats)=",
        "# Appendix: caveats and run settings",
        "",
        "Every chapter closes with what its results leave out: the book's own caveats, the",
        "settings of its runs against the papers', and how it computes what it computes.",
        "They are collected here from the chapters (numbers included, as computed there); each",
        "heading links back to the chapter. Where a paper itself is wrong, see",
        "{ref}`appendix-errata`.",
        "",
    ]
    for chapter in chapters:
        body = _caveats_section((project.root / chapter.source).read_text())
        lines += [f"## {chapter_title(chapter, project.root)}", "", f"From {{doc}}`{chapter.stem}`:", ""]
        lines += [_relocate(body, f"{chapter.stem}.ipynb") if body else "*(This chapter has no caveats section.)*",
                  ""]
    return "\n".join(lines)


def _requirement_names(root: Path) -> list[str]:
    names = []
    for req in sorted(root.glob("requirements*.txt")):
        for line in req.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0])
    return names


def _stored_runs_section(chapters: list[Chapter], project: Project) -> list[str]:
    lines = [
        "## Runs at the papers' settings",
        "",
        "Paper-scale runs are computed once with `make paper CHAPTER=<name>` (the chapter's",
        f"`{PRESET}` preset, on the best device present) and stored with their provenance in",
        "`results/<chapter>/paper/`; the book reads them and never re-runs them. A stored run",
        "whose parameters differ from the current preset fails the build, unless a run at the",
        "new preset is under way from committed checkpoints: a run longer than a session then",
        "finishes over several, and the last finished run stays shown until it does, its line",
        "under the chapter's table saying so.",
        "",
    ]
    runs = [(c, load_paper_run(c.name, project)) for c in chapters]
    stored = [(c, r) for c, r in runs if r is not None]
    if not stored:
        return lines + ["No chapter has a stored paper-scale run yet.", ""]
    lines += ["| chapter | command | device | wall time (s) | CPU cores | date | commit | note |",
              "|---|---|---|---|---|---|---|---|"]
    for chapter, run in stored:
        p = run.provenance
        commit = (p.get("commit") or "?")[:10] + (" (dirty)" if p.get("dirty") else "")
        wall = p.get("wall_seconds")
        lines.append(
            f"| {{doc}}`{chapter.stem}` | `{regenerate_command(chapter.name)}` | "
            f"{_escape(str(p.get('device_name') or p.get('device') or '?'))} | "
            f"{'?' if wall is None else f'{wall:.0f}'} | {p.get('cpu_cores', '?')} | {p.get('date', '?')} | "
            f"`{commit}` | {_escape(str(p.get('note') or ''))} |"
        )
    missing = [c.name for c, r in runs if r is None and PRESET in c.presets]
    if missing:
        lines += ["", "Not run at the papers' settings yet: " + ", ".join(f"`{m}`" for m in missing) + "."]
    return lines + [""]


def reproducibility_page(chapters: list[Chapter], project: Project) -> str:
    lines = [
        "(appendix-reproducibility)=",
        "# Appendix: reproducibility",
        "",
        "How this copy of the book was built, read from the build itself.",
        "",
        "## This build",
        "",
        "```{ag-build-info}",
        "```",
        "",
        "The commit is the repository's state the pages were built from; every page's footer",
        "gives its first ten digits and the same date.",
        "",
        "## Environment",
        "",
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}.",
        "",
        "| package | version |",
        "|---|---|",
    ]
    for name in _requirement_names(project.root):
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        lines.append(f"| `{name}` | {version} |")
    lines += [
        "",
        "## Chapters",
        "",
        "`make book` executed each chapter with papermill at its default parameters;",
        "the command shown re-runs it alone (into `runs/<chapter>/`). A chapter is",
        "re-executed only when its cache key changes: a hash of its source, its",
        "parameters, the library modules its kernel imported, the chapters it depends",
        "on, its stored paper-scale run and the requirements.",
        "",
        "| chapter | command | run time (s) | cache key |",
        "|---|---|---|---|",
    ]
    for chapter in chapters:
        notebook = project.executed / f"{chapter.stem}.ipynb"
        meta = json.loads(notebook.read_text())["metadata"].get(META_KEY, {}) if notebook.exists() else {}
        seconds = meta.get("seconds")
        lines.append(
            f"| {{doc}}`{chapter.stem}` | `make run CHAPTER={chapter.name}` | "
            f"{'not executed' if seconds is None else f'{seconds:.1f}'} | `{meta.get('cache_key', '?')[:16]}` |"
        )
    lines.append("")
    return "\n".join(lines + _stored_runs_section(chapters, project))
