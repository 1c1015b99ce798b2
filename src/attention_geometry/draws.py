r"""Estimates over weight draws: for a randomly initialised model the replicate is the draw.

A claim about "a randomly initialised model" is a claim about the distribution of
weights, not about one draw of them. Sequences fed to one draw are replicates of that
draw only: an interval over them says how well *that* network was measured, and
re-drawing the weights can move the value by more than the interval (and flip its
sign). So the sequences are spread over :math:`k` independent draws, :math:`m_i` of
them through draw :math:`i`, and the estimate is taken over the draws.

With :math:`y_{is}` the value of sequence :math:`s` through draw :math:`i`, write the
draw means :math:`\bar y_i` (one-way random effects: :math:`\bar y_i = \mu + b_i +
\bar e_i`, draw effect :math:`b_i` of variance :math:`\sigma_b^2`, within-draw noise of
variance :math:`\sigma_w^2`). :func:`over_draws` returns

.. math::

    \hat\mu = \frac1k\sum_i \bar y_i, \qquad
    \mathrm{se}^2 = \frac{s^2_{\bar y}}{k}, \qquad \text{df} = k - 1,

with :math:`s^2_{\bar y}` the sample variance of the draw means. The draw means are
independent with variances :math:`\sigma_b^2 + \sigma_w^2/m_i`, so :math:`s^2_{\bar y}/k`
is unbiased for :math:`\mathrm{Var}\,\hat\mu` whatever the :math:`m_i`: the within-draw
error is included, not added on top, and nothing needs to be known about how the
variance splits. The Student-t interval with :math:`k - 1` degrees of freedom is exact
for normal draw means and sound for means of many sequences; it is what the rules of
:mod:`~attention_geometry.verdicts` read.

Why not a two-level bootstrap (draws, then sequences within draws)? With the few draws
a chapter can afford (8), a bootstrap over draws has a standard error too small by
:math:`\sqrt{(k-1)/k}` and percentile intervals that undercover; resampling sequences
within the resampled draws counts the within-draw noise a second time. The t interval
over draw means has neither defect and needs no random numbers.

:func:`sign_stability` counts the draws whose mean lies on the same side of a
reference (0 for a sign, a bound, or the two ends of a band) as the estimate;
:func:`~attention_geometry.verdicts.draws_verdict` lets a verdict be decisive only
when that count is a majority beyond chance, which at the minimum of 8 draws means
every draw. :func:`draw_slices` spreads ``n`` sequences over ``k`` draws,
:func:`draw_seed` gives each draw its seed.

How the variance of one measurement splits between the levels of the design --
draws, the sequences within a draw, the probes within a sequence -- is
:func:`nested_variance`: the balanced nested random-effects model
:math:`y_{isp} = \mu + a_i + b_{is} + e_{isp}` with variances
:math:`\sigma_a^2, \sigma_b^2, \sigma_e^2`, estimated from the mean squares of
each level (method of moments, unbiased):

.. math::

    \hat\sigma_e^2 = \mathrm{MS}_e, \qquad
    \hat\sigma_b^2 = \frac{\mathrm{MS}_b - \mathrm{MS}_e}{p}, \qquad
    \hat\sigma_a^2 = \frac{\mathrm{MS}_a - \mathrm{MS}_b}{m p},

with :math:`\mathbb E\,\mathrm{MS}_e = \sigma_e^2`,
:math:`\mathbb E\,\mathrm{MS}_b = \sigma_e^2 + p\sigma_b^2` and
:math:`\mathbb E\,\mathrm{MS}_a = \sigma_e^2 + p\sigma_b^2 + mp\sigma_a^2`
(:math:`k` draws, :math:`m` sequences each, :math:`p` probes each).

A statistic that is not a mean of per-sequence values (a correlation of the average
profile with a fit, a fitted rate) gets the same treatment from
:func:`jackknife_over_draws`: the delete-one-draw jackknife, whose pseudo-values
:math:`k\hat\theta - (k-1)\hat\theta_{(-i)}` play the part of the draw means (for the
mean of the draw means they *are* the draw means, and the result is
:func:`over_draws` exactly).
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._checks import check_int, described, fail
from .stats import Estimate

__all__ = ["DrawEstimate", "NestedVariance", "nested_variance", "over_draws", "over_replicates", "jackknife_over_draws", "draw_difference", "sign_stability",
           "side_shared", "draw_slices", "draw_seed"]


@dataclass(frozen=True)
class DrawEstimate(Estimate):
    """An :class:`~attention_geometry.stats.Estimate` over ``n_draws`` independent weight
    draws, with each draw's mean (``draw_means: (n_draws,)``). With one draw the standard
    error is the within-draw one, over sequences only."""

    n_draws: int = 1
    draw_means: tuple[float, ...] = ()


def over_draws(per_draw: Sequence[npt.ArrayLike]) -> DrawEstimate:
    """The mean of the draw means, with the standard error of the draw means over ``sqrt(k)``
    and ``k - 1`` degrees of freedom (see the module). ``per_draw``: one array of
    per-sequence values per draw (a number: a draw measured on one sequence); a 1-D
    array of ``k`` numbers is ``k`` draws of one sequence each.

    One draw (``k = 1``) gives the within-draw estimate, the mean over its sequences
    with their standard error: all that one draw can give, which
    :func:`~attention_geometry.verdicts.draws_verdict` does not let decide."""
    draws = [np.asarray(v, dtype=np.float64).ravel() for v in per_draw]
    if not draws or any(v.size == 0 for v in draws):
        raise fail("per_draw", described(f"{len(draws)} draw(s), some empty" if draws else "no draws"),
                   "at least one draw with at least one value each")
    means = np.array([v.mean() for v in draws])
    k = len(draws)
    if k == 1:
        x = draws[0]
        if x.size < 2:
            raise fail("per_draw", described("one draw of one sequence"),
                       "two draws, or one draw of two sequences or more")
        return DrawEstimate(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), x.size - 1,
                            n_draws=1, draw_means=(float(x.mean()),))
    return DrawEstimate(float(means.mean()), float(means.std(ddof=1) / math.sqrt(k)), k - 1, n_draws=k,
                        draw_means=tuple(float(m) for m in means))


@dataclass(frozen=True)
class NestedVariance:
    r"""The variance components of :func:`nested_variance`, each of the trailing shape of its
    input (one per position, say): ``draws`` (:math:`\sigma_a^2`), ``sequences`` within a draw
    (:math:`\sigma_b^2`), ``probes`` within a sequence (:math:`\sigma_e^2`). Unbiased, so an
    estimate can fall below zero where a component is small."""

    draws: np.ndarray
    sequences: np.ndarray
    probes: np.ndarray

    def shares(self) -> np.ndarray:
        """``(3, ...)``: each component, negative estimates set to 0, over their sum (draws,
        sequences, probes)."""
        parts = np.maximum(np.stack([self.draws, self.sequences, self.probes]), 0.0)
        total = parts.sum(0)
        return np.divide(parts, total, out=np.full_like(parts, np.nan), where=total > 0)


def nested_variance(y: npt.ArrayLike) -> NestedVariance:
    """The variance components of ``y: (k, m, p, ...)`` -- ``k`` draws, ``m`` sequences per draw,
    ``p`` replicates (probes) per sequence, any trailing axes computed apart -- in the
    balanced nested random-effects model of the module (method of moments). Needs ``k >= 2``,
    ``m >= 2`` and ``p >= 2`` (with one probe per sequence the probes cannot be told apart from
    the sequences)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim < 3 or min(y.shape[:3]) < 2:
        raise fail("y", described(f"an array of shape {y.shape}"),
                   "an array (k, m, p, ...) with k, m, p >= 2 (draws, sequences, probes)")
    k, m, p = y.shape[:3]
    seq_means = y.mean(2)
    draw_means = seq_means.mean(1)
    ms_e = ((y - seq_means[:, :, None]) ** 2).sum((0, 1, 2)) / (k * m * (p - 1))
    ms_b = p * ((seq_means - draw_means[:, None]) ** 2).sum((0, 1)) / (k * (m - 1))
    ms_a = m * p * ((draw_means - draw_means.mean(0)) ** 2).sum(0) / (k - 1)
    return NestedVariance(draws=(ms_a - ms_b) / (m * p), sequences=(ms_b - ms_e) / p, probes=ms_e)


