r"""Measured influence profiles as samples: averages, bands, fits, ceilings and tests.

A profile is measured on ``n`` sequences; each sequence gives an unbiased
estimate of :math:`\rho(j)^2 = \lVert J_j\rVert_F^2` (exact, or from ``k``
probes). A :class:`ProfileSample` holds them, ``rho2: (n, L)``, and every
statistic below treats the *sequences* as the independent units: standard
errors, p16--p84 bands and bootstrap intervals are across sequences (probe
noise, independent between sequences, is part of that spread).

* the average profile :math:`\bar\rho(j) = (\frac1n\sum_s \hat\rho_s(j)^2)^{1/2}`
  and its p16--p84 band (:meth:`ProfileSample.profile`, :meth:`ProfileSample.band`);
* the **noise ceiling**: the Spearman correlation between the average profiles
  of two halves of the sequences, stepped up to the full sample by the
  Spearman-Brown formula (:func:`noise_ceiling_estimate`);
* the paper's model :math:`g\,(N^H)_{L,j}` fitted in log space
  (:func:`fit_cesaro`, ``eq-jac-cesaro-fit``), and the derived expectation of
  :mod:`attention_geometry.jacobians.theory` fitted with a gain and, optionally,
  per-layer gains that fall with depth (:func:`fit_derived`, ``eq-jac-expected``); both label a fit
  that lands on a bound of its search *degenerate*
  (:func:`attention_geometry.stats.fitted_parameter`);
* :func:`bootstrap_estimate`: any statistic of the sample with its bootstrap
  standard error over sequences;
* :func:`late_minimum_test`: is the minimum of the profile before the last
  position real? (chosen on one half of the sequences, tested on the other);
* :func:`boundary_contrast`, :func:`folded_profile`: spikes at chunk boundaries
  and the profile within chunks (the paper's Fig. 2);
* :func:`anchored_valley_depth`: the valley under the last position, per
  sequence (the paper's Fig. 3);
* :func:`draw_profile_statistics`: the statistics the verdicts read, over the
  *weight draws* of a random-init decoder whose sequences the sample holds (for a
  claim about random-init models the replicate is the draw, not the sequence).

Shapes: ``n`` sequences, ``L`` positions (``j = 1..L`` at index ``j - 1``).
"""

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import optimize
from scipy.special import logsumexp

from .._checks import check_choice, check_float, check_int, fail
from ..cesaro import classify_profile, log_cesaro_rows, log_last_row, profile_minimum
from ..draws import DrawEstimate, jackknife_over_draws
from ..stats import Estimate, FittedParameter, bootstrap_replicates, fitted_parameter, paired_difference, spearman
from .theory import elementary_symmetric, layer_gains

__all__ = [
    "SHAPE_NUMBERS",
    "shape_numbers",
    "ProfileSample",
    "ProfileStatistics",
    "profile_statistics",
    "bootstrap_estimate",
    "noise_ceiling_estimate",
    "spearman_brown",
    "paired_spearman",
    "CesaroFit",
    "fit_cesaro",
    "DerivedFit",
    "fit_derived",
    "normalised_positions_wasserstein",
    "profile_relative_error",
    "log10_peak_to_trough",
    "held_out_log10_peak_to_trough",
    "HeldOutFit",
    "held_out_fit",
    "monotone_spearman",
    "monotone_floor",
    "prediction_excess",
    "draw_halves",
    "ProfileSummary",
    "summarise_profile",
    "ends_over_middle",
    "LateMinimum",
    "late_minimum_test",
    "boundary_contrast",
    "folded_profile",
    "anchored_valley_depth",
    "effective_rank",
    "init_spread",
    "draw_profile_statistics",
]

ALPHA_BOUNDS = (0.005, 1.0)  # the search range of the Cesàro fit's alpha
LOG_GAIN_BOUNDS = (math.log(1e-4), math.log(1e4))  # of the derived fit's ln g
LOG_GROWTH_BOUNDS = (math.log(1e-3), math.log(1e4))  # of the derived fit's ln zeta


def _check_rho(rho, name="rho"):
    rho = np.asarray(rho, dtype=np.float64)
    if rho.ndim != 1 or rho.size < 3:
        raise fail(name, f"an array of shape {rho.shape}", "shape (L,) with L >= 3")
    if not np.all(np.isfinite(rho)) or np.any(rho <= 0):
        raise fail(name, "an array with non-finite or non-positive entries", "positive numbers")
    return rho


# ------------------------------------------------------------- the sample


@dataclass(frozen=True)
class ProfileSample:
    """``rho2: (n, L)``: one unbiased estimate of :math:`\\rho(j)^2` per sequence (row)."""

    rho2: np.ndarray

    def __post_init__(self):
        r = np.asarray(self.rho2, dtype=np.float64)
        if r.ndim != 2 or r.shape[0] < 2 or r.shape[1] < 3:
            raise fail("rho2", f"an array of shape {r.shape}", "shape (n, L) with n >= 2 sequences, L >= 3")
        if not np.all(np.isfinite(r)) or np.any(r < 0):
            raise fail("rho2", "an array with negative or non-finite entries", "squared norms >= 0")
        object.__setattr__(self, "rho2", r)

    @property
    def n(self) -> int:
        return self.rho2.shape[0]

    @property
    def L(self) -> int:
        return self.rho2.shape[1]

    def mean_sq(self) -> np.ndarray:
        """``(L,)``: the average of :math:`\\hat\\rho^2` over sequences (unbiased)."""
        return self.rho2.mean(0)

    def profile(self) -> np.ndarray:
        """``(L,)``: the average profile :math:`\\bar\\rho = (\\text{mean of } \\hat\\rho^2)^{1/2}`."""
        return np.sqrt(self.mean_sq())

    def se_profile(self) -> np.ndarray:
        """``(L,)``: standard error of :meth:`profile` across sequences (delta method)."""
        return self.rho2.std(0, ddof=1) / math.sqrt(self.n) / (2 * self.profile())

    def band(self, lower: float = 16.0, upper: float = 84.0) -> tuple[np.ndarray, np.ndarray]:
        """p``lower``--p``upper`` percentiles of the per-sequence profiles :math:`\\hat\\rho_s(j)`
        (the paper's bands: 16 and 84)."""
        return tuple(np.percentile(np.sqrt(self.rho2), [lower, upper], axis=0))

    def halves(self, draws: Sequence[slice] | None = None) -> tuple["ProfileSample", "ProfileSample"]:
        """Two independent samples: the even- and odd-numbered sequences, or with ``draws`` (the
        rows of each weight draw of a random-init decoder, two draws or more) the sequences of
        the even- and odd-numbered draws, so that the halves share no weights."""
        parts = [self.rho2[s] for s in draws] if draws is not None and len(draws) >= 2 else [self.rho2]
        return tuple(ProfileSample(half) for half in draw_halves(parts))

    def resample(self, rng: np.random.Generator) -> "ProfileSample":
        """Sequences drawn with replacement (one bootstrap replicate)."""
        return ProfileSample(self.rho2[rng.integers(0, self.n, self.n)])


