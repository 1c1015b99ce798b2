r"""Main effects, interactions and line slopes of a factorial design whose replicate is the weight draw.

A design crosses factors :math:`F_1, \dots, F_p` with :math:`n_1, \dots, n_p` levels and measures
every cell on the same :math:`k` replicates (for a randomly initialised model, the weight draws of
:mod:`attention_geometry.draws`: draw :math:`i` of every cell uses the same seed, so that the draws
are blocks). The data are the per-draw cell means ``Y: (k, n_1, ..., n_p)``.

A *term* picks a set :math:`T` of factors and, for each, a level :math:`l_f` contrasted with a
reference level :math:`r_f` (by default the first). Its per-draw value is the :math:`|T|`-fold
difference, averaged with equal weights over the levels of the factors not in :math:`T`:

.. math::

    e_i(T) = \operatorname{mean}_{\text{other factors}}
    \sum_{S \subseteq T} (-1)^{|T| - |S|}\, Y_i\big[f \in S: l_f,\ f \in T \setminus S: r_f\big].

For one factor it is the main effect :math:`\bar Y(l) - \bar Y(r)`; for two it is the
difference of differences :math:`(Y_{l l'} - Y_{r l'}) - (Y_{l r'} - Y_{r r'})`, how much the
effect of one factor changes when the other is switched (0: the two act additively). With two
levels per factor the textbook effect of a :math:`2^p` design is this value over :math:`2^{|T|-1}`;
it is not halved here, so that an interaction reads in the response's units as "the change of an
effect". A factor with :math:`n > 2` levels gives :math:`n - 1` contrasts, one
per non-reference level.

The estimate of a term is :func:`~attention_geometry.draws.over_draws` of the :math:`k` values
:math:`e_i(T)`: their mean, the standard error of their mean and :math:`k - 1` degrees of freedom.
It is exact for any within-draw dependence between cells, since the draws are independent and
identically distributed; pairing by draw removes the draw-to-draw variation that every cell
shares.

:func:`line_slopes` reads a *line* of the design (one factor varied, the others fixed): the
least-squares slope of the response against a numeric coordinate of that factor, per draw, and its
estimate over the draws.

:func:`familywise_level` is the Bonferroni level that keeps the chance that *any* of :math:`m`
intervals excludes 0 under pure noise at :math:`1 - \text{level}`.

Numbers only; the words and verdicts are the callers' (:mod:`attention_geometry.verdicts`).
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._checks import check_float, check_int, described, fail
from .draws import DrawEstimate, over_draws

__all__ = ["Term", "factorial_effects", "line_slopes", "familywise_level"]


@dataclass(frozen=True)
class Term:
    """One main effect or interaction: ``contrasts``, one ``(factor, level, reference)`` per factor
    of the term, and its :class:`~attention_geometry.draws.DrawEstimate` over the draws."""

    contrasts: tuple[tuple[str, object, object], ...]
    estimate: DrawEstimate

    @property
    def order(self) -> int:
        """1: a main effect; 2: a two-factor interaction; ..."""
        return len(self.contrasts)


def _check_design(Y: npt.ArrayLike, factors: Sequence[tuple[str, Sequence]]) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    shape = tuple(len(levels) for _, levels in factors)
    if not factors or Y.shape[1:] != shape:
        raise fail("Y", described(f"an array of shape {Y.shape}"), f"(draws, *levels) = (k, {', '.join(map(str, shape))})")
    check_int("draws", Y.shape[0], low=2)
    if any(len(levels) < 2 for _, levels in factors):
        raise fail("factors", [name for name, _ in factors], "factors with at least two levels each")
    if not np.all(np.isfinite(Y)):
        raise fail("Y", described("an array with non-finite entries"), "finite per-draw cell means")
    return Y


def factorial_effects(Y: npt.ArrayLike, factors: Sequence[tuple[str, Sequence]], *, max_order: int | None = None,
                      reference: dict[str, object] | None = None) -> list[Term]:
    """Every main effect and interaction of the design, each over the draws (see the module).

    ``Y: (k, n_1, ..., n_p)``: per-draw cell means, ``k >= 2`` draws, the same draw in every cell.
    ``factors``: ``[(name, levels), ...]`` in the order of ``Y``'s axes 1..p. ``reference``: per
    factor, the level every other level is contrasted with (default: its first). ``max_order``: the
    highest order of interaction returned (default: all, up to ``p``). Terms in order of increasing
    order, then of the factors."""
    Y = _check_design(Y, factors)
    p = len(factors)
    max_order = p if max_order is None else check_int("max_order", max_order, low=1, high=p)
    ref_index = []
    for name, levels in factors:
        ref = (reference or {}).get(name, levels[0])
        if ref not in list(levels):
            raise fail("reference", {name: ref}, f"one of the levels of {name}: {list(levels)}")
        ref_index.append(list(levels).index(ref))
    out = []
    for order in range(1, max_order + 1):
        for chosen in itertools.combinations(range(p), order):
            others = [ax for ax in range(p) if ax not in chosen]
            choices = [[lv for lv in range(len(factors[ax][1])) if lv != ref_index[ax]] for ax in chosen]
            for levels in itertools.product(*choices):
                per_draw = np.zeros(Y.shape[0])
                for subset in itertools.product((0, 1), repeat=order):  # 1: the contrast's level, 0: its reference
                    index = [slice(None)] * (p + 1)
                    for ax, lv, use in zip(chosen, levels, subset):
                        index[ax + 1] = lv if use else ref_index[ax]
                    cell = Y[tuple(index)]  # (k, levels of the other factors)
                    sign = (-1) ** (order - sum(subset))
                    per_draw += sign * cell.reshape(Y.shape[0], -1).mean(-1) if others else sign * cell
                contrasts = tuple((factors[ax][0], factors[ax][1][lv], factors[ax][1][ref_index[ax]])
                                  for ax, lv in zip(chosen, levels))
                out.append(Term(contrasts, over_draws(per_draw)))
    return out


def line_slopes(Y: npt.ArrayLike, x: npt.ArrayLike, *, axis: int) -> np.ndarray:
    """The least-squares slope of the response against ``x`` along design axis ``axis`` (0: the
    first factor), per draw, for every line of the design: an object array of
    :class:`~attention_geometry.draws.DrawEstimate`, of the shape of the other factors' levels.

    ``Y: (k, n_1, ..., n_p)`` as in :func:`factorial_effects`; ``x: (n_axis,)``, the numeric
    coordinate of the factor's levels (e.g. the depth, or its base-2 logarithm), not all equal."""
    Y = np.asarray(Y, dtype=np.float64)
    axis = check_int("axis", axis, low=0, high=Y.ndim - 2)
    check_int("draws", Y.shape[0], low=2)
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (Y.shape[axis + 1],) or np.ptp(x) == 0 or not np.all(np.isfinite(x)):
        raise fail("x", described(f"{x.size} values"),
                   f"{Y.shape[axis + 1]} finite coordinates of axis {axis}, not all equal")
    centred = x - x.mean()
    moved = np.moveaxis(Y, axis + 1, -1)  # (k, others..., n_axis)
    slopes = moved @ centred / (centred @ centred)  # (k, others...)
    out = np.empty(slopes.shape[1:], dtype=object)
    for idx in np.ndindex(out.shape):
        out[idx] = over_draws(slopes[(slice(None), *idx)])
    return out


def familywise_level(m: int, level: float = 0.95) -> float:
    """The Bonferroni level ``1 - (1 - level) / m`` for ``m`` intervals read together: under pure
    noise the chance that any of them excludes 0 is at most ``1 - level``."""
    m = check_int("m", m, low=1)
    level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    return 1.0 - (1.0 - level) / m
