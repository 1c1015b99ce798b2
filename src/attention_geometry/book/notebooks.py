"""Reading executed notebooks: glued values, trimming for storage, and this machine's paths.

:func:`glued_data` is the one reader of what a chapter glued: the book's
prose numbers, a chapter's values read by another (:func:`~.ledger.executed_values`),
a chapter's claim records (:func:`~.ledger.chapter_claims`), a stored paper run's
values (:func:`~.paper.run_paper`) and a sweep point's (:mod:`.sweep`).

:func:`strip_machine_paths` takes the absolute paths of the machine that ran a
chapter out of its notebook (papermill's scratch paths, a warning's
``/home/me/clone/.venv/lib/.../site-packages/x.py``, a temporary folder), since an
executed notebook is published: downloaded from the book, committed under
``results/``.
"""

import ast
import json
import math
import os
import re
import sysconfig
import tempfile
from functools import cache
from pathlib import Path
from typing import Any, Iterator

__all__ = ["JSON_MIME", "CLAIMS_KEY", "CLAIMS_MIME", "load_notebook", "glued_values", "glued_text", "glued_data",
           "glued_png", "parse_glued", "strip_tagged_cells", "slim_notebook", "machine_paths", "has_machine_paths",
           "strip_machine_paths"]

IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: The mime types of a structured glued value (:func:`~.glue.glue_json`): ``application/json``
#: and the book's own ``application/vnd.attention-geometry.<name>+json``. A notebook stores
#: their data as JSON, not as text (nbformat's rule for ``application/...+json``), and
#: :func:`glued_data` reads it as that JSON. (Other JSON outputs, widget views and plotly
#: figures, are views: read as their text.)
JSON_MIME = re.compile(r"application/(vnd\.attention-geometry\.[\w.-]+\+)?json")

#: The glued name of a chapter's claim records (:func:`~.claims.show_claims`).
CLAIMS_KEY = "claims_json"
#: Their mime type: one of :data:`JSON_MIME`, so the notebook stores the records as JSON.
CLAIMS_MIME = "application/vnd.attention-geometry.claims+json"


def load_notebook(notebook: Path | str | dict) -> dict:
    return notebook if isinstance(notebook, dict) else json.loads(Path(notebook).read_text())


def _glue_outputs(nb: dict) -> Iterator[tuple[str, dict, str]]:
    """``(name, mime bundle, mime prefix)`` of every ``myst_nb.glue`` output."""
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook", {})
            if scrapbook.get("name") is not None:
                yield scrapbook["name"], output.get("data", {}), scrapbook.get("mime_prefix", "")


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def glued_values(notebook: Path | str | dict) -> dict[str, str]:
    """Every glued value of an executed notebook, as its ``text/plain`` form."""
    return {name: _text(data.get(f"{prefix}text/plain", ""))
            for name, data, prefix in _glue_outputs(load_notebook(notebook))}


def glued_png(notebook: Path | str | dict, name: str) -> bytes | None:
    """The PNG image glued under ``name`` in an executed notebook (a stored run's figure), or ``None``."""
    import base64
    for glued, data, prefix in _glue_outputs(load_notebook(notebook)):
        if glued == name and f"{prefix}image/png" in data:
            return base64.b64decode(_text(data[f"{prefix}image/png"]))
    return None


def glued_text(notebook: Path | str | dict) -> dict[str, str]:
    """Every glued value as the text the book shows: a Markdown value (``{glue:md}``: a table,
    a clause with math) as its Markdown source, any other as its ``text/plain`` form (where
    :func:`glued_values` gives a Markdown value's ``<IPython.core.display.Markdown object>``)."""
    return {name: _text(data.get(f"{prefix}text/markdown", data.get(f"{prefix}text/plain", "")))
            for name, data, prefix in _glue_outputs(load_notebook(notebook))}


_NUMPY_REPR = re.compile(r"(?:np|numpy)\.\w+\((.*)\)", re.S)
_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_NOT_A_LITERAL = object()


