"""Helpers for chapters: glue numbers into the prose.

``myst_nb.glue`` stores a value's ``repr``; under numpy 2 a numpy scalar's
repr is ``np.float64(0.5)``, which the book's ``{glue:text}`key:.3f``` role
cannot format (a build warning, hence a build error). :func:`glue` converts
numpy and torch scalars to Python numbers first and never displays the value
where it is called.
"""

from typing import Any

__all__ = ["glue", "plain"]


def plain(value: Any) -> Any:
    """numpy / torch scalars (and 0-d arrays) -> Python scalars; other values unchanged."""
    item = getattr(value, "item", None)
    shape = getattr(value, "shape", None)
    if callable(item) and (shape == () or shape is None and not isinstance(value, (list, tuple, dict))):
        try:
            return item()
        except (TypeError, ValueError):
            return value
    return value


def glue(name: str, value: Any, display: bool = False) -> Any:
    """``myst_nb.glue(name, value)`` with numpy scalars made plain; returns the value glued."""
    from myst_nb import glue as _glue

    value = plain(value)
    _glue(name, value, display=display)
    return value
