"""A chapter's run time as a function of its parameters (what ``make run`` announces first)."""

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["CostModel"]


def _size(name: str, parameters: Mapping[str, Any]) -> float:
    """A cost term's value: ``name`` itself, ``len:name`` (a list's length) or ``sum:name``."""
    how, _, param = name.rpartition(":")
    value = parameters.get(param)
    if how == "len":
        return float(len(value or ()))
    if how == "sum":
        return float(sum(value or ()))
    return float(value)


@dataclass(frozen=True)
class CostModel:
    """A chapter's execution time as a function of its parameters, calibrated on the defaults.

    ``seconds``: the time at the defaults (one kernel of the 2-core reference
    machine; the last measured time of the book's own run replaces it when there
    is one). Each of ``parts`` is ``(share, {term: exponent})``: that share of the
    time scales as the product of ``(value / default) ** exponent`` over its terms
    (a term is a parameter, ``len:<list>`` or ``sum:<list>``; the chapter's model
    checks when it is defined that each names one of its fields); what the parts
    do not share is fixed (kernel start, imports).
    """

    seconds: float
    parts: tuple[tuple[float, Mapping[str, float]], ...] = ()

    def estimate(self, parameters: Mapping[str, Any], defaults: Mapping[str, Any],
                 seconds: float | None = None) -> float:
        """Seconds for ``parameters`` (missing ones at their ``defaults``); ``seconds``:
        the time measured at the defaults, if known."""
        base = self.seconds if seconds is None else seconds
        values = {**defaults, **parameters}
        fixed = 1.0 - sum(share for share, _ in self.parts)
        total = fixed
        for share, terms in self.parts:
            factor = 1.0
            for term, exponent in terms.items():
                default = _size(term, defaults)
                factor *= (_size(term, values) / default) ** exponent if default else 1.0
            total += share * factor
        return base * total
