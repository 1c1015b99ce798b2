"""Glue numbers and figures into a chapter's prose: one helper for every chapter.

``myst_nb.glue`` stores a value's ``repr`` and, by default, also displays it
where it is called. Under numpy 2 a numpy scalar's repr is ``np.float64(0.5)``,
which the book's ``{glue:text}`key:.3f``` role cannot format (a build warning,
hence a build error). :func:`glue` therefore

* never displays the value where it is called (``display=True`` to opt in);
* converts numpy and torch scalars (and 0-d arrays) to Python numbers;
* glues a whole mapping in one call: ``glue({"rp_l2": rp, "rp_se": se})``,
  optionally with a common ``prefix``.

It returns what it glued: the value, or the mapping of plain values under
the mapping's own keys (without the prefix).
"""

from typing import Any, Mapping

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


def glue(name: str | Mapping[str, Any], value: Any = None, *, display: bool = False, prefix: str = "") -> Any:
    """``glue("name", value)`` or ``glue({"name": value, ...}, prefix="")``.

    Values are made plain (:func:`plain`) and glued with ``myst_nb.glue``
    without being displayed, unless ``display=True``.
    """
    from myst_nb import glue as _glue

    if isinstance(name, Mapping):
        if value is not None:
            raise TypeError("glue(mapping) takes no value: glue({'name': value, ...})")
        out = {}
        for key, val in name.items():
            out[key] = plain(val)
            _glue(prefix + key, out[key], display=display)
        return out
    value = plain(value)
    _glue(prefix + name, value, display=display)
    return value
