r"""Ratios and proportions whose intervals say when they are not numbers.

* :func:`fieller_interval` -- the confidence set of a ratio
  :math:`\theta = \mu_a/\mu_b` of two independent normal estimates (Fieller):
  the :math:`\theta` with :math:`(a - \theta b)^2 \le z^2(s_a^2 + \theta^2 s_b^2)`.
  It is a finite interval exactly when the denominator's own interval excludes 0
  (:math:`b^2 > z^2 s_b^2`); otherwise it is unbounded and the function returns
  ``None``: a share of a whole that may be 0 is no number at all, and no share
  word applies (the delta method would still print a finite ``±``);
* :func:`clopper_pearson` -- the exact binomial interval of a proportion
  ``k / n``: the claim "every window is full rank" is read as "the proportion is
  at least ``1 - tol``", with this interval, not as a minimum over the windows
  (which flips from 1 to less than 1 as the sample grows);
* :func:`exact_proportion` -- a proportion ``k / n`` as an
  :class:`~attention_geometry.stats.Estimate` whose interval is the exact one
  (:class:`ExactProportion`), so that every rule reads it inside ``[0, 1]``.
"""

import math
from dataclasses import dataclass

from ._checks import check_float, check_int
from .stats import Estimate

__all__ = ["fieller_interval", "clopper_pearson", "ExactProportion", "exact_proportion"]


def _level(level: float) -> float:
    return check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)


def fieller_interval(num: Estimate, den: Estimate, *, level: float = 0.95) -> tuple[float, float] | None:
    r"""The ``level`` Fieller interval of ``num / den`` (independent, normal errors), or ``None``
    when the denominator's ``level`` interval contains 0 (the set is then unbounded).

    Solves :math:`(b^2 - z^2 s_b^2)\theta^2 - 2ab\,\theta + a^2 - z^2 s_a^2 \le 0`."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + _level(level) / 2))
    a, sa, b, sb = num.value, num.se, den.value, den.se
    qa = b * b - z * z * sb * sb
    if qa <= 0:
        return None
    disc = (a * b) ** 2 - qa * (a * a - z * z * sa * sa)
    root = math.sqrt(max(disc, 0.0))
    return (a * b - root) / qa, (a * b + root) / qa


def clopper_pearson(successes: int, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper--Pearson) ``level`` interval of a binomial proportion ``successes / n``
    (coverage at least ``level`` for every true proportion; ``[.., 1]`` when all succeed)."""
    from scipy.stats import beta

    n = check_int("n", n, low=1)
    k = check_int("successes", successes, low=0, high=n)
    alpha = 1 - _level(level)
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class ExactProportion(Estimate):
    r"""The fraction ``value = successes / n`` of ``n`` independent trials, whose :meth:`interval` is
    the exact (Clopper--Pearson) one of :func:`clopper_pearson`: inside ``[0, 1]`` at every count,
    from 0 when none succeed and to 1 when all do. ``se`` is the Agresti--Coull standard error
    :math:`\sqrt{\tilde p(1-\tilde p)/(n+4)}`, :math:`\tilde p = (k+2)/(n+4)`, positive at 0 and at
    ``n``; the rules use it only to say what the measurement could have seen and what sample would
    decide it, never for the interval."""

    successes: int = 0
    n: int = 0

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The exact two-sided ``level`` interval of the proportion."""
        return clopper_pearson(self.successes, self.n, level=level)

    def format(self, digits: int = 3) -> str:
        """``2/2,000 = 0.001``: the count and the fraction."""
        return f"{self.successes:,}/{self.n:,} = {self.value:.{digits}g}"


def exact_proportion(successes: int, n: int) -> ExactProportion:
    """The fraction ``successes / n`` with its exact interval (:class:`ExactProportion`)."""
    n = check_int("n", n, low=1)
    k = check_int("successes", successes, low=0, high=n)
    p = (k + 2) / (n + 4)
    return ExactProportion(k / n, math.sqrt(p * (1 - p) / (n + 4)), successes=k, n=n)
