"""What a stored paper run shows: its figures and its glued words and tables, read from its executed
notebook (:class:`~attention_geometry.book.paper.PaperRun`), with this run's own where it has none.

Apart from :mod:`~attention_geometry.book.paper`, which runs chapters, so that a chapter's glue can read a
stored run without importing the machinery that executes chapters."""

import functools
from pathlib import Path
from typing import Any

__all__ = ["STORED_RUN", "THIS_IS_THE_RUN", "THIS_IS_THE_RUN_CLAUSE", "NO_STORED_RUN", "SOURCE_ITSELF", "SOURCE_STORED", "glued_text_of", "stored_figure",
           "stored_table", "stored_text", "stored_run_words"]

#: The label of the stored paper-scale run wherever this run's numbers stand beside it.
STORED_RUN = "the stored paper-scale run"
#: What a chapter says of the stored run's numbers where this execution is the paper-scale run itself.
THIS_IS_THE_RUN = "This run is the paper-scale run itself: the numbers above are at the paper's settings."
#: The same, as a clause inside a sentence.
THIS_IS_THE_RUN_CLAUSE = "this run is the paper-scale run itself"
#: What a chapter says where no stored paper-scale run holds a quantity (a clause).
NO_STORED_RUN = "no stored paper-scale run holds it"
#: Which run a figure or table shown beside this run's comes from (:func:`stored_figure`, :func:`stored_table`).
SOURCE_ITSELF = "this run, the paper-scale run itself"
SOURCE_STORED = "the stored run at the paper's settings"


@functools.lru_cache(maxsize=4)
def _glued_text_of(path: str, mtime_ns: int) -> dict:
    from .notebooks import glued_text

    return glued_text(path)


def glued_text_of(notebook: Path) -> dict[str, str]:
    """Every glued text of an executed notebook (:func:`~.notebooks.glued_text`), read once per
    version of the file, however many values a build asks of it."""
    return _glued_text_of(str(notebook), notebook.stat().st_mtime_ns)


def stored_text(stored: Any, keys: list[str], *, this_is_the_run: bool = False) -> dict | None:
    """The Markdown (or plain text) the stored paper run (a ``PaperRun`` or ``None``) glued under each of ``keys``, read from its
    notebook (once per build, however many keys are asked for); ``None`` when there is no stored run,
    this run is the paper run, or the stored run does not hold every key (a run from before the
    measurement)."""
    if stored is None or this_is_the_run:
        return None
    texts = {k: stored.text(k) for k in keys}
    return texts if all(v is not None for v in texts.values()) else None


def stored_figure(stored: Any, name: str, fallback: Any, *,
                  this_is_the_run: bool = False) -> tuple[Any, str]:
    """The figure ``name`` as the stored paper run (a ``PaperRun`` or ``None``) drew it (its notebook's glued PNG), else ``fallback``
    (this run's; ``this_is_the_run``: this run is the paper-scale run); with the words that say which."""
    from IPython.display import Image

    png = stored.figure(name) if stored else None
    if this_is_the_run:
        return fallback, SOURCE_ITSELF
    if png is None:
        return fallback, "this run: no stored run at the paper's settings holds the figure"
    return Image(png), SOURCE_STORED


def stored_table(stored: Any, key: str, fallback: Any, *, this_is_the_run: bool = False) -> tuple[Any, str]:
    """The table glued under ``key`` as the stored paper run (a ``PaperRun`` or ``None``) glued it (its
    Markdown), else ``fallback`` (this run's; ``this_is_the_run``: this run is the paper-scale run); with the
    words that say which, as :func:`stored_figure` says them of a figure."""
    from IPython.display import Markdown

    if this_is_the_run:
        return fallback, SOURCE_ITSELF
    text = stored_text(stored, [key])
    if text is None:
        return fallback, "this run: no stored run at the paper's settings holds the table"
    return Markdown(text[key]), SOURCE_STORED


def stored_run_words(stored: Any, keys: tuple[str, ...], say: Any, what: str, *, this_is_the_run: bool) -> str:
    """The stored paper-scale run's sentence on one quantity: ``"In the stored paper-scale run, "``
    and ``say(*values)`` (that run's numbers and words, from its glued ``keys``) where it holds every
    key; else that ``what`` is not in the stored run, or that no paper-scale run is stored; or
    :data:`THIS_IS_THE_RUN`. ``stored``: a ``PaperRun`` or ``None``."""
    if this_is_the_run:
        return THIS_IS_THE_RUN
    if stored is None:
        return f"No paper-scale run is stored, so {what} is not measured at the paper's settings."
    values = stored.values or {}
    if any(values.get(k) is None for k in keys):
        return f"For {what}, the stored paper-scale run has no value: not in the stored run."
    return f"In {STORED_RUN}, {say(*(values[k] for k in keys))}."
