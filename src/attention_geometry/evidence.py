"""Evidence: what a verdict was computed from, kept so that it can be computed again.

Every rule of :mod:`.verdicts` is registered with :func:`rule`. The
:class:`~attention_geometry.verdicts.Verdict` it returns carries ``evidence``:
the rule's name and the arguments it was called with (only those given: a
default that changes is part of the rule), as plain JSON (:func:`encode`).
A chapter's claim records keep it, and so does a stored paper-scale run
(``results/<chapter>/paper/values.json``). A stored run therefore keeps its
*measurements*; every build computes the verdict from them again with the
rules as they are now (:func:`~attention_geometry.verdicts.recompute`), so that no verdict on a page comes
from a rule that has since changed or no longer exists.

The JSON form: numbers, strings, booleans and ``None`` as themselves; a
non-finite float as ``{"__float__": "nan"}``; a tuple as ``{"__tuple__": [...]}``;
a numpy array as ``{"__array__": [...], "dtype": ...}``; an
:class:`~attention_geometry.stats.Estimate` (or a subclass of it) as
``{"__estimate__": class name, **fields}`` (the name qualified by its module unless
that is :mod:`.stats`: ``draws.DrawEstimate``); a verdict passed to
a rule (:func:`~attention_geometry.verdicts.all_verdict`) as
``{"__verdict__": {label, reason, evidence}}``, computed again from its own
evidence when it has some; a mapping with string keys as a mapping. Anything
else is refused when the rule is called (:class:`EvidenceError`), not when a
stored run is read years later.
"""

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

import numpy as np

from . import stats
from ._checks import fail

__all__ = ["EvidenceError", "UnknownRule", "rule", "rules", "rule_named", "encode", "decode", "QUALIFIED",
           "qualified_evidence", "core_evidence", "core_rule"]

#: The argument through which a rule qualifies another rule's verdict (``draws_verdict(verdict=...)``).
QUALIFIED = "verdict"

_RULES: dict[str, Callable[..., Any]] = {}


class EvidenceError(TypeError):
    """A rule's argument has no JSON form, so its verdict could not be computed again."""


class UnknownRule(LookupError):
    """Stored evidence names a rule that does not exist (any more)."""


def encode(value: Any, where: str = "argument") -> Any:
    """``value`` as plain JSON (see the module's docstring); ``where`` names it in an error."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Enum):
        return encode(value.value, where)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, np.ndarray):
        return {"__array__": [encode(v, where) for v in value.ravel().tolist()], "shape": list(value.shape),
                "dtype": str(value.dtype)}
    if isinstance(value, stats.Estimate):
        return {"__estimate__": _estimate_name(type(value)),
                **{f.name: encode(getattr(value, f.name), f"{where}.{f.name}") for f in fields(value)}}
    if is_dataclass(value) and hasattr(value, "label") and hasattr(value, "evidence"):  # a Verdict
        return {"__verdict__": {"label": str(value.label), "reason": value.reason, "evidence": value.evidence}}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise EvidenceError(f"{where}: a mapping with keys that are not strings has no JSON form")
        return {k: encode(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise EvidenceError(f"{where} = {type(value).__name__}: a rule's arguments must be numbers, strings, "
                        "estimates, verdicts, arrays, or lists and mappings of them")


def _estimate_name(cls: type) -> str:
    """``Estimate``, ``PairedDifference`` (of :mod:`.stats`) or ``draws.DrawEstimate``: the class's
    name, qualified by its module within the package unless that is :mod:`.stats`."""
    module = cls.__module__.removeprefix(f"{__package__}.")
    return cls.__name__ if module == "stats" else f"{module}.{cls.__name__}"


def _estimate_class(name: str) -> type:
    """The inverse of :func:`_estimate_name`; :class:`UnknownRule` if the package has no such estimate."""
    import importlib

    module, _, cls_name = name.rpartition(".")
    try:
        cls = getattr(importlib.import_module(f"{__package__}.{module or 'stats'}"), cls_name, None)
    except ImportError:
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, stats.Estimate)):
        raise UnknownRule(f"stored evidence holds an estimate of kind {name!r}, which attention_geometry "
                          "does not define")
    return cls


def decode(value: Any, verdict: Callable[[Mapping[str, Any]], Any]) -> Any:
    """The inverse of :func:`encode`; a stored verdict becomes ``verdict(record)``
    (:func:`~attention_geometry.verdicts.recompute`: computed again from its evidence)."""
    if isinstance(value, list):
        return [decode(v, verdict) for v in value]
    if not isinstance(value, dict):
        return value
    if "__float__" in value:
        return float(value["__float__"])
    if "__tuple__" in value:
        return tuple(decode(v, verdict) for v in value["__tuple__"])
    if "__array__" in value:
        return np.asarray(decode(value["__array__"], verdict), dtype=value["dtype"]).reshape(value["shape"])
    if "__estimate__" in value:
        cls = _estimate_class(value["__estimate__"])
        return cls(**{k: decode(v, verdict) for k, v in value.items() if k != "__estimate__"})
    if "__verdict__" in value:
        return verdict(value["__verdict__"])
    return {k: decode(v, verdict) for k, v in value.items()}


def rule(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register ``fn`` (a rule returning a ``Verdict``) under its name, and give the
    verdicts it returns their evidence: its name and the arguments it was given."""
    signature = inspect.signature(fn)
    if fn.__name__ in _RULES:
        raise fail("rule", fn.__name__, "a name no other rule has")

    @functools.wraps(fn)
    def with_evidence(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        given = {name: encode(v, f"{fn.__name__}({name}=...)") for name, v in bound.arguments.items()}
        verdict = fn(*args, **kwargs)
        object.__setattr__(verdict, "evidence", {"rule": fn.__name__, "args": given})
        return verdict

    _RULES[fn.__name__] = with_evidence
    return with_evidence


def rules() -> dict[str, Callable[..., Any]]:
    """The registered rules, by name (a copy; :mod:`.verdicts` registers them when imported)."""
    return dict(_RULES)


def rule_named(name: str) -> Callable[..., Any]:
    """The rule registered as ``name``; :class:`UnknownRule` if there is none (any more)."""
    if name not in _RULES:
        raise UnknownRule(f"stored evidence names the rule {name!r}, which attention_geometry.verdicts no longer "
                          f"has; rules: {', '.join(sorted(_RULES))}")
    return _RULES[name]


def qualified_evidence(evidence: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The evidence of the verdict that a qualifying rule (one whose argument :data:`QUALIFIED` is
    another rule's verdict, like ``draws_verdict``) was given; ``None`` for any other rule, and for
    a qualified verdict that has no evidence of its own."""
    inner = evidence.get("args", {}).get(QUALIFIED)
    if isinstance(inner, dict) and (inner.get("__verdict__") or {}).get("evidence"):
        return inner["__verdict__"]["evidence"]
    return None


def core_evidence(evidence: Mapping[str, Any]) -> Mapping[str, Any]:
    """The evidence of the rule that read the measurement: through every qualifying rule down to
    the one it qualifies (:func:`qualified_evidence`)."""
    while (inner := qualified_evidence(evidence)) is not None:
        evidence = inner
    return evidence


def core_rule(evidence: Mapping[str, Any]) -> str:
    """The rule that read the measurement (:func:`core_evidence`)."""
    return core_evidence(evidence)["rule"]
