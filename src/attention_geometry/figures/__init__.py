"""The book's figures: one module per chapter, on the shared theme of :mod:`.theme`.

Only this subpackage imports matplotlib and seaborn. It may use the
mathematics (:mod:`attention_geometry`) but never the book tooling
(:mod:`attention_geometry.book`). Import a chapter's module explicitly, e.g.
``from attention_geometry.figures import recency as fig``.
"""

from .theme import new_figure, set_theme

__all__ = ["set_theme", "new_figure"]
