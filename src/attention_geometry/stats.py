r"""Estimates with their uncertainty: means, paired differences, control variates.

Every comparison in the book is made between *estimates*, never bare numbers.
An :class:`Estimate` is a value with its standard error and, where it comes
from a small sample, the degrees of freedom of a Student-t interval.

* :func:`mean_estimate` -- the sample mean and :math:`s/\sqrt n`;
* :func:`paired_difference` -- the mean of per-seed differences :math:`a_s - b_s`
  (same seed: same data and initial weights), with its t interval and the
  number of seeds on which ``a`` is ahead;
* :func:`control_variate_mean` -- :math:`\bar y - \hat\beta^\top(\bar x - \mu_x)` for
  one or several controls :math:`x` of known means :math:`\mu_x`; its variance is
  :math:`(1-R^2)` times that of :math:`\bar y` (:math:`R^2` of the regression of
  :math:`y` on :math:`x`); :func:`control_variate_moments` is the same estimator
  from the sample mean and covariance alone (for streamed samples);
* :func:`wald_test` -- whether a vector of means is zero, from its covariance;
* :func:`proportion_estimate` -- a fraction of successes with the
  Agresti--Coull interval (sound near 0 and 1, where the plain one is not);
* :func:`ratio_estimate` -- a ratio of two estimates by the delta method;
* :func:`difference_estimate` -- a difference of two independent estimates;
* :func:`bootstrap_interval` -- a percentile bootstrap for any statistic of a
  sample's rows (``scipy.stats.bootstrap`` over the row indices);
* :func:`welch_difference` -- the difference of the means of two
  *independent* samples, with Welch's standard error and degrees of freedom;
* :func:`spearman` and :func:`noise_ceiling` -- rank correlation, and the
  correlation between two independent estimates of the same profile, which
  bounds what any comparison with a model can reach;
* :func:`linear_slope` -- the weighted least-squares slope of estimates
  against a covariate, with its standard error;
* :func:`welch_difference` -- the difference of the means of two independent
  samples, with Welch's degrees of freedom;
* :func:`fitted_parameter` -- a fitted parameter with its interval, labelled
  *degenerate* when the fit or its interval lands on a bound of the search
  (then it is not a value: a bound of the search range is not a measurement).

The words a sentence takes from an estimate (``trend_word``) are in
:mod:`attention_geometry.words`.
"""

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import numpy.typing as npt

from ._checks import as_generator, check_float, check_int, fail


__all__ = [
    "Estimate",
    "mean_estimate",
    "PairedDifference",
    "paired_difference",
    "control_variate_mean",
    "control_variate_moments",
    "wald_test",
    "proportion_estimate",
    "ratio_estimate",
    "difference_estimate",
    "bootstrap_interval",
    "bootstrap_replicates",
    "spearman",
    "noise_ceiling",
    "log_linear_rate",
    "welch_difference",
    "linear_slope",
    "band_position",
    "interior_peak",
    "FittedParameter",
    "fitted_parameter",
]


def _sps():
    """``scipy.stats``, imported on first use (it takes a second to import, and the
    book tooling imports this module for its :class:`Estimate` alone)."""
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Estimate:
    """``value`` with standard error ``se``; ``df`` degrees of freedom (``None``: normal)."""

    value: float
    se: float
    df: int | None = None

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The two-sided ``level`` confidence interval (Student t when ``df`` is set)."""
        level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
        q = (_sps().t.ppf(0.5 + level / 2, self.df) if self.df is not None
             else _sps().norm.ppf(0.5 + level / 2))
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


def mean_estimate(x: npt.ArrayLike) -> Estimate:
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


def paired_difference(a: npt.ArrayLike, b: npt.ArrayLike) -> PairedDifference:
    """The mean per-pair difference ``a - b`` (``a, b: (n,)``, paired by position) with its t interval."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise fail("b", f"an array of shape {b.shape}", f"the shape of a, {a.shape} (paired samples)")
    est = mean_estimate(a - b)
    return PairedDifference(est.value, est.se, est.df, n=a.size, wins=int((a > b).sum()))


