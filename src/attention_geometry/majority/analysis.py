"""Numbers the chapter compares: the share of the gap that the fair control closes
(with a bootstrap interval), the proposition on uniform attention in float64, per-seed
summaries of a run, how many more steps one variant needs to reach another's level, and
the yardstick angle of a random direction."""

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
import numpy.typing as npt
import torch

from .._checks import as_torch_generator, check_int, fail
from .model import attention_norm, effective_queries, init_majority_params
from .training import MajorityRun

if TYPE_CHECKING:
    from ..draws import DrawEstimate


def confound_share(with_ln: npt.ArrayLike, fair: npt.ArrayLike, original: npt.ArrayLike, rng: np.random.Generator | int,
                   n_boot: int = 4000, level: float = 0.95) -> tuple[float, float, float]:
    r"""The share of the gap between LayerNorm and the original code's variant that the
    fair control closes: :math:`(\bar f - \bar o) / (\bar \ell - \bar o)`, with a
    percentile bootstrap interval over seeds (the three arrays ``(S,)`` are
    paired by seed). Returns ``(share, low, high)``; NaN where the gap is 0.

    1 means the fair control does as well as LayerNorm (the whole gap is the
    confound of the original's smaller norm); 0 means it does no better than
    the original's variant (the whole gap is the projection).
    """
    arrays = np.stack([np.asarray(a, dtype=float) for a in (with_ln, fair, original)], axis=1)  # (S, 3)

    def share(rows):
        ln, f, o = rows.mean(0)
        return (f - o) / (ln - o) if ln != o else np.nan

    from ..stats import bootstrap_interval

    lo, hi = bootstrap_interval(share, arrays, n_boot=n_boot, level=level, rng=rng)
    return float(share(arrays)), lo, hi


def uniform_query_check(n_keys: int, d: int, cs: Sequence[float], generator: torch.Generator | int,
                        n_queries: int = 100) -> dict:
    """Proposition ``prop-ua-uniform`` in float64 on ``n_keys`` random inputs in ``d`` dimensions.

    Returns arrays over the multiples ``cs: (k,)``: ``spread_ln`` / ``spread_scaled``,
    the spread (max - min) of the scores that the query ``c 1`` gives keys after
    LayerNorm / after scaling alone (``"rmsnorm"``); ``shift``, the largest change
    of any score of ``n_queries`` random queries when ``c 1`` is added to them
    (LayerNorm keys); and ``att_dev``, the largest deviation of the attention of
    ``cs[-1] * 1`` on the LayerNorm keys from ``1 / n_keys``.
    """
    check_int("n_keys", n_keys, low=2)
    check_int("d", d, low=2)
    generator = as_torch_generator("generator", generator)
    x = torch.randn(n_keys, d, generator=generator, dtype=torch.float64)
    keys_ln, keys_sc = attention_norm(x, "layernorm"), attention_norm(x, "rmsnorm")
    ones = torch.ones(d, dtype=torch.float64)
    queries = torch.randn(n_queries, d, generator=generator, dtype=torch.float64)
    cs = [float(c) for c in cs]

    def spread(keys, q):
        s = keys @ q
        return (s.max() - s.min()).item()

    att = torch.softmax(keys_ln @ (cs[-1] * ones) / math.sqrt(d), dim=0)
    return {
        "spread_ln": np.array([spread(keys_ln, c * ones) for c in cs]),
        "spread_scaled": np.array([spread(keys_sc, c * ones) for c in cs]),
        "shift": np.array([(queries @ keys_ln.T - (queries + c * ones) @ keys_ln.T).abs().max().item() for c in cs]),
        "att_dev": float((att - 1 / n_keys).abs().max()),
    }


def run_summary(run: MajorityRun) -> dict[str, np.ndarray]:
    """Per-seed numbers of a run, each ``(S,)``: ``"mean training loss"`` (over the
    records after step 0: the area under the curve of Fig. 2a, small when the loss
    falls early), ``"final training loss"``, ``"final test accuracy"`` and
    ``"final angle"`` (degrees, whole test set)."""
    return {
        "mean training loss": np.nanmean(run.loss[:, 1:], axis=1) if run.loss.shape[1] > 1 else run.loss[:, 0],
        "final training loss": run.loss[:, -1].copy(),
        "final test accuracy": np.asarray(run.final["test_accuracy"], dtype=float),
        "final angle": np.asarray(run.final["angle"], dtype=float),
    }


