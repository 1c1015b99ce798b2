r"""Power: what a measurement could have seen, and what would decide it.

An interval that contains both a claim and its negation decides nothing; an
interval inside a tolerance band says nothing about effects smaller than the
noise. These functions turn a measured standard error into the numbers a
verdict needs to say so (:mod:`.verdicts` words them):

* :func:`detectable_effect` -- the smallest true departure that a two-sided
  ``level`` interval excludes with probability ``power``:
  :math:`(z_{1-\alpha/2} + z_{\text{power}})\,\mathrm{se}`;
* :func:`samples_to_decide` -- the sample size at which an interval of the
  measured centre would clear a ``margin``, the standard error scaling as
  :math:`1/\sqrt n`: :math:`n' = n\,(z_{1-\alpha/2}\,\mathrm{se}/\text{margin})^2`;
* :func:`projected_reliability` -- the Spearman--Brown prophecy: the reliability
  :math:`r` of an average of ``n_from`` replicates, projected to ``n_to``:
  :math:`k r / (1 + (k - 1) r)` with :math:`k = n_\text{to}/n_\text{from}`;
* :func:`samples_for_reliability` -- the prophecy solved for the sample size:
  :math:`n' = n\,r'(1-r)/(r(1-r'))` replicates reach reliability :math:`r'`;
* :func:`model_reference` -- the correlation a *noiseless* model of the true
  profile is expected to reach with one average of reliability :math:`r`:
  :math:`\sqrt r`. (The reliability itself is the expected correlation between
  *two* independent averages: each carries the noise, the model does not.)

Normal quantiles are used throughout: a projection to another sample size is a
large-sample statement.
"""

import math

from ._checks import check_float, check_int
from .stats import Estimate

__all__ = ["detectable_effect", "samples_to_decide", "projected_reliability", "samples_for_reliability",
           "model_reference"]


def _z(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


def detectable_effect(se: float, *, level: float = 0.95, power: float = 0.8) -> float:
    r"""The smallest true departure (from a claim, a band edge or a bound) that a two-sided
    ``level`` interval of standard error ``se`` excludes with probability ``power``:
    :math:`(z_{(1+\text{level})/2} + z_\text{power})\,\mathrm{se}` (``2.80 se`` at 95 %, 80 %)."""
    se = check_float("se", se, low=0.0)
    level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    power = check_float("power", power, low=0.0, high=1.0, low_open=True, high_open=True)
    return (_z(0.5 + level / 2) + _z(power)) * se


def samples_to_decide(se: float, margin: float, n: int, *, level: float = 0.95) -> float:
    r"""The number of samples at which the ``level`` interval's half-width
    :math:`z\,\mathrm{se}\sqrt{n/n'}` falls below ``margin`` (the distance of the measured
    value from the edge it must clear), the centre staying where it is:
    :math:`n' = n\,(z\,\mathrm{se}/\text{margin})^2`, rounded up, at least ``n``.
    ``inf`` when ``margin <= 0`` (the centre sits on the edge: no sample size clears it)."""
    se = check_float("se", se, low=0.0)
    margin = check_float("margin", margin)
    n = check_int("n", n, low=1)
    level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    if margin <= 0:
        return math.inf
    return float(max(n, math.ceil(n * (_z(0.5 + level / 2) * se / margin) ** 2)))


def projected_reliability(r: float, n_from: int, n_to: int) -> float:
    r"""Spearman--Brown: the reliability of an average of ``n_to`` replicates from the
    reliability ``r`` of an average of ``n_from``, :math:`k r / (1 + (k-1) r)`,
    :math:`k = n_\text{to}/n_\text{from}` (``r <= 0`` stays ``r``: no signal to project)."""
    r = check_float("r", r, low=-1.0, high=1.0)
    k = check_int("n_to", n_to, low=1) / check_int("n_from", n_from, low=1)
    if r <= 0:
        return r
    return k * r / (1 + (k - 1) * r)


def samples_for_reliability(r: float, n: int, target: float) -> float:
    r"""The number of replicates whose average reaches reliability ``target``, from the
    reliability ``r`` of an average of ``n``: :func:`projected_reliability` solved for
    ``n_to``, :math:`n\,t(1-r)/(r(1-t))`, rounded up. ``inf`` when ``r <= 0`` (no signal)
    or ``target >= 1`` (only infinitely many replicates are noiseless)."""
    r = check_float("r", r, low=-1.0, high=1.0)
    n = check_int("n", n, low=1)
    target = check_float("target", target, low=-1.0, high=1.0)
    if r <= 0 or target >= 1:
        return math.inf
    if r >= 1:
        return float(n)
    return float(math.ceil(n * target * (1 - r) / (r * (1 - target)) - 1e-9))


def model_reference(reliability: Estimate) -> Estimate:
    r"""The expected correlation of a noiseless model with one average whose reliability
    (the expected correlation of two independent such averages, e.g. a split-half
    correlation stepped up by Spearman--Brown) is ``reliability``: :math:`\sqrt r`, with
    the delta-method error :math:`\mathrm{se}_r / (2\sqrt r)` (``r`` clipped at 0)."""
    r = max(reliability.value, 0.0)
    if r == 0:
        return Estimate(0.0, math.sqrt(max(reliability.se, 0.0)), reliability.df)
    return Estimate(math.sqrt(min(r, 1.0)), reliability.se / (2 * math.sqrt(r)), reliability.df)