def over_replicates(values: npt.ArrayLike, n_draws: int) -> DrawEstimate:
    """:func:`over_draws` of replicate values ``values: (r,)``: with ``n_draws > 1`` they are the
    draws (one value each, ``r = n_draws``), with one draw they are its sequences."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if check_int("n_draws", n_draws, low=1) == 1:
        return over_draws([values])
    if values.size != n_draws:
        raise fail("values", described(f"{values.size} values"), f"one per draw ({n_draws})")
    return over_draws(values)


def jackknife_over_draws(statistic: Callable[[list[np.ndarray]], float],
                         per_draw: Sequence[npt.ArrayLike]) -> DrawEstimate:
    r"""``statistic`` of every draw's data with its delete-one-draw jackknife standard error and
    ``k - 1`` degrees of freedom. ``per_draw``: one array per draw (rows: its sequences, any
    trailing shape); ``statistic`` takes a list of such arrays.

    ``value``: the statistic of all ``k`` draws; ``se``: the standard deviation of the
    pseudo-values :math:`\tilde\theta_i = k\hat\theta - (k-1)\hat\theta_{(-i)}` over
    :math:`\sqrt k`, which is the jackknife's :math:`\sqrt{\tfrac{k-1}{k}\sum_i(\hat\theta_{(-i)}
    - \bar\theta)^2}`; ``draw_means``: the pseudo-values, each draw's share of the statistic
    (for the mean of the draw means, the draw means themselves). With one draw the rows of its
    array (its sequences) are left out one at a time instead, and ``n_draws`` stays 1."""
    draws = [np.asarray(v, dtype=np.float64) for v in per_draw]
    if not draws or any(v.shape[0] == 0 for v in draws if v.ndim):
        raise fail("per_draw", described(f"{len(draws)} draw(s), some empty" if draws else "no draws"),
                   "at least one draw with at least one row each")
    n_draws = len(draws)
    if n_draws == 1:
        if draws[0].ndim == 0 or draws[0].shape[0] < 2:
            raise fail("per_draw", described("one draw of one sequence"),
                       "two draws, or one draw of two sequences or more")
        draws = [row[None] for row in draws[0]]
    k = len(draws)
    theta = float(statistic(draws))
    left_out = np.array([statistic(draws[:i] + draws[i + 1:]) for i in range(k)], dtype=np.float64)
    pseudo = k * theta - (k - 1) * left_out
    return DrawEstimate(theta, float(pseudo.std(ddof=1) / math.sqrt(k)), k - 1, n_draws=n_draws,
                        draw_means=tuple(float(p) for p in pseudo) if n_draws > 1 else (theta,))


def draw_difference(a: DrawEstimate, b: DrawEstimate) -> DrawEstimate:
    """``a - b`` for two quantities measured on the *same* draws (draw ``i`` of both on the
    same weights), paired by draw: :func:`over_draws` of the per-draw differences. One
    draw each: the difference of the two values with their standard errors in quadrature
    (what one draw can give; the within-draw samples are not kept)."""
    if a.n_draws != b.n_draws or len(a.draw_means) != len(b.draw_means):
        raise fail("b", described(f"an estimate over {b.n_draws} draw(s)"),
                   f"the {a.n_draws} draw(s) of a (paired by draw)")
    if a.n_draws == 1:
        df = None if a.df is None or b.df is None else min(a.df, b.df)
        return DrawEstimate(a.value - b.value, math.hypot(a.se, b.se), df, n_draws=1,
                            draw_means=(a.value - b.value,))
    return over_draws(np.subtract(a.draw_means, b.draw_means))


def _side(x: float, low: float, high: float) -> int:
    return -1 if x < low else 1 if x > high else 0


def sign_stability(draws: DrawEstimate | Sequence[npt.ArrayLike],
                   reference: float | tuple[float, float] = 0.0) -> tuple[int, int]:
    """``(n_same, k)``: of the ``k`` draws, how many have their mean on the same side of
    ``reference`` as the estimate over all draws.

    ``draws``: a :class:`DrawEstimate`, or one array of per-sequence values per draw (as
    :func:`over_draws` takes them). ``reference``: a number (the sign of ``x - reference``;
    a draw exactly at it counts only when the estimate is too), or ``(low, high)``, the
    ends of a band: the sides are below, within and above."""
    est = draws if isinstance(draws, DrawEstimate) else over_draws(draws)
    if not est.draw_means:
        raise fail("draws", described("an estimate without its draw means"), "a DrawEstimate from over_draws")
    low, high = (reference, reference) if np.isscalar(reference) else (float(reference[0]), float(reference[1]))
    if not low <= high:
        raise fail("reference", reference, "a number or (low, high) with low <= high")
    side = _side(est.value, low, high)
    return sum(_side(m, low, high) == side for m in est.draw_means), len(est.draw_means)


def side_shared(same: int, k: int, *, level: float = 0.95) -> bool:
    """Whether ``same`` of ``k`` draws on one side are a majority beyond chance: the exact
    (Clopper--Pearson) ``level`` interval of ``same / k`` lies above 1/2 (the test of
    :func:`~attention_geometry.verdicts.draws_verdict`; at 8 draws it needs all 8, at 10 it needs 9)."""
    from .ratios import clopper_pearson
    return clopper_pearson(same, k, level=level)[0] > 0.5


def draw_seed(seed: int, draw: int) -> int:
    """The seed of weight draw ``draw`` of an experiment seeded ``seed``: ``seed`` itself for the
    first (so that one draw is the experiment as it was), then independent streams of
    ``numpy.random.SeedSequence([seed, draw])``."""
    seed, draw = check_int("seed", seed, low=0), check_int("draw", draw, low=0)
    return seed if draw == 0 else int(np.random.SeedSequence([seed, draw]).generate_state(1)[0])


def draw_slices(n: int, n_draws: int) -> list[slice]:
    """``n`` sequences spread over ``n_draws`` draws: consecutive slices, their sizes
    differing by at most one (every draw gets at least one sequence)."""
    n = check_int("n", n, low=1)
    n_draws = check_int("n_draws", n_draws, low=1, high=n)
    ends = np.linspace(0, n, n_draws + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])]