def _json_able(value: Any) -> Any:
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        return [_json_able(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_able(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return _NOT_A_LITERAL


def parse_glued(text: str) -> Any:
    """A glued value's ``text/plain`` form as the Python value it shows, if it is a
    literal (number, string, list, mapping, bool, None); else the text itself."""
    stripped = text.strip()
    m = _NUMPY_REPR.fullmatch(stripped)  # numpy 2 reprs: np.float64(0.5)
    if m:
        stripped = m.group(1)
    if stripped in _SPECIAL:
        return _SPECIAL[stripped]
    try:
        value = _json_able(ast.literal_eval(stripped))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return text if value is _NOT_A_LITERAL else value


def glued_data(notebook: Path | str | dict) -> dict[str, Any]:
    """Every glued value that is data (figures left out): a structured output
    (:func:`~.glue.glue_json`, e.g. the claim records) as the JSON it stores;
    numbers as numbers, strings as strings, lists and mappings as such; a Markdown
    value (a table, a clause with math) as its Markdown source, which its ``text/plain``
    form (``<IPython.core.display.Markdown object>``) does not hold; anything else as
    its text."""
    out = {}
    for name, data, prefix in _glue_outputs(load_notebook(notebook)):
        mimes = {mime.removeprefix(prefix): value for mime, value in data.items()}
        if any(mime in mimes for mime in IMAGE_MIMES):
            continue
        structured = [value for mime, value in mimes.items() if JSON_MIME.fullmatch(mime)]
        out[name] = (structured[0] if structured else _text(mimes["text/markdown"]) if "text/markdown" in mimes
                     else parse_glued(_text(mimes.get("text/plain", ""))))
    return out


def strip_tagged_cells(nb, tag: str) -> list:
    """Remove the cells tagged ``tag`` from ``nb`` (an nbformat node); return them."""
    removed = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    nb.cells = [c for c in nb.cells if c not in removed]
    return removed


def slim_notebook(nb) -> None:
    """Drop what only bloats a stored notebook: widget views and their state, and
    the HTML duplicates of outputs that also carry an image (figures stay PNG)."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs = []
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data is not None:
                data.pop(WIDGET_MIME, None)
                if any(m in data for m in IMAGE_MIMES):
                    data.pop("text/html", None)
                if not data and output.get("output_type") == "display_data":
                    continue
            outputs.append(output)
        if "outputs" in cell:
            cell["outputs"] = outputs


def machine_paths(root: Path | str) -> dict[str, str]:
    """``{absolute folder of this machine: what it reads as in a published notebook}``:
    the project ``root`` (as given and resolved) becomes relative (``src/x.py``),
    Python's own folders ``site-packages`` and ``python3.11``, the temporary folder
    ``tmp`` and the home folder ``~``."""
    return {**_system_paths(), **{str(r): "" for r in {Path(root).absolute(), Path(root).resolve()}}}


@cache
def _system_paths() -> dict[str, str]:
    paths = sysconfig.get_paths()
    out = {str(Path.home()): "~"}
    for folder in {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}:
        out[folder] = "tmp"
    for key in ("stdlib", "platstdlib"):
        out[paths[key]] = Path(paths[key]).name
    for key in ("purelib", "platlib"):
        out[paths[key]] = "site-packages"
    return {k: v for k, v in out.items() if len(k) > 1}  # never "/" itself


def _path_pattern(paths: dict[str, str]) -> re.Pattern:
    # longest first: site-packages inside the project's .venv reads "site-packages/...", not ".venv/lib/..."
    alternatives = "|".join(re.escape(p) for p in sorted(paths, key=len, reverse=True))
    # a whole path only: not the end of a longer one (``a/tmp``), not the start of another name (``/tmpx``)
    return re.compile(rf"(?<![\w./~-])(?:{alternatives})(?=/|(?![\w.-]))(/?)")


def has_machine_paths(text: str, root: Path | str) -> bool:
    """Whether ``text`` holds an absolute path of this machine (:func:`machine_paths`)."""
    return bool(_path_pattern(machine_paths(root)).search(text))


def strip_machine_paths(nb, root: Path | str) -> bool:
    """Rewrite, in place, the absolute paths of this machine (:func:`machine_paths`) in every
    string of ``nb`` (a notebook dict or nbformat node) but the cells' sources and the
    base64 images; whether anything changed."""
    paths = machine_paths(root)
    pattern = _path_pattern(paths)

    def replace(m: re.Match) -> str:
        to, slash = paths[m.group(0).removesuffix("/") if m.group(1) else m.group(0)], m.group(1)
        return to + slash if to else ("" if slash else ".")

    changed = False

    def scrub(value, key=None):
        nonlocal changed
        if isinstance(value, str):
            new = pattern.sub(replace, value)
            changed = changed or new != value
            return new
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, dict):
            for k, v in value.items():
                if k in ("source", "attachments") or (k.startswith("image/") and k != "image/svg+xml"):
                    continue
                value[k] = scrub(v, k)
        return value

    scrub(nb)
    return changed
