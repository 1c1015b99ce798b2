r"""Extremes without selection bias: choose on one half, measure on the other.

The largest of ``L`` noisy means is biased upward (and the smallest downward):
the maximum picks the position whose noise happened to be largest. A max/min
ratio, a peak or a trough, "the largest miss" all inherit it, and the bias grows
with the noise, so a noisier profile looks deeper. Choosing the position on one
half of the replicates and measuring the profile there on the *other* half
removes it: the held-out half's noise is independent of the choice.

* :func:`split_half_extreme` -- the profile's maximum, minimum, or log max/min
  ratio, each position chosen on one half of the replicates and the value
  measured on the other, both ways, averaged (an :class:`~.stats.Estimate`);
* :func:`held_out_value` -- the value alone, for halves the caller chose (by weight draw,
  say), where a half may be a single replicate;
* :func:`cross_fit_extreme` -- each replicate's value at the position chosen on the
  *other* half (``max`` or ``min``): one held-out number per replicate, so that two
  models measured on the same replicates can be paired replicate by replicate;
* :func:`naive_extreme` -- the same statistic chosen and measured on all the
  replicates, with the plug-in standard error at the chosen positions: the
  biased estimate the first one replaces (kept to show the bias in tests).

Shapes: ``samples: (n, L)``, ``n`` replicates (sequences, weight draws) of a
profile over ``L`` positions; the profile is the mean over replicates.
"""

import math

import numpy as np
import numpy.typing as npt

from ._checks import check_choice, check_int, fail
from .stats import Estimate

__all__ = ["EXTREMES", "split_half_extreme", "naive_extreme", "held_out_value", "cross_fit_extreme"]

#: What :func:`split_half_extreme` picks: the maximum, the minimum, or ``log(max / min)``.
EXTREMES = ("max", "min", "log max/min")


def _samples(samples) -> np.ndarray:
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 2:
        raise fail("samples", f"an array of shape {x.shape}", "shape (n, L): replicates by positions")
    check_int("n (replicates)", x.shape[0], low=4)
    check_int("L (positions)", x.shape[1], low=2)
    return x


def held_out_value(choose: npt.ArrayLike, measure: npt.ArrayLike, extreme: str = "log max/min") -> float:
    """The ``extreme`` (one of :data:`EXTREMES`) at the position(s) chosen on the mean profile of
    ``choose: (n_1, L)``, read on the mean profile of ``measure: (n_2, L)``: the value alone, so that
    a half may be a single replicate (:func:`split_half_extreme` adds the standard error)."""
    check_choice("extreme", extreme, EXTREMES)
    pick, held = np.asarray(choose, dtype=np.float64).mean(0), np.asarray(measure, dtype=np.float64).mean(0)
    if extreme == "max":
        return float(held[int(np.argmax(pick))])
    if extreme == "min":
        return float(held[int(np.argmin(pick))])
    hi, lo = int(np.argmax(pick)), int(np.argmin(pick))
    if held[hi] <= 0 or held[lo] <= 0:
        raise fail("samples", "a profile with a non-positive mean at a chosen position",
                   "positive profiles for a log max/min ratio")
    return float(math.log(held[hi] / held[lo]))


def cross_fit_extreme(samples: npt.ArrayLike, extreme: str = "min") -> np.ndarray:
    """Each replicate's value at the position of the profile's ``extreme`` (``"max"`` or ``"min"``),
    that position chosen on the mean profile of the *other* half of the replicates (even and odd rows):
    ``(n, L) -> (n,)``. No replicate takes part in the choice it is read at, so the mean of the result
    is not pulled towards the extreme by the noise (under a flat profile its expectation is the flat
    value), and two profiles measured on the same replicates pair row by row."""
    x = _samples(samples)
    check_choice("extreme", extreme, ("max", "min"))
    pick = np.argmax if extreme == "max" else np.argmin
    out = np.empty(x.shape[0])
    even, odd = np.arange(0, x.shape[0], 2), np.arange(1, x.shape[0], 2)
    out[even] = x[even, int(pick(x[odd].mean(0)))]
    out[odd] = x[odd, int(pick(x[even].mean(0)))]
    return out


def _measure(choose: np.ndarray, measure: np.ndarray, extreme: str) -> tuple[float, float]:
    """Positions chosen on ``choose``'s mean profile, the statistic and its standard error on ``measure``."""
    pick, held = choose.mean(0), measure.mean(0)
    m = measure.shape[0]
    if extreme == "max":
        j = int(np.argmax(pick))
        return float(held[j]), float(measure[:, j].std(ddof=1) / math.sqrt(m))
    if extreme == "min":
        j = int(np.argmin(pick))
        return float(held[j]), float(measure[:, j].std(ddof=1) / math.sqrt(m))
    hi, lo = int(np.argmax(pick)), int(np.argmin(pick))
    if held[hi] <= 0 or held[lo] <= 0:
        raise fail("samples", "a profile with a non-positive mean at a chosen position",
                   "positive profiles for a log max/min ratio")
    # delta method for log(mean_hi) - log(mean_lo), the two columns paired by replicate
    cov = np.cov(measure[:, [hi, lo]], rowvar=False, ddof=1) / m
    g = np.array([1 / held[hi], -1 / held[lo]])
    return float(math.log(held[hi] / held[lo])), float(math.sqrt(max(g @ cov @ g, 0.0)))


def split_half_extreme(samples: npt.ArrayLike, extreme: str = "log max/min", *,
                       rng: np.random.Generator | None = None) -> Estimate:
    r"""The ``extreme`` of a profile (one of :data:`EXTREMES`) without selection bias.

    The replicates are split into two halves (even and odd rows, or a random split
    drawn with ``rng``); the position(s) of the extreme are chosen on the mean profile
    of one half and the statistic is measured on the other half's mean profile, then
    the other way round; the value is the average of the two. Its standard error is
    the average of the two held-out standard errors (no credit is taken for the
    averaging: the two measurements share the choice, so they are not independent),
    with ``n // 2 - 1`` degrees of freedom. Under a flat profile its expectation is the
    flat value (``0`` for the log ratio), whatever the noise.
    """
    x = _samples(samples)
    check_choice("extreme", extreme, EXTREMES)
    order = np.arange(x.shape[0]) if rng is None else rng.permutation(x.shape[0])
    a, b = x[order[0::2]], x[order[1::2]]
    (v1, s1), (v2, s2) = _measure(a, b, extreme), _measure(b, a, extreme)
    return Estimate((v1 + v2) / 2, (s1 + s2) / 2, df=min(a.shape[0], b.shape[0]) - 1)


def naive_extreme(samples: npt.ArrayLike, extreme: str = "log max/min") -> Estimate:
    """The ``extreme`` chosen and measured on the same (all) replicates, with the plug-in
    standard error at the chosen positions: biased away from the flat value by the noise
    (upward for ``max`` and the log ratio, downward for ``min``). Use
    :func:`split_half_extreme`; this one shows what it corrects."""
    x = _samples(samples)
    check_choice("extreme", extreme, EXTREMES)
    value, se = _measure(x, x, extreme)
    return Estimate(value, se, df=x.shape[0] - 1)
