"""Glue numbers and figures into a chapter's prose: one helper for every chapter.

``myst_nb.glue`` stores a value's ``repr`` and, by default, also displays it
where it is called. Under numpy 2 a numpy scalar's repr is ``np.float64(0.5)``,
which the book's ``{glue:text}`key:.3f``` role cannot format (a build warning,
hence a build error). :func:`glue` therefore

* never displays the value where it is called (``display=True`` to opt in);
* converts numpy and torch scalars (and 0-d arrays) to Python numbers;
* glues a whole mapping in one call: ``glue({"rp_l2": rp, "rp_se": se})``,
  optionally with a common ``prefix``;
* glues an :class:`~attention_geometry.stats.Estimate` as two numbers, its value
  under the key and its standard error under the key with ``-se`` appended:
  ``glue({"sp": spearman})`` is ``glue({"sp": spearman.value, "sp-se": spearman.se})``.

It returns what it glued: the value, or the mapping of plain values under
the mapping's own keys (without the prefix).

:func:`glue_json` glues a structure (records, a table's rows) as itself: a
JSON-valued output that the notebook stores as JSON, read back as the same
structure by :func:`~.notebooks.glued_data`, where ``myst_nb.glue`` would store
its repr.
"""

import json
from typing import Any, Iterator, Mapping

from .._checks import fail
from ..stats import Estimate
from .notebooks import JSON_MIME

__all__ = ["glue", "glue_json", "plain"]


def plain(value: Any) -> Any:
    """numpy / torch scalars (and 0-d arrays) -> Python scalars; a string enum (a verdict's label)
    -> its plain string, so that it glues as the word, not as its repr; other values unchanged."""
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    item = getattr(value, "item", None)
    shape = getattr(value, "shape", None)
    if callable(item) and (shape == () or shape is None and not isinstance(value, (list, tuple, dict))):
        try:
            return item()
        except (TypeError, ValueError):
            return value
    return value


def _entries(key: str, value: Any) -> Iterator[tuple[str, Any]]:
    """What ``key: value`` glues: an :class:`Estimate` as its value and ``key-se``."""
    if isinstance(value, Estimate):
        yield key, plain(value.value)
        yield key + "-se", plain(value.se)
    else:
        yield key, plain(value)


def glue(name: str | Mapping[str, Any], value: Any = None, *, display: bool = False, prefix: str = "") -> Any:
    """``glue("name", value)`` or ``glue({"name": value, ...}, prefix="")``.

    Values are made plain (:func:`plain`), an :class:`Estimate` is glued as its
    value and its ``-se``, and each is glued with ``myst_nb.glue`` without being
    displayed, unless ``display=True``. A name glued twice in one call (``"x"``
    an estimate beside an ``"x-se"``) is an error.
    """
    from myst_nb import glue as _glue

    if not isinstance(name, Mapping):
        out = glue({name: value}, display=display, prefix=prefix)
        return out if isinstance(value, Estimate) else out[name]
    if value is not None:
        raise TypeError("glue(mapping) takes no value: glue({'name': value, ...})")
    out = {}
    for key, val in name.items():
        for k, v in _entries(key, val):
            if k in out:
                raise ValueError(f"glue: {prefix + k!r} is glued twice in one call (an estimate's '-se' and a "
                                 f"value of that name); allowed: each name once")
            out[k] = v
    for key, val in out.items():
        _glue(prefix + key, val, display=display)
    return out


def glue_json(name: str, value: Any, *, mime: str = "application/json") -> Any:
    """Glue ``value`` (lists, mappings, strings, numbers) under ``name`` as a structured
    output of mime type ``mime`` (one of :data:`JSON_MIME`): stored in the notebook as
    JSON, and, like every value glued without display, dropped by myst-nb before the
    page is rendered. Values JSON has no type for (numpy numbers, dates) are stored as
    their ``str``, and NaN and infinities (which JSON lacks) as ``null``. Returns the
    value as stored."""
    from IPython.display import display
    from myst_nb.ext.glue import GLUE_PREFIX

    if not JSON_MIME.fullmatch(mime):
        raise fail("mime", mime, "application/json or application/vnd.attention-geometry.<name>+json")
    # plain JSON (str-valued enums as their words), as the kernel's messages carry it
    stored = json.loads(json.dumps(value, default=str), parse_constant=lambda _: None)
    display({GLUE_PREFIX + mime: stored}, raw=True, metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})
    return stored
