"""Chapter parameters: their allowed values, and validation where they enter.

Every chapter has one papermill ``parameters`` cell. Right after it the chapter
calls :func:`~attention_geometry.book.registry.validate_parameters`, which checks every value against the
chapter's :class:`~attention_geometry.book.registry.Chapter` specification and stops
the run *before any computation* with a :class:`ParameterError` naming the
parameter, the value and what is allowed. Papermill itself only warns about
unknown names; here an unknown name is an error too.

A specification is a mapping ``name -> Param``; each ``Param`` knows its type,
its range or choices and a one-line meaning (used by the parameters appendix).
"""

import math
import numbers
import types
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = [
    "ParameterError",
    "Param",
    "Int",
    "Float",
    "Bool",
    "Choice",
    "TextFolder",
    "IntList",
    "FloatList",
    "check_value",
    "check_parameters",
    "check_devices",
    "user_data",
]


class ParameterError(ValueError):
    """A parameter has a wrong type, a value out of range, or an unknown name."""


def _interval(low, high, low_open=False, high_open=False) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    return f"{left}{lo}, {hi}{right}"


@dataclass(frozen=True)
class Param:
    """Base class: ``doc`` is the parameter's meaning in one line."""

    doc: str

    def allowed(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def check(self, name: str, value: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def _fail(self, name: str, value: Any, why: str) -> ParameterError:
        return ParameterError(
            f"parameter {name!r} = {value!r} {why}; allowed: {self.allowed()}"
        )


@dataclass(frozen=True)
class Int(Param):
    """An integer in ``[low, high]`` (``None`` = unbounded). Bools are rejected."""

    low: int | None = None
    high: int | None = None

    def allowed(self) -> str:
        return f"an integer in {_interval(self.low, self.high)}"

    def check(self, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise self._fail(name, value, f"has the wrong type {type(value).__name__}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise self._fail(name, value, "is out of range")
        return int(value)


@dataclass(frozen=True)
class Float(Param):
    """A finite real number in an interval; integers are accepted and converted."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def allowed(self) -> str:
        return f"a finite number in {_interval(self.low, self.high, self.low_open, self.high_open)}"

    def check(self, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self._fail(name, value, f"has the wrong type {type(value).__name__}")
        value = float(value)
        if not math.isfinite(value):
            raise self._fail(name, value, "is not finite")
        lo, hi = self.low, self.high
        if lo is not None and (value < lo or (self.low_open and value == lo)):
            raise self._fail(name, value, "is out of range")
        if hi is not None and (value > hi or (self.high_open and value == hi)):
            raise self._fail(name, value, "is out of range")
        return value


@dataclass(frozen=True)
class Bool(Param):
    """``True`` or ``False`` (not 0/1, not strings)."""

    def allowed(self) -> str:
        return "True or False"

    def check(self, name, value):
        if not isinstance(value, bool):
            raise self._fail(name, value, f"has the wrong type {type(value).__name__}")
        return value


@dataclass(frozen=True)
class Choice(Param):
    """One of a fixed set of strings."""

    choices: Sequence[str] = ()

    def allowed(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def check(self, name, value):
        if not isinstance(value, str):
            raise self._fail(name, value, f"has the wrong type {type(value).__name__}")
        if value not in self.choices:
            raise self._fail(name, value, "is not a known choice")
        return value


@dataclass(frozen=True)
class TextFolder(Param):
    """``None`` (the default corpus) or a folder holding at least one ``.txt`` file."""

    def allowed(self) -> str:
        return "None, or the path of a folder that holds .txt files"

    def check(self, name, value):
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._fail(name, value, f"has the wrong type {type(value).__name__}")
        from pathlib import Path

        folder = Path(value).expanduser()
        if not folder.is_dir():
            raise self._fail(name, value, "is not an existing folder")
        if not any(folder.glob("*.txt")):
            raise self._fail(name, value, "holds no .txt file")
        return str(folder)


@dataclass(frozen=True)
class _List(Param):
    item: Param | None = None
    min_len: int = 1
    max_len: int | None = None

    def allowed(self) -> str:
        n = f"{self.min_len} to {self.max_len}" if self.max_len else f"at least {self.min_len}"
        return f"a list of {n} items, each {self.item.allowed()}"

    def check(self, name, value):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise self._fail(name, value, f"has the wrong type {type(value).__name__}")
        if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
            raise self._fail(name, value, f"has {len(value)} items")
        out = []
        for i, v in enumerate(value):
            try:
                out.append(self.item.check(f"{name}[{i}]", v))
            except ParameterError as err:
                raise ParameterError(f"{err} (in parameter {name!r} = {value!r})") from None
        return out


def IntList(doc: str, low=None, high=None, min_len=1, max_len=None) -> _List:
    """A list of integers, each in ``[low, high]``."""
    return _List(doc=doc, item=Int(doc=doc, low=low, high=high), min_len=min_len, max_len=max_len)


def FloatList(doc: str, low=None, high=None, min_len=1, max_len=None, low_open=False) -> _List:
    """A list of finite numbers, each in the interval."""
    return _List(
        doc=doc,
        item=Float(doc=doc, low=low, high=high, low_open=low_open),
        min_len=min_len,
        max_len=max_len,
    )


def check_value(spec: Mapping[str, Param], name: str, value: Any) -> Any:
    """Check one ``name = value`` against ``spec``; return the normalised value."""
    if name not in spec:
        raise ParameterError(
            f"unknown parameter {name!r} = {value!r}; known parameters: "
            + ", ".join(sorted(spec))
        )
    return spec[name].check(name, value)


def check_parameters(spec: Mapping[str, Param], values: Mapping[str, Any]) -> dict:
    """Check a complete or partial set of values against ``spec``."""
    return {name: check_value(spec, name, value) for name, value in values.items()}


def check_devices(spec: Mapping[str, Param], values: Mapping[str, Any]) -> None:
    """Reject a device this machine does not have: a choice among devices (one that
    offers ``"cuda"``) set to ``"cuda"`` where torch sees no CUDA device. Checked
    where a run starts on this machine (``make run``), not in the specification
    itself: a preset may ask for CUDA and be run elsewhere."""
    for name, value in values.items():
        param = spec.get(name)
        if isinstance(param, Choice) and "cuda" in param.choices and value == "cuda":
            import torch

            if not torch.cuda.is_available():
                here = ", ".join(repr(c) for c in param.choices if c != "cuda")
                raise ParameterError(f"parameter {name!r} = 'cuda' is not available: torch sees no CUDA "
                                     f"device on this machine; allowed here: {here}")


# Names IPython puts into a kernel's user namespace; never parameters.
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def user_data(namespace: Mapping[str, Any]) -> dict:
    """The plain-data names of a notebook namespace: candidates for parameters."""
    out = {}
    for name, value in namespace.items():
        if name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            continue
        out[name] = value
    return out
