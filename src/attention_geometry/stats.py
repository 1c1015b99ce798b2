r"""Estimates with their uncertainty: means, paired differences, control variates.

Every comparison in the book is made between *estimates*, never bare numbers.
An :class:`Estimate` is a value with its standard error and, where it comes
from a small sample, the degrees of freedom of a Student-t interval.

* :func:`mean_estimate` -- the sample mean and :math:`s/\sqrt n`;
* :func:`paired_difference` -- the mean of per-seed differences :math:`a_s - b_s`
  (same seed: same data and initial weights), with its t interval and the
  number of seeds on which ``a`` is ahead;
* :func:`control_variate_mean` -- :math:`\bar y - \hat\beta(\bar x - \mu_x)` for
  a control :math:`x` of known mean :math:`\mu_x`; its variance is
  :math:`(1-\rho^2)` times that of :math:`\bar y`;
* :func:`proportion_estimate` -- a fraction of successes with the
  Agresti--Coull interval (sound near 0 and 1, where the plain one is not);
* :func:`ratio_estimate` -- a ratio of two estimates by the delta method;
* :func:`bootstrap_interval` -- a percentile bootstrap for any statistic;
* :func:`spearman` and :func:`noise_ceiling` -- rank correlation, and the
  correlation between two independent estimates of the same profile, which
  bounds what any comparison with a model can reach.
"""

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats as _sps

from ._checks import check_float, check_int, fail

__all__ = [
    "Estimate",
    "mean_estimate",
    "PairedDifference",
    "paired_difference",
    "control_variate_mean",
    "proportion_estimate",
    "ratio_estimate",
    "bootstrap_interval",
    "spearman",
    "noise_ceiling",
]


@dataclass(frozen=True)
class Estimate:
    """``value`` with standard error ``se``; ``df`` degrees of freedom (``None``: normal)."""

    value: float
    se: float
    df: int | None = None

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The two-sided ``level`` confidence interval (Student t when ``df`` is set)."""
        level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
        q = (_sps.t.ppf(0.5 + level / 2, self.df) if self.df is not None
             else _sps.norm.ppf(0.5 + level / 2))
        return self.value - q * self.se, self.value + q * self.se

    def z(self, reference: float = 0.0) -> float:
        """``(value - reference) / se`` (``inf`` with the sign of the gap when ``se = 0``)."""
        gap = self.value - reference
        if self.se > 0:
            return gap / self.se
        return 0.0 if gap == 0 else math.copysign(math.inf, gap)

    def format(self, digits: int = 3) -> str:
        """``0.866 ± 0.028`` (``±`` one standard error)."""
        return f"{self.value:.{digits}g} ± {self.se:.2g}"

    def __str__(self) -> str:
        return self.format()


def mean_estimate(x) -> Estimate:
    """The mean of the samples ``x: (n,)``, its standard error and ``n - 1`` degrees of freedom."""
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    if n < 2:
        raise fail("x", f"{n} sample(s)", "at least 2 samples (a standard error needs two)")
    return Estimate(float(x.mean()), float(x.std(ddof=1) / math.sqrt(n)), df=n - 1)


@dataclass(frozen=True)
class PairedDifference(Estimate):
    """A paired difference ``mean(a - b)``; ``wins``: seeds with ``a > b``, of ``n``."""

    n: int = 0
    wins: int = 0


def paired_difference(a, b) -> PairedDifference:
    """The mean per-pair difference ``a - b`` (``a, b: (n,)``, paired by position) with its t interval."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise fail("b", f"an array of shape {b.shape}", f"the shape of a, {a.shape} (paired samples)")
    est = mean_estimate(a - b)
    return PairedDifference(est.value, est.se, est.df, n=a.size, wins=int((a > b).sum()))


