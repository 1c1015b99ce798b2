"""Markdown tables for the chapters, shown with ``{glue:md}`` and ``:format: myst``.

A chapter numbers a table by wrapping the glued Markdown in a ``{table}`` directive, so the
reader sees "Table 3" and ``{numref}`` refers to it as a table::

    ````{table} The caption.
    :name: tab-rec-level

    ```{glue:md} rec-tab-level
    :format: myst
    ```
    ````
"""

from typing import Iterable, Sequence

__all__ = ["cell", "dataframe_table", "markdown_table"]


def cell(text) -> str:
    """Text safe inside a Markdown table cell (one line, pipes escaped)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    """A Markdown table (MyST markup allowed in the cells)."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def dataframe_table(frame, index: bool = True) -> str:
    """A pandas DataFrame as a Markdown table: the index's levels become the first columns
    (unless ``index`` is false), column levels are joined with a comma."""
    frame = frame.reset_index() if index else frame
    header = [", ".join(str(p) for p in c) if isinstance(c, tuple) else str(c) for c in frame.columns]
    return markdown_table(header, frame.itertuples(index=False))