def control_variate_moments(mean: npt.ArrayLike, cov: npt.ArrayLike, count: int,
                            x_mean: npt.ArrayLike = 0.0) -> Estimate:
    r"""The control-variate mean of :math:`y` from the sample moments of :math:`(y, x_1, \dots, x_k)`.

    ``mean: (k + 1,)`` and ``cov: (k + 1, k + 1)`` are the sample mean and the
    sample covariance (``ddof = 1``) of ``count`` paired draws of :math:`y` (first
    entry) and the controls :math:`x` of known means ``x_mean`` (a number or
    ``(k,)``). With :math:`\hat\beta = \hat\Sigma_{xx}^{-1}\hat\Sigma_{xy}`, the estimate is
    :math:`\bar y - \hat\beta^\top(\bar x - \mu_x)` and its variance is the residual
    variance :math:`(\hat\Sigma_{yy} - \hat\Sigma_{yx}\hat\beta)\,(N-1)/(N-k-1)` over
    :math:`N`; ``df = N - k - 1``. Controls of zero variance are ignored (a
    pseudo-inverse on the standardised controls). With ``k = 0`` it is the plain mean.
    """
    mean = np.atleast_1d(np.asarray(mean, dtype=np.float64))
    cov = np.atleast_2d(np.asarray(cov, dtype=np.float64))
    k = mean.size - 1
    if cov.shape != (k + 1, k + 1):
        raise fail("cov", f"an array of shape {cov.shape}", f"shape ({k + 1}, {k + 1}) to match mean")
    n = check_int("count", count, low=k + 3)  # a residual variance needs n - k - 1 >= 2
    if k == 0:
        return Estimate(float(mean[0]), math.sqrt(max(cov[0, 0], 0.0) / n), df=n - 1)
    mu = np.broadcast_to(np.asarray(x_mean, dtype=np.float64), (k,))
    sxx, sxy = cov[1:, 1:], cov[1:, 0]
    scale = np.sqrt(np.clip(np.diag(sxx), 0.0, None))
    live = scale > 0
    beta = np.zeros(k)
    if live.any():
        s = scale[live]
        beta[live] = np.linalg.pinv(sxx[np.ix_(live, live)] / np.outer(s, s), rcond=1e-12) @ (sxy[live] / s) / s
    value = float(mean[0] - beta @ (mean[1:] - mu))
    resid = max(float(cov[0, 0] - sxy @ beta), 0.0) * (n - 1) / (n - k - 1)
    return Estimate(value, math.sqrt(resid / n), df=n - k - 1)


def control_variate_mean(y: npt.ArrayLike, x: npt.ArrayLike, x_mean: npt.ArrayLike = 0.0) -> Estimate:
    r"""Mean of ``y`` with the control variate(s) ``x`` of known mean(s) ``x_mean``.

    ``y: (n,)``; ``x: (n,)`` (one control) or ``(n, k)``; ``x_mean`` a number or
    ``(k,)``. :math:`\hat\mu = \bar y - \hat\beta^\top(\bar x - \mu_x)` with
    :math:`\hat\beta` the least-squares coefficients of :math:`y` on :math:`x`. Its
    standard error is that of the residuals :math:`y - \hat\beta^\top x`, i.e.
    :math:`\sqrt{1-R^2}` times the plain one (asymptotically; estimating
    :math:`\beta` costs ``k`` degrees of freedom). Computed by
    :func:`control_variate_moments` from the samples' mean and covariance.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    x = np.asarray(x, dtype=np.float64)
    x = x.reshape(-1, 1) if x.ndim == 1 else x
    if x.ndim != 2 or x.shape[0] != y.size:
        raise fail("x", f"an array of shape {x.shape}", f"shape ({y.size},) or ({y.size}, k): paired with y")
    check_int("len(y)", y.size, low=x.shape[1] + 3)
    z = np.column_stack([y, x])
    return control_variate_moments(z.mean(0), np.cov(z, rowvar=False, ddof=1), y.size, x_mean)


def wald_test(mean: npt.ArrayLike, cov: npt.ArrayLike, count: int,
              null: npt.ArrayLike = 0.0) -> tuple[float, int, float]:
    r"""Wald test that a vector of means equals ``null``: ``(chi2, df, p_value)``.

    ``mean: (k,)`` and ``cov: (k, k)`` are the sample mean and covariance of
    ``count`` draws; :math:`\chi^2 = N(\bar v - v_0)^\top\hat\Sigma^{+}(\bar v - v_0)` with
    ``df`` the rank of :math:`\hat\Sigma`, referred to the chi-square law (large ``count``).
    """
    mean = np.atleast_1d(np.asarray(mean, dtype=np.float64))
    cov = np.atleast_2d(np.asarray(cov, dtype=np.float64))
    if cov.shape != (mean.size, mean.size):
        raise fail("cov", f"an array of shape {cov.shape}", f"shape ({mean.size}, {mean.size}) to match mean")
    n = check_int("count", count, low=2)
    gap = mean - np.broadcast_to(np.asarray(null, dtype=np.float64), mean.shape)
    scale = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if not (scale > 0).all():
        raise fail("cov", "a covariance with a zero variance", "positive variances (a constant entry cannot be tested)")
    corr = cov / np.outer(scale, scale)
    df = int(np.linalg.matrix_rank(corr, tol=1e-10))
    chi2 = float(n * (gap / scale) @ np.linalg.pinv(corr, rcond=1e-10) @ (gap / scale))
    return chi2, df, float(_sps().chi2.sf(chi2, df))


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


def difference_estimate(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` for two *independent* estimates: the standard errors add in quadrature."""
    return Estimate(a.value - b.value, math.hypot(a.se, b.se))