def control_variate_mean(y, x, x_mean: float = 0.0) -> Estimate:
    r"""Mean of ``y`` with the control variate ``x`` of known mean ``x_mean``.

    :math:`\hat\mu = \bar y - \hat\beta(\bar x - \mu_x)` with
    :math:`\hat\beta = \widehat{\mathrm{cov}}(y, x)/\widehat{\mathrm{var}}(x)`. Its
    standard error is that of the residuals :math:`y - \hat\beta x`, i.e.
    :math:`\sqrt{1-\rho^2}` times the plain one (asymptotically; the estimate of
    :math:`\beta` costs one degree of freedom). ``y, x: (n,)`` paired samples.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    x = np.asarray(x, dtype=np.float64).ravel()
    if y.shape != x.shape:
        raise fail("x", f"an array of shape {x.shape}", f"the shape of y, {y.shape} (paired samples)")
    n = check_int("len(y)", y.size, low=3)
    xc = x - x.mean()
    var_x = float(xc @ xc)
    beta = float(xc @ (y - y.mean())) / var_x if var_x > 0 else 0.0
    resid = y - beta * xc
    value = float(y.mean() - beta * (x.mean() - x_mean))
    return Estimate(value, float(resid.std(ddof=2) / math.sqrt(n)), df=n - 2)


def proportion_estimate(successes: int, n: int) -> Estimate:
    r"""The fraction ``successes / n`` of independent trials, as an Agresti--Coull estimate.

    ``value`` is :math:`\tilde p = (k + 2)/(n + 4)` and ``se`` is
    :math:`\sqrt{\tilde p(1-\tilde p)/(n+4)}`, so ``interval(0.95)`` is the
    Agresti--Coull interval (coverage close to 95 % even for :math:`k = 0`;
    the plain :math:`\hat p \pm 1.96\sqrt{\hat p(1-\hat p)/n}` has none there).
    The plain fraction is ``successes / n``.
    """
    n = check_int("n", n, low=1)
    k = check_int("successes", successes, low=0, high=n)
    p = (k + 2) / (n + 4)
    return Estimate(p, math.sqrt(p * (1 - p) / (n + 4)))


def ratio_estimate(num: Estimate, den: Estimate) -> Estimate:
    r"""``num / den`` by the delta method, the two estimates independent:
    :math:`\mathrm{se}^2 = (s_n/d)^2 + (n s_d / d^2)^2`."""
    if den.value == 0:
        raise fail("den", den.value, "an estimate with a non-zero value")
    r = num.value / den.value
    se = math.hypot(num.se / den.value, num.value * den.se / den.value**2)
    return Estimate(r, abs(se))


def bootstrap_interval(statistic: Callable[[np.ndarray], float], samples, *, n_boot: int = 2000,
                       level: float = 0.95, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(samples[idx])`` over resampled rows.

    ``samples: (n, ...)``; rows are resampled with replacement ``n_boot`` times
    with ``rng`` (a ``numpy.random.Generator``).
    """
    samples = np.asarray(samples)
    n = check_int("len(samples)", len(samples), low=2)
    check_int("n_boot", n_boot, low=10)
    level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", rng, "a numpy.random.Generator", "has the wrong type")
    values = np.array([statistic(samples[rng.integers(0, n, n)]) for _ in range(n_boot)])
    lo, hi = np.nanquantile(values, [0.5 - level / 2, 0.5 + level / 2])
    return float(lo), float(hi)


def spearman(a, b) -> float:
    """Spearman's rank correlation of two profiles ``a, b: (L,)``."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size < 3:
        raise fail("b", f"an array of shape {b.shape}", f"the shape of a, {a.shape}, with at least 3 entries")
    return float(_sps.spearmanr(a, b).statistic)


def noise_ceiling(first, second) -> float:
    """The Spearman correlation between two *independent* estimates of the same profile.

    No comparison of one noisy estimate with a model can be expected to exceed
    it: a Spearman against a theory is read against this ceiling, not against 1.
    ``first, second: (L,)``, from disjoint samples (e.g. two halves of the sequences).
    """
    return spearman(first, second)