def random_angle_to_ones(d: int) -> float:
    r"""The mean angle (degrees) between a uniformly random direction in :math:`\mathbb R^d`
    and the line through :math:`\mathbf 1`: :math:`\mathbb E\,\arccos\sqrt B` with
    :math:`B = z_1^2/\lVert z\rVert^2 \sim \mathrm{Beta}(1/2, (d-1)/2)`, by quadrature.
    The yardstick for the angles of :func:`angle_to_ones`."""
    from scipy import integrate, stats

    check_int("d", d, low=2)
    beta = stats.beta(0.5, (d - 1) / 2)
    value, _ = integrate.quad(lambda b: np.degrees(np.arccos(np.sqrt(b))) * beta.pdf(b), 0, 1, limit=200)
    return float(value)


def first_crossing(steps: npt.ArrayLike, curve: npt.ArrayLike, level: npt.ArrayLike) -> np.ndarray:
    """The step at which each seed's ``curve`` first falls to its ``level``, linearly interpolated
    between the records at ``steps: (T,)``; ``curve: (S, T)``, ``level``: a number or ``(S,)``.
    Returns ``(S,)``, NaN where a seed never reaches its level (NaN records never count: the
    training loss has none at step 0). For a curve that rises (accuracy) pass minus both."""
    steps = np.asarray(steps, dtype=float)
    curve = np.asarray(curve, dtype=float)
    if curve.ndim != 2 or curve.shape[1] != steps.size:
        raise fail("curve", curve.shape, f"(S, T={steps.size})", "has the wrong shape")
    level = np.broadcast_to(np.asarray(level, dtype=float), curve.shape[:1])
    out = np.full(curve.shape[0], np.nan)
    for s, (row, lev) in enumerate(zip(curve, level)):
        hit = np.flatnonzero(row <= lev)
        if hit.size == 0:
            continue
        i = hit[0]
        prev = i - 1
        if prev < 0 or not np.isfinite(row[prev]):
            out[s] = steps[i]
            continue
        frac = (row[prev] - lev) / (row[prev] - row[i]) if row[prev] != row[i] else 1.0
        out[s] = steps[prev] + frac * (steps[i] - steps[prev])
    return out


