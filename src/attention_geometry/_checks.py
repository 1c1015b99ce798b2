"""One argument check, one message format, for every function of the library.

Every message names the argument, the value and what is allowed::

    d = 1 is out of range; allowed: an integer >= 2
    norm = 'rms' is not one of the choices; allowed: one of 'layernorm', 'rmsnorm', ...
    x = an array of shape (3,) has the wrong shape; allowed: (n, d)

An array is named by what matters about it (:func:`shape_of`, :func:`described`),
not printed.

A wrong *type* raises :class:`ArgumentTypeError`, which is both a
``TypeError`` and a ``ValueError``; every other failure raises
:class:`ArgumentError` (a ``ValueError``). The book's parameter validation
(:mod:`attention_geometry.book.params`) uses the same format, prefixed with
"parameter".
"""

import math
import numbers
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

import numpy as np

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "fail",
    "described",
    "shape_of",
    "check_int",
    "check_float",
    "check_choice",
    "check_bool",
    "interval",
    "as_float_tensor",
    "as_generator",
    "as_torch_generator",
    "torch_threads",
]


class ArgumentError(ValueError):
    """An argument with a value that is not allowed."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type (also a ``TypeError``)."""


def fail(name: str, value: Any, allowed: str, why: str = "is not allowed", *, kind=ArgumentError) -> ArgumentError:
    """The library's one error message: ``"{name} = {value!r} {why}; allowed: {allowed}"``.

    Returns the exception (``raise fail(...)``) so that the traceback ends at
    the caller.
    """
    return kind(f"{name} = {value!r} {why}; allowed: {allowed}")


class _Described(str):
    """A value that :func:`fail` shows as this text, not as its ``repr``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def described(text: str) -> str:
    """``text`` as the value :func:`fail` names, unquoted: ``fail("x", described("an array with a zero row"), ...)``."""
    return _Described(text)


def shape_of(a: Any, kind: str = "an array") -> str:
    """``"an array of shape (3, 4)"`` (numpy, torch or anything with a shape), for :func:`fail`."""
    shape = getattr(a, "shape", None)
    return _Described(f"{kind} of shape {tuple(shape) if shape is not None else np.shape(a)}")


def interval(low=None, high=None, low_open=False, high_open=False) -> str:
    """``[0, 1)``-style text for a range; ``None`` bounds are infinite."""
    left = "(" if low_open or low is None else "["
    right = ")" if high_open or high is None else "]"
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"{left}{lo}, {hi}{right}"


def _int_range(low, high) -> str:
    if low is not None and high is None:
        return f"an integer >= {low}"
    if low is None and high is not None:
        return f"an integer <= {high}"
    if low is None:
        return "an integer"
    return f"an integer in [{low}, {high}]"


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool) in ``[low, high]``; returns it as ``int``."""
    allowed = _int_range(low, high)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise fail(name, value, allowed, f"has the wrong type {type(value).__name__}", kind=ArgumentTypeError)
    if (low is not None and value < low) or (high is not None and value > high):
        raise fail(name, value, allowed, "is out of range")
    return int(value)


def check_float(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite real number (not a bool) in the interval; returns it as ``float``."""
    allowed = f"a finite number in {interval(low, high, low_open, high_open)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise fail(name, value, allowed, f"has the wrong type {type(value).__name__}", kind=ArgumentTypeError)
    x = float(value)
    if not math.isfinite(x):
        raise fail(name, value, allowed, "is not finite")
    if low is not None and (x < low or (low_open and x == low)):
        raise fail(name, value, allowed, "is out of range")
    if high is not None and (x > high or (high_open and x == high)):
        raise fail(name, value, allowed, "is out of range")
    return x


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """One of ``choices``; returns it."""
    choices = tuple(choices)
    if value not in choices:
        raise fail(name, value, "one of " + ", ".join(map(repr, choices)), "is not one of the choices")
    return value


def check_bool(name: str, value: Any) -> bool:
    """``True`` or ``False`` (numpy bools accepted)."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(name, value, "True or False", f"has the wrong type {type(value).__name__}",
                   kind=ArgumentTypeError)
    return bool(value)


def as_float_tensor(name: str, x: Any, dtype=None, device=None):
    """``x`` (a torch tensor or numpy array of floats) as a torch tensor, on ``dtype``/``device`` if given."""
    import torch

    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise fail(name, f"a {type(x).__name__}", "a torch.Tensor or numpy array of floats",
                   "has the wrong type", kind=ArgumentTypeError)
    if not x.is_floating_point():
        raise fail(name, f"a tensor of dtype {x.dtype}", "a floating-point dtype", "has the wrong dtype")
    return x.to(dtype=dtype or x.dtype, device=device or x.device)


def _seed(name: str, value: Any, what: str, high: int | None = None) -> int | None:
    """``value`` as a seed if it is an integer (bools are not) in ``[0, high]``;
    ``None`` if it is not an integer."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    allowed = f"{what} or a seed ({_int_range(0, high)})"
    if value < 0 or (high is not None and value > high):
        raise fail(name, value, allowed, "is out of range")
    return int(value)


def as_generator(name: str, rng: Any) -> np.random.Generator:
    """The library's one way in for numpy randomness: ``rng`` itself if it is a
    ``numpy.random.Generator`` (its state advances: draws continue its stream), or
    ``numpy.random.default_rng(rng)`` for a seed ``rng >= 0`` (the same stream, bit
    for bit). ``name`` is the argument's name, for the message."""
    if isinstance(rng, np.random.Generator):
        return rng
    seed = _seed(name, rng, "a numpy.random.Generator")
    if seed is None:
        raise fail(name, rng, "a numpy.random.Generator or a seed (an integer >= 0)",
                   f"has the wrong type {type(rng).__name__}", kind=ArgumentTypeError)
    return np.random.default_rng(seed)


def as_torch_generator(name: str, generator: Any):
    """The same for torch: ``generator`` itself if it is a ``torch.Generator``, or
    ``torch.Generator().manual_seed(generator)`` for a seed in ``[0, 2**64 - 1]``."""
    import torch

    if isinstance(generator, torch.Generator):
        return generator
    seed = _seed(name, generator, "a torch.Generator", high=2**64 - 1)
    if seed is None:
        raise fail(name, generator, "a torch.Generator or a seed (an integer in [0, 18446744073709551615])",
                   f"has the wrong type {type(generator).__name__}", kind=ArgumentTypeError)
    return torch.Generator().manual_seed(seed)


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with torch using ``n`` intra-op threads, restoring the old count after.

    Small matrices run fastest, and reproducibly, on one thread; ``None``
    leaves the setting alone.
    """
    import torch

    if n is None:
        yield
        return
    n = check_int("threads", n, low=1)
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