def bootstrap_estimate(statistic: Callable[[ProfileSample], float], sample: ProfileSample, *, n_boot: int,
                       rng: np.random.Generator) -> Estimate:
    """``statistic(sample)`` with the standard deviation over ``n_boot`` bootstrap
    replicates (sequences resampled) as its standard error."""
    value = float(statistic(sample))
    reps = bootstrap_replicates(lambda idx: statistic(ProfileSample(sample.rho2[idx])), sample.n, n_boot=n_boot,
                                rng=rng)
    return Estimate(value, float(np.nanstd(reps, ddof=1)))


def spearman_brown(r: float, factor: float = 2.0) -> float:
    """The reliability of a sample ``factor`` times larger from that of one sample,
    ``factor r / (1 + (factor - 1) r)`` (Spearman-Brown); NaN for ``r <= -1/(factor-1)``."""
    den = 1.0 + (factor - 1.0) * r
    return factor * r / den if den > 0 else float("nan")


def _split_half(sample: ProfileSample, draws: Sequence[slice] | None = None) -> float:
    a, b = sample.halves(draws)
    return spearman_brown(spearman(a.profile(), b.profile()))


def draw_halves(parts: Sequence[npt.ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the even- and of the odd-numbered ``parts`` (one array per weight draw, as
    :func:`~attention_geometry.draws.jackknife_over_draws` hands them to a statistic; with one
    draw, one row per sequence): two halves that share no weights. One part (what is left of two
    draws when the jackknife leaves one out) is halved by its even and odd rows."""
    arrays = [np.asarray(p, dtype=np.float64) for p in parts]
    if len(arrays) == 1 and arrays[0].ndim == 2 and arrays[0].shape[0] >= 2:
        return arrays[0][0::2], arrays[0][1::2]
    if len(arrays) < 2:
        raise fail("parts", f"{len(arrays)} part(s) of one row", "at least two draws or two sequences")
    return tuple(np.concatenate(arrays[i::2]) for i in (0, 1))


def _part_halves(parts: Sequence[np.ndarray]) -> tuple[ProfileSample, list[slice]]:
    """The whole sample of ``parts`` (one array per weight draw, or one row per sequence of a
    single draw) and the rows of each part, for halves that split by draw."""
    ends = np.cumsum([0] + [len(p) for p in parts])
    return ProfileSample(np.concatenate(parts)), [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])]


def noise_ceiling_estimate(sample: ProfileSample, *, n_boot: int, rng: np.random.Generator) -> Estimate:
    """The noise ceiling of a full sample's average profile: the Spearman between the
    average profiles of the even and the odd sequences (two independent half samples),
    stepped up to the full sample by the Spearman-Brown formula (:func:`spearman_brown`),
    with its bootstrap standard error. It estimates the reliability r, the Spearman of
    two independent samples of this size: what a comparison of two such averages can
    reach; a perfect model compared with one average reaches about sqrt(r)
    (:func:`~attention_geometry.power.model_reference`, which
    :func:`~attention_geometry.verdicts.ceiling_verdict` uses). The uncorrected
    split-half value is the ceiling of a half sample, which full-sample statistics exceed."""
    if sample.n < 4:
        raise fail("sample", f"{sample.n} sequences", "at least 4 sequences (two halves of two)")
    return bootstrap_estimate(_split_half, sample, n_boot=n_boot, rng=rng)


def paired_spearman(a: ProfileSample, b: ProfileSample, *, n_boot: int, rng: np.random.Generator) -> Estimate:
    """Spearman between the average profiles of two samples measured on the *same*
    sequences (row ``s`` of both), with a paired bootstrap (the same resampled
    sequences in both)."""
    if a.rho2.shape != b.rho2.shape:
        raise fail("b", f"a sample of shape {b.rho2.shape}", f"the shape of a, {a.rho2.shape} (paired)")
    both = ProfileSample(np.concatenate([a.rho2, b.rho2], axis=1))
    L = a.L
    return bootstrap_estimate(lambda s: spearman(s.profile()[:L], s.profile()[L:]), both, n_boot=n_boot, rng=rng)


# ------------------------------------------------------------- the paper's fit


@lru_cache(maxsize=16)
def _cesaro_table(L: int, H: int, n_grid: int = 200) -> tuple[np.ndarray, np.ndarray]:
    grid = np.linspace(*ALPHA_BOUNDS, n_grid)
    return grid, np.stack([log_last_row(L, H, float(a)) for a in grid])


@dataclass(frozen=True)
class CesaroFit:
    r"""The paper's model fitted to a profile: :math:`\log\rho(j) \approx \log g +
    \log (N^H)_{L,j}(\alpha)` (``eq-jac-cesaro-fit``). ``alpha`` (a
    :class:`~attention_geometry.stats.FittedParameter`, degenerate when it lands
    on the search bound ``ALPHA_BOUNDS``), ``gain`` ``g``, ``gain_per_layer``
    :math:`g^{1/H}` (the paper's :math:`\gamma`), ``log_rmse`` (rms residual in
    natural log) and ``theory: (L,)``."""

    alpha: FittedParameter
    gain: float
    gain_per_layer: float
    H: int
    log_rmse: float
    theory: np.ndarray

    @property
    def degenerate(self) -> bool:
        return self.alpha.degenerate


def fit_cesaro(rho: np.ndarray, H: int, alpha_interval: tuple[float, float] | None = None) -> CesaroFit:
    """Fit ``(alpha, g)`` of :math:`g (N^H)_{L,j}` to ``rho: (L,)`` by least squares in log space.

    For fixed ``alpha`` the best ``ln g`` is the mean residual; ``alpha`` is the
    best of 200 grid points on ``ALPHA_BOUNDS``, refined by a bounded search
    between its neighbours. ``alpha_interval`` (e.g. from a bootstrap) is
    attached to the fitted parameter and enters its degenerate label.
    """
    rho = _check_rho(rho)
    H = check_int("H", H)
    L, log_rho = rho.size, np.log(rho)
    grid, table = _cesaro_table(L, H)
    res = log_rho[None, :] - table
    losses = res.var(axis=1)
    i = int(np.argmin(losses))

    def loss(a):
        r = log_rho - log_last_row(L, H, float(a))
        return float(np.mean((r - r.mean()) ** 2))

    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = optimize.minimize_scalar(loss, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    alpha = float(best.x) if best.fun <= losses[i] else float(grid[i])
    log_p = log_last_row(L, H, alpha)
    log_g = float(np.mean(log_rho - log_p))
    return CesaroFit(alpha=fitted_parameter("alpha", alpha, ALPHA_BOUNDS, alpha_interval), gain=math.exp(log_g),
                     gain_per_layer=math.exp(log_g / H), H=H, log_rmse=math.sqrt(loss(alpha)),
                     theory=np.exp(log_g + log_p))


# ----------------------------------------------------------- the derived fit


@dataclass(frozen=True)
class DerivedFit:
    r"""The derived expectation fitted to a mean squared profile (``eq-jac-expected``):
    :math:`\rho(j)^2 \approx c \sum_r e_r(g_1..g_H) (M^r)_{L,j}^2` with
    :math:`g_l = g/(1 + \zeta(l-1))` (``eq-jac-layer-gains``). ``gain`` (``g``) and
    ``growth`` (:math:`\zeta`; ``None`` when the gains are equal) are
    :class:`~attention_geometry.stats.FittedParameter`,
    ``scale`` is ``c``, ``log_rmse`` the rms residual in :math:`\ln\rho` (half that of
    :math:`\ln\rho^2`, comparable with :class:`CesaroFit`), ``theory: (L,)`` the
    fitted :math:`\rho` (square root)."""

    gain: FittedParameter
    growth: FittedParameter | None
    scale: float
    H: int
    log_rmse: float
    theory: np.ndarray

    @property
    def degenerate(self) -> bool:
        return self.gain.degenerate or (self.growth is not None and self.growth.degenerate)


def _derived_log_model(log_rows2, H, log_gain, log_growth):
    growth = 0.0 if log_growth is None else math.exp(log_growth)
    e = elementary_symmetric(layer_gains(H, math.exp(log_gain), growth))
    with np.errstate(divide="ignore"):
        return logsumexp(np.log(e)[:, None] + log_rows2, axis=0)


def fit_derived(rho2: npt.ArrayLike, H: int, *, per_layer: bool = False, start: Sequence[float] | None = None,
                intervals: Mapping[str, tuple[float, float]] | None = None) -> DerivedFit:
    r"""Fit the derived expectation to a mean squared profile ``rho2: (L,)`` (least squares
    in :math:`\ln\rho^2`, ``ln c`` profiled out). ``per_layer``: also fit the growth
    :math:`\zeta` of the per-layer gains :math:`g_l = g/(1+\zeta(l-1))`; searched in
    ``ln g`` and ``ln zeta``. ``start``: ``(ln g, ln zeta)`` to start a local search
    from (bootstrap replicates); otherwise a grid search first. ``intervals``:
    ``{"gain": (lo, hi), "growth": (lo, hi)}`` to attach to the fitted parameters."""
    rho2 = _check_rho(rho2, "rho2")
    H = check_int("H", H)
    L, y = rho2.size, np.log(rho2)
    log_rows2 = 2.0 * log_cesaro_rows(L, H)

    def loss(theta):
        m = _derived_log_model(log_rows2, H, theta[0], theta[1] if per_layer else None)
        r = y - m
        return float(np.mean((r - r.mean()) ** 2))

    bounds = [LOG_GAIN_BOUNDS] + ([LOG_GROWTH_BOUNDS] if per_layer else [])
    if start is None:
        grid_g = np.linspace(*LOG_GAIN_BOUNDS, 25)
        grid_k = np.linspace(*LOG_GROWTH_BOUNDS, 8) if per_layer else [0.0]
        x0 = min(((g, k) for g in grid_g for k in grid_k), key=loss)
    else:
        x0 = tuple(start)
    x0 = np.array(x0[:len(bounds)], dtype=np.float64)
    best = optimize.minimize(loss, x0, method="L-BFGS-B", bounds=bounds)
    theta = best.x if best.fun <= loss(x0) else x0
    log_growth = float(theta[1]) if per_layer else None
    m = _derived_log_model(log_rows2, H, float(theta[0]), log_growth)
    log_c = float(np.mean(y - m))
    intervals = intervals or {}
    gain = fitted_parameter("gain", math.exp(theta[0]), tuple(math.exp(b) for b in LOG_GAIN_BOUNDS),
                            intervals.get("gain"), log=True)
    growth = None if not per_layer else fitted_parameter(
        "growth", math.exp(log_growth), tuple(math.exp(b) for b in LOG_GROWTH_BOUNDS), intervals.get("growth"), log=True)
    return DerivedFit(gain=gain, growth=growth, scale=math.exp(log_c), H=H, log_rmse=0.5 * math.sqrt(loss(theta)),
                      theory=np.exp(0.5 * (log_c + m)))


# ------------------------------------------------------- distances, summaries


def normalised_positions_wasserstein(a: np.ndarray, b: np.ndarray) -> float:
    r"""Wasserstein-1 distance between two profiles ``(L,)`` read as distributions on the
    positions :math:`x_j = j/L`: weights :math:`a_j/\sum a`, :math:`b_j/\sum b`;
    :math:`W = \frac1L\sum_j |F_a(j) - F_b(j)|` with the cumulative sums ``F`` (in
    units of the context length, between 0 and 1)."""
    a, b = _check_rho(a, "a"), _check_rho(b, "b")
    if a.size != b.size:
        raise fail("b", f"a profile of length {b.size}", f"the length of a, {a.size}")
    Fa, Fb = np.cumsum(a / a.sum()), np.cumsum(b / b.sum())
    return float(np.abs(Fa - Fb).sum() / a.size)


def profile_relative_error(estimate_rho2: np.ndarray, exact_rho2: np.ndarray) -> np.ndarray:
    r"""Per position, the relative error of an estimated profile :math:`\hat\rho =
    \sqrt{\hat\rho^2}` against the exact :math:`\rho`: :math:`|\hat\rho_j/\rho_j - 1|`
    (arrays of one shape; rows may be sequences). The estimator's benchmark and the
    device check report its median and maximum over positions."""
    est, exact = np.asarray(estimate_rho2, dtype=float), np.asarray(exact_rho2, dtype=float)
    if est.shape != exact.shape:
        raise fail("estimate_rho2", f"an array of shape {est.shape}", f"the shape of exact_rho2, {exact.shape}")
    if not (np.all(np.isfinite(est)) and np.all(est >= 0)):
        raise fail("estimate_rho2", "an array with negative or non-finite entries", "squared norms: finite, >= 0")
    if not (np.all(np.isfinite(exact)) and np.all(exact > 0)):
        raise fail("exact_rho2", "an array with non-positive or non-finite entries", "squared norms: finite, > 0")
    return np.abs(np.sqrt(est / exact) - 1)


def log10_peak_to_trough(rho: np.ndarray) -> float:
    """:math:`\\log_{10}(\\max\\rho / \\min\\rho)` of a profile ``(L,)``."""
    rho = _check_rho(rho)
    return float(np.log10(rho.max() / rho.min()))


def _halves(first: npt.ArrayLike, second: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two halves of the replicates, ``(n_1, L)`` and ``(n_2, L)`` of at least one row each, as float64."""
    a, b = (np.asarray(x, dtype=np.float64) for x in (first, second))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or min(a.shape[0], b.shape[0]) < 1:
        raise fail("first, second", f"arrays of shapes {a.shape} and {b.shape}",
                   "two halves (n_1, L) and (n_2, L) of at least one row each")
    return a, b


def held_out_log10_peak_to_trough(first: npt.ArrayLike, second: npt.ArrayLike) -> float:
    r""":math:`\log_{10}` peak/trough of an average profile without selection bias: the positions of
    the peak and the trough are chosen on the average of one half of the replicates (``first:
    (n_1, L)`` estimates of :math:`\rho^2`) and the ratio is measured on the other half's
    average (``second: (n_2, L)``), then the other way round; the value is the mean of the two
    (:mod:`~attention_geometry.selection`). The plug-in :func:`log10_peak_to_trough` of the
    average profile picks the positions whose noise was largest, and so grows with the noise;
    this one does not: under a flat profile its expectation is 0 at any noise."""
    a, b = _halves(first, second)
    ma, mb = a.mean(0), b.mean(0)
    if np.any(ma <= 0) or np.any(mb <= 0):
        raise fail("first, second", "a half whose average has a non-positive entry", "positive squared norms")
    from ..selection import held_out_value

    ln_ratios = [held_out_value(x, y, "log max/min") for x, y in ((a, b), (b, a))]
    return float(np.mean(ln_ratios) / (2 * math.log(10)))  # rho = sqrt(rho^2): half the log ratio of rho^2


@dataclass(frozen=True)
class HeldOutFit:
    r"""The paper's form fitted on one half of the replicates and scored on the other
    (:func:`held_out_fit`): ``spearman``, its Spearman with the other half's average profile,
    projected to the whole sample (:math:`r_S\sqrt{2/(1+r_{1/2})}`, at most 1); ``wasserstein``,
    :math:`W_1` between it and the other half's average; ``half_reliability``, :math:`r_{1/2}`,
    the Spearman between the two halves' averages; ``noise_wasserstein``, :math:`W_1` between
    the two halves' averages (what two noisy averages of this size differ by with no model at
    all); ``wasserstein_rest``, ``wasserstein`` with the last position left out of both profiles.
    Each is the mean of the two directions."""

    spearman: float
    wasserstein: float
    half_reliability: float
    noise_wasserstein: float
    wasserstein_rest: float


def held_out_fit(first: npt.ArrayLike, second: npt.ArrayLike, H: int) -> HeldOutFit:
    r"""The paper's form :math:`g\,(N^H)_{L,j}` (:func:`fit_cesaro`) chosen on the average of one
    half of the replicates and measured against the other half's average, then the other way
    round (``first: (n_1, L)``, ``second: (n_2, L)``: estimates of :math:`\rho^2`). A best fit
    scored on the data it was fitted to looks better than it is; scored on independent data it
    does not.

    A noiseless model correlates with an average of reliability :math:`r` at about
    :math:`c\sqrt r`, so a Spearman against a half average (reliability :math:`r_{1/2}`) is
    projected to the whole sample, whose reliability is the Spearman--Brown
    :math:`2r_{1/2}/(1+r_{1/2})`, by the factor :math:`\sqrt{2/(1+r_{1/2})}`: the held-out
    value is then read against the same noise ceiling as the whole sample's
    (:func:`noise_ceiling_estimate`)."""
    H = check_int("H", H, low=1)
    a, b = _halves(first, second)
    pa, pb = (np.sqrt(_check_rho(x.mean(0), "first, second")) for x in (a, b))
    sp, w, w_rest = [], [], []
    for fit_on, score_on in ((pa, pb), (pb, pa)):
        theory = fit_cesaro(fit_on, H).theory
        sp.append(spearman(theory, score_on))
        w.append(normalised_positions_wasserstein(score_on, theory))
        w_rest.append(normalised_positions_wasserstein(score_on[:-1], theory[:-1]))
    r_half = spearman(pa, pb)
    step = math.sqrt(2.0 / (1.0 + r_half)) if r_half > 0 else 1.0
    return HeldOutFit(spearman=float(min(np.mean(sp) * step, 1.0)), wasserstein=float(np.mean(w)),
                      half_reliability=float(r_half), noise_wasserstein=normalised_positions_wasserstein(pa, pb),
                      wasserstein_rest=float(np.mean(w_rest)))


def monotone_spearman(profile: npt.ArrayLike) -> float:
    r"""How far a profile is a monotone trend: :math:`|r_S(j, \rho(j))|`, the Spearman of the
    best monotone curve (rising or falling, any shape) with ``profile: (L,)``. A model with no
    U at all -- pure primacy, or pure recency -- reaches this value against the profile, so it
    is the alternative a claimed Spearman must exceed to say anything about the U."""
    p = np.asarray(profile, dtype=float)
    if p.ndim != 1 or p.size < 3:
        raise fail("profile", f"shape {p.shape}", "a profile (L,) with L >= 3")
    return abs(spearman(np.arange(p.size, dtype=float), p))


def monotone_floor(first: float, second: float) -> float:
    r"""The smallest Spearman two profiles can have when each has Spearman ``first`` and
    ``second`` with the position :math:`j` (signed: :func:`monotone_spearman` without the
    absolute value). A Spearman is the Pearson correlation of rank vectors, the cosine of
    the angle between them, and angles obey the triangle inequality through :math:`j` and
    through :math:`-j`, so it is at least :math:`\cos\theta` with :math:`\theta =
    \min(\theta_1 + \theta_2,\ 2\pi - \theta_1 - \theta_2)`, :math:`\theta_i = \arccos m_i`
    (``-1`` once :math:`\theta` passes :math:`\pi`). Two profiles whose departures from their
    trends are opposite reach it: a Spearman above it says more than that both are
    monotone-dominated."""
    a = math.acos(check_float("first", first, low=-1.0, high=1.0))
    b = math.acos(check_float("second", second, low=-1.0, high=1.0))
    return math.cos(min(a + b, 2 * math.pi - a - b, math.pi))


def _centred_ms(x: np.ndarray) -> float:
    return float(np.mean((x - x.mean()) ** 2))


def prediction_excess(first: npt.ArrayLike, second: npt.ArrayLike, prediction: npt.ArrayLike) -> float:
    r"""How far a profile predicted with no fit (``prediction: (L,)``, known up to its scale) lies
    from the true one, net of the noise: an unbiased estimate of :math:`b^2`, the mean square over
    positions of :math:`\ln(\rho/\text{prediction})` about its mean, from two independent halves
    of the replicates (``first, second: (n, L)`` estimates of :math:`\rho^2`).

    With :math:`m_A^2, m_B^2` the centred mean squares of :math:`\ln\bar\rho_A - \ln p` and
    :math:`\ln\bar\rho_B - \ln p`, and :math:`d^2` that of :math:`\ln\bar\rho_A -
    \ln\bar\rho_B`: :math:`E\,m_A^2 = b^2 + v_A`, :math:`E\,m_B^2 = b^2 + v_B` and
    :math:`E\,d^2 = v_A + v_B` (the halves' noise is independent), so :math:`(m_A^2 + m_B^2 -
    d^2)/2` estimates :math:`b^2` whatever the noise and its correlation between positions. It
    may come out negative when :math:`b` is small against the noise."""
    a, b = _halves(first, second)
    la, lb = (0.5 * np.log(_check_rho(x.mean(0), "first, second")) for x in (a, b))
    lp = np.log(_check_rho(prediction, "prediction"))
    if lp.size != la.size:
        raise fail("prediction", f"a profile of length {lp.size}", f"the halves' length, {la.size}")
    return 0.5 * (_centred_ms(la - lp) + _centred_ms(lb - lp) - _centred_ms(la - lb))


@dataclass(frozen=True)
class ProfileSummary:
    """A measured profile against its Cesàro fit (see :func:`summarise_profile`)."""

    fit: CesaroFit
    spearman: float
    wasserstein: float
    log10_peak_to_trough: float
    theory_log10_peak_to_trough: float
    shape: str
    j_min: int


def summarise_profile(rho: np.ndarray, H: int) -> ProfileSummary:
    """Fit the paper's model; then Spearman and W1 between ``rho`` and the fit, the
    log10 peak-to-trough ratios of both, the shape
    (:func:`~attention_geometry.cesaro.classify_profile`, ``rtol = 0.05``) and the
    position of the minimum."""
    rho = _check_rho(rho)
    fit = fit_cesaro(rho, H)
    return ProfileSummary(fit=fit, spearman=spearman(rho, fit.theory),
                          wasserstein=normalised_positions_wasserstein(rho, fit.theory),
                          log10_peak_to_trough=log10_peak_to_trough(rho),
                          theory_log10_peak_to_trough=log10_peak_to_trough(fit.theory),
                          shape=classify_profile(rho, rtol=0.05), j_min=profile_minimum(rho)[0])


def ends_over_middle(rho: np.ndarray) -> tuple[float, float]:
    """``(rho_1 / m, rho_L / m)`` with ``m`` the median of ``rho: (L,)`` over the middle
    half of the positions, ``L/4 < j <= 3L/4``."""
    rho = _check_rho(rho)
    L = rho.size
    m = float(np.median(rho[L // 4:(3 * L) // 4]))
    return float(rho[0] / m), float(rho[-1] / m)


# ----------------------------------------------------------------- tests


@dataclass(frozen=True)
class LateMinimum:
    """``j_min``: the minimum of the first half's average profile over ``1..L-1``;
    ``rise``: on the other half, :math:`\\rho^2(L-1) - \\rho^2(j_{min})` per sequence
    (paired), relative to the mean of :math:`\\rho^2(j_{min})` -- positive and
    significant means the profile really rises again before the last position."""

    j_min: int
    x_min: float
    rise: Estimate


def late_minimum_test(sample: ProfileSample, draws: Sequence[slice] | None = None) -> LateMinimum:
    """Choose the minimum on the even sequences, test the rise after it on the odd ones (with
    ``draws``: on the sequences of the even- and of the odd-numbered weight draws,
    :meth:`ProfileSample.halves`).

    Choosing and testing on the same data would find a "rise" in pure noise (the
    minimum of a noisy curve is biased low); on independent halves the rise is an
    unbiased estimate. ``rise.value = 0`` with ``se = 0`` when the minimum is at ``L-1``."""
    if sample.n < 4:
        raise fail("sample", f"{sample.n} sequences", "at least 4 sequences (two halves of two)")
    choose, test = sample.halves(draws)
    body = choose.mean_sq()[:-1]
    j = int(np.argmin(body))  # 0-based, over 1..L-1
    L = sample.L
    if j == L - 2:
        return LateMinimum(j_min=L - 1, x_min=(L - 1) / L, rise=Estimate(0.0, 0.0))
    diff = paired_difference(test.rho2[:, L - 2], test.rho2[:, j])
    scale = float(test.rho2[:, j].mean())
    return LateMinimum(j_min=j + 1, x_min=(j + 1) / L,
                       rise=Estimate(diff.value / scale, diff.se / scale, diff.df))


def boundary_contrast(rho2: np.ndarray, boundaries: Sequence[int], *, width: int = 8) -> np.ndarray:
    r"""``(n,)``: per sequence, the mean over ``boundaries`` (0-based first positions of
    new chunks) of :math:`\ln \hat\rho^2(b) - \ln \operatorname{median}\hat\rho^2` over the
    ``width`` positions on each side (``b`` itself excluded). About 0 without a spike."""
    rho2 = np.asarray(rho2, dtype=np.float64)
    width = check_int("width", width, low=1)
    if rho2.ndim != 2:
        raise fail("rho2", f"an array of shape {rho2.shape}", "shape (n, L)")
    L = rho2.shape[1]
    bs = [int(b) for b in boundaries]
    if not bs or any(b - width < 0 or b + width >= L for b in bs):
        raise fail("boundaries", bs, f"positions with {width} neighbours on each side inside 0..{L - 1}")
    out = []
    for b in bs:
        neigh = np.concatenate([rho2[:, b - width:b], rho2[:, b + 1:b + width + 1]], axis=1)
        out.append(np.log(rho2[:, b]) - np.log(np.median(neigh, axis=1)))
    return np.mean(out, axis=0)


def folded_profile(rho2: np.ndarray, chunk_len: int, first: int = 1) -> np.ndarray:
    """``(n, chunk_len)``: each sequence's :math:`\\hat\\rho^2` averaged over the chunks
    ``first, first + 1, ...`` (whole chunks only), by offset within the chunk."""
    rho2 = np.asarray(rho2, dtype=np.float64)
    chunk_len = check_int("chunk_len", chunk_len, low=2)
    n_chunks = rho2.shape[1] // chunk_len
    if n_chunks <= first:
        raise fail("chunk_len", chunk_len, f"short enough for more than {first} whole chunk(s) in L = {rho2.shape[1]}")
    x = rho2[:, :n_chunks * chunk_len].reshape(rho2.shape[0], n_chunks, chunk_len)
    return x[:, first:].mean(1)


#: What :func:`shape_numbers` reads off a profile.
SHAPE_NUMBERS = ("alpha", "log10_ptt", "last_height", "wasserstein")


def shape_numbers(rho: np.ndarray, H: int) -> dict[str, float]:
    r"""What a profile ``rho: (L,)`` says in the paper's terms: ``alpha``, the :math:`\alpha` of the
    paper's form :math:`g\,(N^H)_{L,j}` fitted to it (:func:`fit_cesaro`); ``log10_ptt``, its
    :math:`\log_{10}` peak-to-trough; ``last_height``, :math:`\log_{10}\rho(L)` over the median of
    the middle half (:func:`anchored_valley_depth`); ``wasserstein``, :math:`W_1` between it and
    that fit (:func:`normalised_positions_wasserstein`). Scale-free: a predicted profile known up
    to its scale gives the same numbers as the measured one it predicts."""
    rho = _check_rho(rho)
    fit = fit_cesaro(rho, H)
    return {"alpha": float(fit.alpha.value), "log10_ptt": log10_peak_to_trough(rho),
            "last_height": float(anchored_valley_depth(rho[None] ** 2)[0]),
            "wasserstein": normalised_positions_wasserstein(rho, fit.theory)}


def anchored_valley_depth(rho2: np.ndarray) -> np.ndarray:
    r"""``(n,)``: :math:`\log_{10}\rho(L) - \log_{10}\operatorname{median}_{L/4<j\le3L/4}\rho(j)`
    per sequence: how far the middle lies below the last position when the
    profile is anchored there (the paper's Fig. 3, right)."""
    rho2 = np.asarray(rho2, dtype=np.float64)
    if rho2.ndim != 2 or rho2.shape[1] < 4:
        raise fail("rho2", f"an array of shape {rho2.shape}", "shape (n, L) with L >= 4")
    L = rho2.shape[1]
    mid = np.median(rho2[:, L // 4:(3 * L) // 4], axis=1)
    return 0.5 * np.log10(rho2[:, -1] / mid)


def init_spread(values: np.ndarray, *, n_boot: int, rng: np.random.Generator) -> Estimate:
    """The median over positions of the relative standard deviation (SD / mean) of
    ``values: (n, L)`` across its rows (e.g. exact :math:`\rho(j)^2` of ``n``
    independent initialisations), with a bootstrap standard error over rows."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 3:
        raise fail("values", f"an array of shape {values.shape}", "shape (n, L) with n >= 3")

    def stat(v):
        return float(np.median(v.std(0, ddof=1) / v.mean(0)))

    reps = bootstrap_replicates(lambda idx: stat(values[idx]), len(values), n_boot=n_boot, rng=rng)
    return Estimate(stat(values), float(np.std(reps, ddof=1)))


def effective_rank(J: npt.ArrayLike) -> np.ndarray:
    r"""``(L,)``: :math:`(\operatorname{tr}B_j)^2 / \lVert B_j\rVert_F^2` with
    :math:`B_j = J_j J_j^\top`, for blocks ``J: (L, d, d)`` (numpy or torch). A
    single Gaussian probe then has relative variance :math:`2/r_{\mathrm{eff}}`
    (``eq-jac-var-gauss``)."""
    J = np.asarray(J, dtype=np.float64)
    if J.ndim != 3:
        raise fail("J", f"an array of shape {J.shape}", "shape (L, d, d)")
    B = J @ np.swapaxes(J, 1, 2)
    return np.trace(B, axis1=1, axis2=2) ** 2 / (B**2).sum((1, 2))


# ------------------------------------------------------ everything at once


@dataclass(frozen=True)
class ProfileStatistics:
    r"""A measured sample against both models, every number with its uncertainty
    (bootstrap over sequences, ``n_boot`` replicates; fits refitted in each).

    ``cesaro``: the paper's fit (its ``alpha`` carries the bootstrap interval);
    ``derived``/``derived_layers``: the derived expectation with one gain, and with
    per-layer gains :math:`g/(1+\zeta(l-1))`; ``spearman``, ``wasserstein``: the
    Cesàro fit of the even sequences' average against the odd ones' and the other way round
    (:func:`held_out_fit`); ``log10_ptt``: its peak-to-trough
    ratio, chosen on the even sequences and measured on the odd ones and the other way
    round (:func:`held_out_log10_peak_to_trough`); ``ceiling``: the noise ceiling;
    ``noise_log_rmse``: the rms standard error of :math:`\ln\bar\rho` over positions (what a perfect model's
    ``log_rmse`` would be); ``late_minimum``: :func:`late_minimum_test`."""

    n: int
    L: int
    cesaro: CesaroFit
    derived: DerivedFit
    derived_layers: DerivedFit
    spearman: Estimate
    wasserstein: Estimate
    log10_ptt: Estimate
    ceiling: Estimate
    noise_log_rmse: float
    late_minimum: LateMinimum
    shape: str


def _interval(values, level=0.95):
    v = np.asarray(values, dtype=np.float64)
    return tuple(np.nanquantile(v, [0.5 - level / 2, 0.5 + level / 2]))


def _held_out(rho2: np.ndarray, idx: np.ndarray, statistic: Callable[[np.ndarray, np.ndarray], object]) -> object:
    """``statistic(first, second)`` of the rows ``idx`` of ``rho2`` (a bootstrap resample), halved
    by the parity of each row's original index, so that no sequence is in both halves; NaN when
    a half is empty."""
    idx = np.asarray(idx)
    even, odd = idx[idx % 2 == 0], idx[idx % 2 == 1]
    if not (even.size and odd.size):
        return float("nan")
    return statistic(rho2[even], rho2[odd])


def profile_statistics(sample: ProfileSample, H: int, *, n_boot: int, rng: np.random.Generator) -> ProfileStatistics:
    """Fits, distances, ceiling and late-minimum test of ``sample`` (see :class:`ProfileStatistics`)."""
    H = check_int("H", H)
    n_boot = check_int("n_boot", n_boot, low=10)
    rho = sample.profile()
    ces = fit_cesaro(rho, H)
    d0 = fit_derived(sample.mean_sq(), H)
    d1 = fit_derived(sample.mean_sq(), H, per_layer=True)
    def replicate(idx):  # the seven statistics of one resample of the sequences
        r = ProfileSample(sample.rho2[idx])
        p = r.profile()
        f = fit_cesaro(p, H)
        f1 = fit_derived(r.mean_sq(), H, per_layer=True, start=(math.log(d1.gain.value), math.log(d1.growth.value)))
        held = _held_out(sample.rho2, idx, lambda x, y: held_out_fit(x, y, H))
        return [f.alpha.value, getattr(held, "spearman", math.nan), getattr(held, "wasserstein", math.nan),
                _held_out(sample.rho2, idx, held_out_log10_peak_to_trough),
                fit_derived(r.mean_sq(), H, start=(math.log(d0.gain.value), 0.0)).gain.value,
                f1.gain.value, f1.growth.value]

    reps = dict(zip(("alpha", "sp", "w", "ptt", "g0", "g1", "zeta"),
                    bootstrap_replicates(replicate, sample.n, n_boot=n_boot, rng=rng)))

    def est(value, key):
        return Estimate(float(value), float(np.nanstd(reps[key], ddof=1)))

    ces = fit_cesaro(rho, H, alpha_interval=_interval(reps["alpha"]))
    d0 = fit_derived(sample.mean_sq(), H, intervals={"gain": _interval(reps["g0"])})
    d1 = fit_derived(sample.mean_sq(), H, per_layer=True,
                     intervals={"gain": _interval(reps["g1"]), "growth": _interval(reps["zeta"])})
    se_log = sample.rho2.std(0, ddof=1) / math.sqrt(sample.n) / (2 * sample.mean_sq())
    whole = np.arange(sample.n)
    held = _held_out(sample.rho2, whole, lambda x, y: held_out_fit(x, y, H))
    return ProfileStatistics(
        n=sample.n, L=sample.L, cesaro=ces, derived=d0, derived_layers=d1,
        spearman=est(held.spearman, "sp"), wasserstein=est(held.wasserstein, "w"),
        log10_ptt=est(_held_out(sample.rho2, whole, held_out_log10_peak_to_trough), "ptt"),
        ceiling=noise_ceiling_estimate(sample, n_boot=n_boot, rng=rng),
        noise_log_rmse=float(np.sqrt(np.mean(se_log**2))),
        late_minimum=late_minimum_test(sample), shape=classify_profile(rho, rtol=0.05))


def _log10_ends(sample: ProfileSample) -> float:
    return math.log10(min(ends_over_middle(sample.profile())))


def draw_profile_statistics(on: ProfileSample, H: int, draws: Sequence[slice], off: ProfileSample | None = None,
                            which: Sequence[str] | None = None) -> dict[str, DrawEstimate]:
    r"""The statistics the verdicts of chapter 8 read, each over the weight draws: ``draws`` are
    the rows of ``on`` (and ``off``) that went through each draw of a random-init decoder, and
    every statistic is :func:`~attention_geometry.draws.jackknife_over_draws` of its value on
    the whole sample (one draw: its sequences are left out one at a time, and ``n_draws`` is 1).

    ``spearman`` and ``wasserstein``: the paper's form fitted on one half's average profile and
    scored on the other's (:func:`held_out_fit`; the Spearman projected to the whole sample, so
    that it reads against the whole sample's ``ceiling``); ``noise_wasserstein``: :math:`W_1`
    between the two halves' averages, what noise alone puts into that ``wasserstein``; ``log10_ptt``: the peak-to-trough ratio with its positions
    chosen on one half and measured on the other (:func:`held_out_log10_peak_to_trough`);
    ``ceiling``: the noise ceiling (split halves, stepped up); ``rise``: the late minimum's
    relative rise (:func:`late_minimum_test`). The halves of these six are the even- and the
    odd-numbered draws (one draw: its even and odd sequences), so that they share no weights;
    ``ends``: :math:`\log_{10}` of the smaller of first/middle and last/middle; ``monotone``:
    the Spearman a monotone curve reaches against the average (:func:`monotone_spearman`), the
    alternative to a claimed Spearman of the paper's form; with ``off``
    (the same sequences without positional information, row for row): ``rope``, the Spearman
    between the two average profiles, ``rope_ceiling``, the noise ceiling of ``off``, and
    ``rope_floor``, the Spearman the two averages' monotone trends alone guarantee
    (:func:`monotone_floor`). A
    leave-one-out sample needs 4 sequences for the ceiling and the late minimum. ``which``: the
    names to compute (default: all)."""
    H = check_int("H", H, low=1)

    def halves(statistic):  # a statistic of two halves that share no weight draw
        return lambda parts: statistic(*_part_halves(parts))

    stats = {
        "spearman": lambda parts: held_out_fit(*draw_halves(parts), H).spearman,
        "wasserstein": lambda parts: held_out_fit(*draw_halves(parts), H).wasserstein,
        "noise_wasserstein": lambda parts: held_out_fit(*draw_halves(parts), H).noise_wasserstein,
        "ends": lambda parts: _log10_ends(ProfileSample(np.concatenate(parts))),
        "monotone": lambda parts: monotone_spearman(ProfileSample(np.concatenate(parts)).profile()),
        "log10_ptt": lambda parts: held_out_log10_peak_to_trough(*draw_halves(parts)),
        "ceiling": halves(_split_half),
        "rise": halves(lambda r, rows: late_minimum_test(r, rows).rise.value),
    }
    order = ("spearman", "wasserstein", "noise_wasserstein", "log10_ptt", "ceiling", "rise", "ends", "monotone")

    def over(statistic, rho2):
        return jackknife_over_draws(statistic, [rho2[s] for s in draws])

    names = order + (("rope", "rope_ceiling", "rope_floor") if off is not None else ())
    which = names if which is None else tuple(which)
    for name in which:
        check_choice("which", name, names)
    out = {name: over(stats[name], on.rho2) for name in order if name in which}
    if off is not None and {"rope", "rope_ceiling"} & set(which):
        if off.rho2.shape != on.rho2.shape:
            raise fail("off", f"a sample of shape {off.rho2.shape}", f"the shape of on, {on.rho2.shape} (paired)")
        L = on.L
        if "rope" in which:
            out["rope"] = over(lambda parts: (lambda p: spearman(p[:L], p[L:]))(
                ProfileSample(np.concatenate(parts)).profile()), np.concatenate([on.rho2, off.rho2], axis=1))
        if "rope_ceiling" in which:
            out["rope_ceiling"] = over(stats["ceiling"], off.rho2)
        if "rope_floor" in which:
            j = np.arange(L, dtype=float)
            out["rope_floor"] = over(lambda parts: (lambda p: monotone_floor(
                spearman(j, p[:L]), spearman(j, p[L:])))(ProfileSample(np.concatenate(parts)).profile()),
                np.concatenate([on.rho2, off.rho2], axis=1))
    return out