def step_ratio(steps: npt.ArrayLike, reference: npt.ArrayLike, other: npt.ArrayLike, at: int | None = None, *,
               level: float | None = None, rising: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """How many times as many steps ``other`` needs as ``reference`` to reach a level, seed by seed
    (the two ``(S, T)`` curves are paired by seed, recorded at ``steps: (T,)``; ``rising``: a curve
    that should rise, as accuracy does). The level is the one ``reference`` has at the record ``at``,
    or a fixed ``level`` of the curve (a figure's own line); exactly one of the two is given.

    Returns ``(ratio, censored, bound)``, the first two ``(S,)``: where ``other`` never reaches the
    level within the run, ``censored`` is true and ``ratio`` is set to the most the run can show,
    ``steps[-1]`` over the reference's step, so that the mean ratio is then a lower bound; ``bound``
    is that most for ``at`` (``steps[-1] / steps[at]``), and for a fixed level the smallest of it over
    the censored seeds (over all seeds with a ratio when none is censored). A seed whose reference is
    at the level from a record at step 0, or never reaches a fixed level, has no ratio (``nan``) and
    is not counted as censored."""
    steps = np.asarray(steps, dtype=float)
    sign = -1.0 if rising else 1.0
    ref, oth = sign * np.asarray(reference, dtype=float), sign * np.asarray(other, dtype=float)
    if (at is None) == (level is None):
        raise fail("at", at, "exactly one of at and level", f"is given with level = {level!r}")
    if level is None:
        check_int("at", at, low=1, high=steps.size - 1)
        lev = ref[:, at]
    else:
        lev = np.full(ref.shape[0], sign * float(level))
    t_ref = first_crossing(steps, ref, lev)  # the reference may reach its own level before ``at``
    t_oth = first_crossing(steps, oth, lev)
    has = np.isfinite(t_ref) & (t_ref > 0)
    with np.errstate(divide="ignore", invalid="ignore"):  # a reference at its level from the first record
        most = steps[-1] / t_ref
        ratio = np.where(has, np.where(np.isfinite(t_oth), t_oth, steps[-1]) / t_ref, np.nan)
    if level is None:
        censored = ~np.isfinite(t_oth)
        bound = float(steps[-1] / steps[at])
        return np.where(censored & has, bound, ratio), censored, bound
    censored = ~np.isfinite(t_oth) & has
    pool = most[censored] if censored.any() else most[has]
    return ratio, censored, float(pool.min()) if pool.size else float("nan")


def query_components(queries: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""The two parts of effective queries ``queries: (S, C, d)``: the length of the component
    along :math:`\mathbf 1`, :math:`|u\cdot\mathbf 1|/\sqrt d`, and of the part that changes the
    scores of keys in :math:`\mathcal H`, :math:`\lVert Pu\rVert`; each averaged over the ``C``
    queries of a model, ``(S,)``. The angle to the line through 1 is
    :math:`\arctan(\lVert Pu\rVert / (|u\cdot\mathbf 1|/\sqrt d))`: it falls when the first
    grows (alignment) or when the second shrinks (shrinkage)."""
    q = np.asarray(queries, dtype=float)
    d = q.shape[-1]
    along = np.abs(q.sum(-1)) / math.sqrt(d)
    across = np.linalg.norm(q - q.mean(-1, keepdims=True), axis=-1)
    return along.mean(-1), across.mean(-1)


def initial_queries(norm: str, seeds: Sequence[int], n_classes: int, d: int) -> np.ndarray:
    """The effective queries ``(S, C, d)`` of the models of ``seeds`` before training, computed as
    :class:`MajorityRun` stores them at the end (the normed class embeddings' queries, over sqrt d)."""
    params = init_majority_params(n_classes, d, [as_torch_generator("seed", s) for s in seeds])
    with torch.no_grad():
        keys = attention_norm(params["E"], norm)
        return (effective_queries(params, keys) / math.sqrt(d)).numpy().astype(float)


def participation_ratio(spectrum: npt.ArrayLike) -> np.ndarray:
    r"""The effective dimension :math:`(\sum_i \lambda_i)^2 / \sum_i \lambda_i^2` of covariance
    eigenvalues ``spectrum: (S, d)``: ``(S,)``, between 1 (one direction) and ``d`` (all equal)."""
    lam = np.clip(np.asarray(spectrum, dtype=np.float64), 0.0, None)
    return lam.sum(-1) ** 2 / (lam**2).sum(-1)


def spectrum_rank(spectrum: npt.ArrayLike, rtol: float = 1e-8) -> np.ndarray:
    """How many eigenvalues of ``spectrum: (S, d)`` exceed ``rtol`` times the largest (float32
    outputs put a null direction's variance near 1e-14 of the largest): ``(S,)`` integers."""
    lam = np.asarray(spectrum, dtype=np.float64)
    return (lam > rtol * lam.max(-1, keepdims=True)).sum(-1)


#: The narrowest width the width sweep trains. At d = 2 the feed-forward LayerNorm (epsilon 0, as in
#: the original) maps h to gamma * sign(h_1 - h_2) (1, -1) + beta, a step whose exact gradient is zero;
#: computed in floating point it is rounding error over |h_1 - h_2| / 2, unbounded as h_1 - h_2 -> 0,
#: and training there can end with a non-finite loss. So no variant is trained below d = 3.
MIN_WIDTH = 3


def width_plan(dims: Sequence[int]) -> dict[str, list[int]]:
    """The widths each variant of the width sweep trains at: LayerNorm at ``dims``, the fair control
    (``"rmsnorm"``) at ``dims`` and one below the smallest when that is at least :data:`MIN_WIDTH`, so
    that LayerNorm at every width ``d`` whose ``d - 1`` is among them meets the control at both
    ``d - 1`` and ``d``."""
    dims = sorted({check_int("dims[i]", d, low=MIN_WIDTH) for d in dims})
    if not dims:
        raise fail("dims", dims, f"at least one width of {MIN_WIDTH} or more")
    below = [dims[0] - 1] if dims[0] - 1 >= MIN_WIDTH else []
    return {"layernorm": dims, "rmsnorm": below + dims}


def width_contrasts(ln: dict[int, np.ndarray], control: dict[int, np.ndarray]) -> dict[str, dict[int, np.ndarray]]:
    """Per-seed contrasts of a quantity between LayerNorm and the fair control across widths
    (``{width: (S,)}`` each, paired by seed): ``"gap"``, LayerNorm − control at the same width ``d``;
    ``"shift"``, LayerNorm at ``d`` − the midpoint of the control at ``d - 1`` and ``d`` (for widths
    whose ``d - 1`` the control has): where the control gains from the extra dimension, a shift on
    the side of the control at ``d - 1`` means LayerNorm at ``d`` is closer to the control one
    dimension narrower than to the control of its own width."""
    gap = {d: np.asarray(ln[d], float) - np.asarray(control[d], float) for d in ln if d in control}
    shift = {d: np.asarray(ln[d], float) - (np.asarray(control[d - 1], float) + np.asarray(control[d], float)) / 2
             for d in ln if d in control and d - 1 in control}
    return {"gap": gap, "shift": shift}


def dimensions_lost(ln: dict[int, np.ndarray], control: dict[int, np.ndarray]) -> "DrawEstimate":
    r"""How many of the fair control's dimensions LayerNorm's projection costs, from per-seed values of a
    quantity (``{width: (S,)}`` each, paired by seed): the ratio of means over the seeds and over the
    widths ``d`` whose ``d - 1`` the control has,

    .. math::

        f = \frac{\sum_{s,d} [c_s(d) - \ell_s(d)]}{\sum_{s,d} [c_s(d) - c_s(d-1)]},

    LayerNorm's deficit against the control of its width over what the control gains from its last
    dimension: 1 when LayerNorm at ``d`` does exactly as the control at ``d - 1``, 0 when it does as the
    control at ``d``; the same for a quantity where lower is better. A
    :class:`~attention_geometry.draws.DrawEstimate` whose replicate is the seed (a weight draw with its
    data), with the delete-one-seed jackknife error (numerator and denominator move together, so
    their errors are not added as if independent). Needs two seeds and a width with ``d - 1``."""
    from ..draws import jackknife_over_draws
    widths = [d for d in sorted(ln) if d in control and d - 1 in control]
    if not widths:
        raise fail("widths", sorted(ln), "a width d whose d - 1 the control has")
    num = np.sum([np.asarray(control[d], float) - np.asarray(ln[d], float) for d in widths], axis=0)
    den = np.sum([np.asarray(control[d], float) - np.asarray(control[d - 1], float) for d in widths], axis=0)
    return jackknife_over_draws(lambda seeds: sum(x[0] for x in seeds) / sum(x[1] for x in seeds),
                                [np.array([a, b]) for a, b in zip(np.atleast_1d(num), np.atleast_1d(den))])


def gap_slopes(gaps: dict[int, np.ndarray]) -> np.ndarray:
    r"""Per seed, the least-squares slope of the gap ``{width: (S,)}`` against :math:`\log_2 d`:
    ``(S,)`` (the change of the gap per doubling of the width); needs two widths or more."""
    widths = sorted(gaps)
    if len(widths) < 2:
        raise fail("gaps", widths, "gaps at two widths or more")
    x = np.log2(np.asarray(widths, dtype=float))
    y = np.stack([np.asarray(gaps[d], float) for d in widths], axis=1)  # (S, W)
    xc = x - x.mean()
    return (y - y.mean(1, keepdims=True)) @ xc / (xc @ xc)