def ratio_estimate(num: Estimate, den: Estimate) -> Estimate:
    r"""``num / den`` by the delta method, the two estimates independent:
    :math:`\mathrm{se}^2 = (s_n/d)^2 + (n s_d / d^2)^2`."""
    if den.value == 0:
        raise fail("den", den.value, "an estimate with a non-zero value")
    r = num.value / den.value
    se = math.hypot(num.se / den.value, num.value * den.se / den.value**2)
    return Estimate(r, abs(se))


def bootstrap_interval(statistic: Callable[[np.ndarray], float], samples: npt.ArrayLike, *, n_boot: int = 2000,
                       level: float = 0.95, rng: np.random.Generator | int) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(samples[idx])`` over resampled rows.

    ``samples: (n, ...)``; rows are resampled with replacement ``n_boot`` times
    with ``rng`` (a ``numpy.random.Generator`` or a seed) by ``scipy.stats.bootstrap``, which
    resamples the row indices (so rows of any shape, and several arrays stacked
    along a row, move together). Resamples where ``statistic`` is NaN (a ratio
    whose denominator vanishes) are left out of the quantiles.
    """
    samples = np.asarray(samples)
    level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    reps = bootstrap_replicates(lambda idx: statistic(samples[idx]), len(samples), n_boot=n_boot, rng=rng)
    lo, hi = np.nanquantile(reps, [0.5 - level / 2, 0.5 + level / 2])
    return float(lo), float(hi)


def bootstrap_replicates(statistic: Callable[[np.ndarray], Any], n: int, *, n_boot: int,
                         rng: np.random.Generator | int) -> np.ndarray:
    """``statistic(idx)`` over ``n_boot`` resamples ``idx: (n,)`` of the row indices
    ``0..n-1`` drawn with replacement by ``scipy.stats.bootstrap`` with ``rng``:
    ``(n_boot,)``, or ``(k, n_boot)`` for a statistic that returns ``k`` numbers. The
    index stream is that of ``n_boot`` calls of ``rng.integers(0, n, n)`` (the loop it
    replaces), and ``rng`` is left where that loop would leave it. Replicates where the
    statistic is NaN stay NaN: the callers' quantiles and deviations skip them
    (scipy's own interval would be NaN; ``tests/test_stats.py``)."""
    n = check_int("n", n, low=2)
    n_boot = check_int("n_boot", n_boot, low=10)
    rng = as_generator("rng", rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _sps().DegenerateDataWarning)
        result = _sps().bootstrap((np.arange(n),), statistic, n_resamples=n_boot, vectorized=False,
                                  method="percentile", rng=rng)
    return np.asarray(result.bootstrap_distribution, dtype=np.float64)


def spearman(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Spearman's rank correlation of two profiles ``a, b: (L,)``."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size < 3:
        raise fail("b", f"an array of shape {b.shape}", f"the shape of a, {a.shape}, with at least 3 entries")
    return float(_sps().spearmanr(a, b).statistic)


def noise_ceiling(first: npt.ArrayLike, second: npt.ArrayLike) -> float:
    """The Spearman correlation between two *independent* estimates of the same profile.

    No comparison of one noisy estimate with a model can be expected to exceed
    it: a Spearman against a theory is read against this ceiling, not against 1.
    ``first, second: (L,)``, from disjoint samples (e.g. two halves of the sequences).
    """
    return spearman(first, second)


def log_linear_rate(x: npt.ArrayLike, y: npt.ArrayLike) -> Estimate:
    r"""The slope of :math:`\log y` against ``x`` by least squares, with its standard error
    (``n - 2`` degrees of freedom): :math:`y \approx C e^{\text{slope}\,x}`. ``x, y: (n,)``, ``y > 0``."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size < 3:
        raise fail("y", f"an array of shape {y.shape}", f"the shape of x, {x.shape}, with at least 3 points")
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise fail("y", "an array with non-positive or non-finite entries", "positive finite numbers")
    fit = _sps().linregress(x, np.log(y))
    return Estimate(float(fit.slope), float(fit.stderr), df=x.size - 2)

def welch_difference(a: npt.ArrayLike, b: npt.ArrayLike) -> Estimate:
    r"""``mean(a) - mean(b)`` for two *independent* samples ``a: (n,)``, ``b: (m,)``, with
    standard error :math:`\sqrt{s_a^2/n + s_b^2/m}` and the Welch--Satterthwaite
    degrees of freedom (rounded down)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.size < 2 or b.size < 2:
        raise fail("a, b", f"samples of sizes {a.size} and {b.size}", "at least 2 samples each")
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0:
        return Estimate(float(a.mean() - b.mean()), 0.0, df=a.size + b.size - 2)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return Estimate(float(a.mean() - b.mean()), se, df=max(int(df), 1))


def linear_slope(x: npt.ArrayLike, estimates: Sequence[Estimate]) -> Estimate:
    r"""The slope of ``estimates`` (a sequence of :class:`Estimate`) against ``x: (m,)`` by
    weighted least squares (weights :math:`1/\mathrm{se}^2`), with standard error
    :math:`(\sum_i w_i (x_i - \bar x_w)^2)^{-1/2}`, inflated by the square root of the
    reduced :math:`\chi^2` when the points scatter more than their errors allow
    (then with ``m - 2`` degrees of freedom; otherwise a normal interval).
    Needs ``m >= 3`` and positive errors."""
    x = np.asarray(x, dtype=np.float64).ravel()
    est = list(estimates)
    if x.size != len(est) or x.size < 3:
        raise fail("x", f"{x.size} points for {len(est)} estimates", "as many points as estimates, at least 3")
    y = np.array([e.value for e in est])
    se = np.array([e.se for e in est])
    if np.any(se <= 0) or not np.all(np.isfinite(se)):
        raise fail("estimates", "estimates with zero or non-finite errors", "positive standard errors")
    w = 1.0 / se**2
    xm = float((w * x).sum() / w.sum())
    sxx = float((w * (x - xm) ** 2).sum())
    if sxx == 0:
        raise fail("x", x.tolist(), "at least two distinct values")
    slope = float((w * (x - xm) * y).sum() / sxx)
    ym = float((w * y).sum() / w.sum())
    chi2 = float((w * (y - ym - slope * (x - xm)) ** 2).sum()) / (x.size - 2)
    if chi2 > 1:
        return Estimate(slope, math.sqrt(chi2 / sxx), df=x.size - 2)
    return Estimate(slope, 1.0 / math.sqrt(sxx))


def band_position(values: npt.ArrayLike, band: Sequence[Estimate], *, level: float = 0.95) -> list[str]:
    """Where each of ``values`` lies against a band of estimates: ``"below"`` when it lies
    under every ``level`` interval of ``band`` (a sequence of :class:`Estimate`),
    ``"above"`` when it lies over every one, ``"within"`` otherwise (between the lowest
    lower end and the highest upper end)."""
    band = list(band)
    if not band:
        raise fail("band", "an empty sequence", "at least one Estimate")
    ends = [e.interval(level) for e in band]
    lo, hi = min(e[0] for e in ends), max(e[1] for e in ends)
    return ["below" if v < lo else "above" if v > hi else "within" for v in np.asarray(values, float).ravel()]


def interior_peak(xs: Sequence[float], estimates: Sequence[Estimate], *, level: float = 0.95) -> float | None:
    """The ``x`` of the largest of ``estimates`` (independent :class:`Estimate` s, one per
    ``x`` in ``xs``) when that peak lies *before* the largest ``x`` and exceeds the
    estimate there beyond the ``level`` interval of their difference; ``None`` otherwise
    (the largest value is at the end, one ``x`` only, or the drop after the peak is within the noise)."""
    xs = list(xs)
    estimates = list(estimates)
    if len(xs) != len(estimates) or not xs:
        raise fail("estimates", f"{len(estimates)} estimate(s) for {len(xs)} x value(s)",
                   "one estimate per x, at least one")
    order = np.argsort(xs)
    xs = [xs[i] for i in order]
    estimates = [estimates[i] for i in order]
    i = int(np.argmax([e.value for e in estimates]))
    if i == len(xs) - 1:
        return None
    peak, last = estimates[i], estimates[-1]
    drop = difference_estimate(peak, last)
    return xs[i] if drop.interval(level)[0] > 0 else None


@dataclass(frozen=True)
class FittedParameter:
    """A fitted parameter: ``value``, the search ``bounds`` and an ``interval`` (or ``None``).

    ``degenerate``: the value, or an end of its interval, lies on a bound of the
    search (within ``tol`` of the bound range). A degenerate fit is reported as
    such, never as a value of the parameter."""

    name: str
    value: float
    bounds: tuple[float, float]
    interval: tuple[float, float] | None
    degenerate: bool

    @property
    def label(self) -> str:
        """``"degenerate"`` or ``"interior"``."""
        return "degenerate" if self.degenerate else "interior"

    def covers(self, x: float) -> bool:
        """``x`` lies in the interval of an interior fit (``False`` for a degenerate
        fit, or one without an interval: neither says anything about ``x``)."""
        return self.interval is not None and not self.degenerate and self.interval[0] <= x <= self.interval[1]

    def format(self, digits: int = 3) -> str:
        """``0.27 [0.25, 0.30]``, or ``degenerate (0.005, a bound of the search [0.005, 1])``."""
        if self.degenerate:
            lo, hi = self.bounds
            return f"degenerate ({self.value:.{digits}g}; the search range [{lo:.{digits}g}, {hi:.{digits}g}] binds)"
        if self.interval is None:
            return f"{self.value:.{digits}g}"
        return f"{self.value:.{digits}g} [{self.interval[0]:.{digits}g}, {self.interval[1]:.{digits}g}]"

    def __str__(self) -> str:
        return self.format()


def fitted_parameter(name: str, value: float, bounds: tuple[float, float],
                     interval: tuple[float, float] | None = None, *, tol: float = 1e-3,
                     log: bool = False) -> FittedParameter:
    """Label a fitted value: degenerate when ``value`` or an end of ``interval`` is within
    ``tol * (high - low)`` of a bound ``(low, high)`` of the search (``log=True``: a
    search in the logarithm of a positive parameter; distances are taken there)."""
    lo, hi = (float(x) for x in bounds)
    if not hi > lo or (log and lo <= 0):
        raise fail("bounds", bounds, "(low, high) with low < high" + (", low > 0 (log=True)" if log else ""))
    tol = check_float("tol", tol, low=0.0)
    value = float(value)
    if not math.isfinite(value) or (log and value <= 0):
        raise fail("value", value, "a finite number" + (" > 0 (log=True)" if log else ""))
    points = [value] + ([] if interval is None else [float(interval[0]), float(interval[1])])
    f = (lambda x: math.log(max(x, 1e-300))) if log else (lambda x: x)
    margin = tol * (f(hi) - f(lo))
    degenerate = any(f(p) <= f(lo) + margin or f(p) >= f(hi) - margin for p in points)
    iv = None if interval is None else (float(interval[0]), float(interval[1]))
    return FittedParameter(name, value, (lo, hi), iv, degenerate)
