"""Reading executed notebooks: glued values, and trimming for storage.

:func:`glued_data` is the one reader of what a chapter glued: the book's
prose numbers, a chapter's values read by another (:func:`~.ledger.executed_values`),
a chapter's claim records (:func:`~.ledger.chapter_claims`), a stored paper run's
values (:func:`~.paper.run_paper`) and a sweep point's (:mod:`.sweep`).
"""

import ast
import json
import math
import re
from pathlib import Path
from typing import Any, Iterator

__all__ = ["JSON_MIME", "CLAIMS_KEY", "CLAIMS_MIME", "load_notebook", "glued_values", "glued_data", "parse_glued",
           "strip_tagged_cells", "slim_notebook"]

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
    numbers as numbers, strings as strings, lists and mappings as such; anything
    else as its text."""
    out = {}
    for name, data, prefix in _glue_outputs(load_notebook(notebook)):
        mimes = {mime.removeprefix(prefix): value for mime, value in data.items()}
        if any(mime in mimes for mime in IMAGE_MIMES):
            continue
        structured = [value for mime, value in mimes.items() if JSON_MIME.fullmatch(mime)]
        out[name] = structured[0] if structured else parse_glued(_text(mimes.get("text/plain", "")))
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
