"""A Sphinx extension for what every page of the book (and of a run report) gets.

- **Search without accents.** Sphinx indexes "Cesàro" as ``cesàro``, so a
  reader who types "Cesaro" finds nothing. After each build the search index
  gets, for every term with an accent, its ASCII-folded twin pointing at the
  same pages ("cesaro"); the accented form still works.
- **Provenance in the footer.** Each page loads ``_static/ag-build-info.js``,
  written after every build with the commit (and whether the tree had
  uncommitted changes) and the date of that build; it fills the footer's
  ``<span id="ag-build">``. One small file per build, so a build that rewrites
  only the changed pages still shows the right commit and date on every page.
"""

import json
import re
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

from .provenance import git, tree_state

__all__ = ["fold", "fold_search_index", "build_info", "setup"]

BUILD_INFO_JS = "ag-build-info.js"
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


def _script(info: dict) -> str:
    if info["commit"]:
        text = f"Built {info['date']} from commit {info['commit'][:10]}" + (
            " with uncommitted changes" if info["dirty"] else "") + "."
    else:
        text = f"Built {info['date']} (not from a git checkout)."
    return (f"window.AG_BUILD = {json.dumps(info, sort_keys=True)};\n"
            "document.addEventListener('DOMContentLoaded', function () {\n"
            "  var el = document.getElementById('ag-build');\n"
            f"  if (el) {{ el.textContent = {json.dumps(text)}; }}\n"
            "});\n")


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    index = out / "searchindex.js"
    if index.is_file():
        index.write_text(fold_search_index(index.read_text(encoding="utf-8")), encoding="utf-8")
    (out / "_static").mkdir(exist_ok=True)
    (out / "_static" / BUILD_INFO_JS).write_text(_script(build_info(Path(app.srcdir))), encoding="utf-8")


def setup(app):
    app.add_js_file(BUILD_INFO_JS)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
