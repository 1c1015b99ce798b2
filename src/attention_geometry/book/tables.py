"""Markdown tables for the chapters, shown with ``{glue:md}`` and ``:format: myst``."""

from typing import Iterable, Sequence

__all__ = ["cell", "markdown_table"]


def cell(text) -> str:
    """Text safe inside a Markdown table cell (one line, pipes escaped)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    """A Markdown table (MyST markup allowed in the cells)."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)
