"""A Sphinx extension for what every page of the book (and of a run report) gets.

- **Search without accents.** Sphinx indexes "Cesàro" as ``cesàro``, so a
  reader who types "Cesaro" finds nothing. After each build the search index
  gets, for every term with an accent, its ASCII-folded twin pointing at the
  same pages ("cesaro"); the accented form still works.
- **Provenance, without JavaScript.** The commit of a build (and whether the
  tree had uncommitted changes) and its date are computed once per build
  (:func:`build_info`) and written as text (:func:`build_line`) in two places:

  * the directive ``{ag-build-info}``, which the reproducibility appendix holds
    (:func:`~.appendices.reproducibility_page`): its paragraph is part of the page,
    in the HTML and in the LaTeX of the PDF alike, and the page is read again on
    every build (``env.note_reread``), so it never keeps an older build's line;
  * the footer of every HTML page: after each build the footer's
    ``<span id="ag-build">`` is filled in every page of the output folder, those
    Sphinx did not rewrite too, with the commit linked to the appendix.
"""

import html
import json
import os
import re
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from .provenance import git, tree_state

__all__ = ["fold", "fold_search_index", "build_info", "build_line", "fill_footer", "BuildInfo", "setup"]

#: The page that states the build's provenance (the footer links its commit there).
REPRODUCIBILITY_PAGE = "book/appendix_reproducibility"
_FOOTER = re.compile(r'(<span id="ag-build">)(.*?)(</span>)', re.S)
_INDEX = re.compile(r"^\s*Search\.setIndex\((.*)\)\s*;?\s*$", re.S)


def fold(word: str) -> str:
    """``word`` without its accents: ``"cesàro" -> "cesaro"``."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _merge(a, b):
    pages = sorted({*(a if isinstance(a, list) else [a]), *(b if isinstance(b, list) else [b])})
    return pages[0] if len(pages) == 1 else pages


def fold_search_index(text: str) -> str:
    """The text of a ``searchindex.js`` with ASCII-folded twins of accented terms added."""
    m = _INDEX.match(text)
    if not m:
        return text
    index = json.loads(m.group(1))
    for table in ("terms", "titleterms"):
        terms = index.get(table) or {}
        for term, pages in list(terms.items()):
            folded = fold(term)
            if folded != term:
                terms[folded] = _merge(terms[folded], pages) if folded in terms else pages
    return "Search.setIndex(" + json.dumps(index, separators=(",", ":"), sort_keys=True) + ")"


def build_info(folder: Path) -> dict:
    """The commit of the repository holding ``folder``, whether it is dirty, and now."""
    top = git(folder, "rev-parse", "--show-toplevel")
    state = tree_state(Path(top)) if top else {"commit": git(folder, "rev-parse", "HEAD"), "dirty": None}
    return {**state, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def build_line(info: dict, *, short: bool = False) -> str:
    """The build's provenance as one sentence (plain text): ``"Built 2026-05-01 12:00 UTC from
    commit 0123456789abcdef... ."``; ``short``: the commit's first ten digits (the footer).

    >>> build_line({"commit": "0123456789abcdef", "dirty": True, "date": "2026-05-01 12:00 UTC"}, short=True)
    'Built 2026-05-01 12:00 UTC from commit 0123456789 with uncommitted changes.'
    >>> build_line({"commit": None, "dirty": None, "date": "2026-05-01 12:00 UTC"})
    'Built 2026-05-01 12:00 UTC (not from a git checkout).'
    """
    if not info.get("commit"):
        return f"Built {info['date']} (not from a git checkout)."
    commit = info["commit"][:10] if short else info["commit"]
    return f"Built {info['date']} from commit {commit}" + (" with uncommitted changes" if info.get("dirty") else "") + "."


def fill_footer(page: str, info: dict, appendix: str | None = None) -> str:
    """``page`` (HTML) with its footer's ``<span id="ag-build">`` holding :func:`build_line`
    (short), the commit linked to ``appendix`` (a URL relative to the page) when given."""
    text = html.escape(build_line(info, short=True))
    if appendix and info.get("commit"):
        short = info["commit"][:10]
        text = text.replace(short, f'<a href="{html.escape(appendix)}">{short}</a>', 1)
    return _FOOTER.sub(lambda m: m.group(1) + text + m.group(3), page, count=1)


class BuildInfo(SphinxDirective):
    """``{ag-build-info}``: a paragraph with :func:`build_line` of this build, read again on
    every build."""

    has_content = False

    def run(self):
        self.env.note_reread()
        return [nodes.paragraph(text=build_line(_info(self.env.app)))]


def _info(app) -> dict:
    """This build's :func:`build_info`, computed once (the footer and the appendix agree)."""
    if getattr(app, "_ag_build_info", None) is None:
        app._ag_build_info = build_info(Path(app.srcdir))
    return app._ag_build_info


def _builder_inited(app) -> None:
    _info(app)  # before any parallel reading forks


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    index = out / "searchindex.js"
    if index.is_file():
        index.write_text(fold_search_index(index.read_text(encoding="utf-8")), encoding="utf-8")
    (out / "_static" / "ag-build-info.js").unlink(missing_ok=True)  # what filled the footer before
    info = _info(app)
    appendix = out / f"{REPRODUCIBILITY_PAGE}.html"
    for page in sorted(out.rglob("*.html")):
        if "_sources" in page.relative_to(out).parts:
            continue
        text = page.read_text(encoding="utf-8")
        if 'id="ag-build"' not in text:
            continue
        link = os.path.relpath(appendix, page.parent).replace(os.sep, "/") if appendix.is_file() else None
        filled = fill_footer(text, info, link)
        if filled != text:
            page.write_text(filled, encoding="utf-8")


def setup(app):
    app.add_directive("ag-build-info", BuildInfo)
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _build_finished)
    # env_version 2: the footer is no longer filled by a script; an older environment is read
    # again whole, so that no page keeps the script's tag
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
