r"""The Cesàro calculus of position bias: powers of the causal averaging matrix.

Definitions (positions are 1-indexed, ``1 <= j <= i <= L``):

* the **Cesàro matrix** :math:`M \in \mathbb R^{L\times L}`, :math:`M_{ij} = 1/i`
  for :math:`j \le i` and 0 otherwise -- uniform causal attention;
* the **residual Cesàro matrix** :math:`N = (1-\alpha) I + \alpha M`,
  :math:`\alpha \in [0, 1]` -- one layer of uniform attention with a residual
  connection, normalised so that every row sums to 1.

The last row :math:`p = e_L^\top N^H` is the influence profile of the inputs on
the last position after ``H`` layers. It is also the law of a lazy random walk
started at ``L``: at each of ``H`` steps it stays with probability
:math:`1-\alpha`, else jumps to a uniform position in ``1..i``.

Closed forms (proved in the chapter):

.. math::

   (M^H)_{ij} = \binom{i-1}{j-1}\sum_{m=j}^{i} (-1)^{m-j}\binom{i-j}{m-j} m^{-H},
   \qquad
   (N^H)_{ij} = \binom{i-1}{j-1}\sum_{m=j}^{i} (-1)^{m-j}\binom{i-j}{m-j}
                \Bigl(1-\alpha+\frac{\alpha}{m}\Bigr)^{H},

and the binomial expansion :math:`N^H = \sum_r \binom{H}{r}\alpha^r(1-\alpha)^{H-r} M^r`.
The alternating sums are exact in rational arithmetic (``*_exact`` functions,
:class:`fractions.Fraction`) and useless in float64 beyond small ``L``
(:func:`last_row_alternating`). The stable method :func:`last_row` applies ``N``
``H`` times to :math:`e_L^\top` by reverse cumulative sums: ``O(H L)``
operations on non-negative numbers only; :func:`log_last_row` does the same in
log space when :math:`L^{-H}` underflows.

The continuous limit (``x = j/L``, ``L -> oo`` at fixed ``H``):
:math:`\rho^{(M)}_H(x) = (\ln 1/x)^{H-1}/(H-1)!` and
:math:`\rho^{(N)}_H = (1-\alpha)^H\delta(1-x) + \sum_{r\ge1}\binom{H}{r}\alpha^r(1-\alpha)^{H-r}\rho^{(M)}_r`
(:func:`rho_causal`, :func:`rho_residual`, :func:`limit_cell_masses`).

Shapes: a profile ``p: (L,)`` holds :math:`p_j` at index ``j - 1``.
"""

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np
import numpy.typing as npt
from scipy.special import gammainc, gammaincc, gammaln

from ._checks import as_torch_generator, check_float, check_int, described, fail

__all__ = [
    "cesaro_matrix",
    "residual_cesaro_matrix",
    "cesaro_matrix_exact",
    "residual_cesaro_matrix_exact",
    "matrix_power_exact",
    "pascal_matrix_exact",
    "cesaro_power_entry_exact",
    "residual_cesaro_power_entry_exact",
    "residual_cesaro_power_exact",
    "last_row_closed_form_exact",
    "last_row_exact",
    "last_row_alternating",
    "alternating_max_term_log10",
    "last_row",
    "log_last_row",
    "log_cesaro_rows",
    "rho_causal",
    "rho_residual",
    "limit_cell_masses",
    "total_variation",
    "profile_minimum",
    "classify_profile",
    "DeadZone",
    "dead_zone",
    "alternating_error_grid",
    "AlphaSweep",
    "alpha_sweep",
    "alpha_last_above_middle",
    "alpha_dead_zone",
    "limit_discrepancy",
    "limit_accurate_from",
    "peak_to_trough_floor",
    "jump_distribution",
    "log_last_row_schedule",
    "log10_peak_to_trough_schedule",
    "schedule_floor",
    "tail_mass",
    "scalar_model_gradients",
    "logit_gradient_per_key",
]


# ----------------------------------------------------------------- validation


def _check_int(name: str, value, low: int = 1) -> int:
    return check_int(name, value, low=low)


def _check_alpha(alpha, exact: bool = False):
    """``alpha`` in [0, 1]; a Fraction when ``exact`` (floats convert exactly)."""
    if isinstance(alpha, Fraction):
        if not 0 <= alpha <= 1:
            raise fail("alpha", alpha, "a number in [0, 1]", "is out of range")
        return alpha if exact else float(alpha)
    check_float("alpha", alpha, low=0.0, high=1.0)
    return Fraction(alpha) if exact else float(alpha)


def _check_profile(p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or p.size < 2:
        raise fail("profile", f"an array of shape {p.shape}", "shape (L,) with L >= 2")
    if not np.all(np.isfinite(p)):
        raise fail("profile", "an array with non-finite entries", "finite numbers")
    return p


# ------------------------------------------------------------------ matrices


def cesaro_matrix(L: int) -> np.ndarray:
    """The Cesàro matrix ``M: (L, L)`` in float64, ``M[i-1, j-1] = 1/i`` for ``j <= i`` (``def-cesaro``)."""
    L = _check_int("L", L)
    return np.tril(np.ones((L, L))) / np.arange(1, L + 1)[:, None]


def residual_cesaro_matrix(L: int, alpha: float) -> np.ndarray:
    """``N = (1 - alpha) I + alpha M: (L, L)`` in float64 (``eq-cesaro-N``)."""
    alpha = _check_alpha(alpha)
    return (1 - alpha) * np.eye(_check_int("L", L)) + alpha * cesaro_matrix(L)


def cesaro_matrix_exact(L: int) -> list[list[Fraction]]:
    """``M`` as an ``L x L`` list of lists of :class:`~fractions.Fraction`."""
    L = _check_int("L", L)
    return [[Fraction(1, i) if j <= i else Fraction(0) for j in range(1, L + 1)]
            for i in range(1, L + 1)]


def residual_cesaro_matrix_exact(L: int, alpha: float | Fraction) -> list[list[Fraction]]:
    """``N = (1 - alpha) I + alpha M`` in exact rationals (``alpha`` converted exactly)."""
    a = _check_alpha(alpha, exact=True)
    M = cesaro_matrix_exact(L)
    return [[a * M[i][j] + (1 - a if i == j else 0) for j in range(L)] for i in range(L)]


def matrix_power_exact(A: list[list[Fraction]], H: int) -> list[list[Fraction]]:
    """``A**H`` by repeated multiplication in exact arithmetic (``H >= 0``)."""
    H = _check_int("H", H, low=0)
    n = len(A)
    out = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for _ in range(H):
        out = [[sum((out[i][k] * A[k][j] for k in range(n)), Fraction(0)) for j in range(n)]
               for i in range(n)]
    return out


def pascal_matrix_exact(L: int, inverse: bool = False) -> list[list[Fraction]]:
    r"""The lower Pascal matrix ``P[i-1][m-1] = C(i-1, m-1)`` (the eigenvectors of ``M``),
    or its inverse ``(-1)^(m-j) C(m-1, j-1)``."""
    L = _check_int("L", L)
    sign = (lambda k: (-1) ** k) if inverse else (lambda k: 1)
    return [[Fraction(sign(i - j) * math.comb(i, j)) if j <= i else Fraction(0)
             for j in range(L)] for i in range(L)]


# ------------------------------------------------------- closed forms, exact


def cesaro_power_entry_exact(i: int, j: int, H: int) -> Fraction:
    r""":math:`(M^H)_{ij}` by the alternating closed form, exactly (``H >= 0``; ``eq-cesaro-power``)."""
    i, j = _check_int("i", i), _check_int("j", j)
    H = _check_int("H", H, low=0)
    if j > i:
        return Fraction(0)
    s = sum((Fraction((-1) ** (m - j) * math.comb(i - j, m - j), m**H) for m in range(j, i + 1)),
            Fraction(0))
    return math.comb(i - 1, j - 1) * s


def residual_cesaro_power_entry_exact(i: int, j: int, H: int, alpha: float | Fraction, form: str = "eigen") -> Fraction:
    r""":math:`(N^H)_{ij}` exactly, by one of two closed forms.

    ``form="eigen"``: the alternating sum with :math:`m^{-H}` replaced by
    :math:`(1-\alpha+\alpha/m)^H` (``eq-residual-eigen``); ``form="binomial"``: the
    paper's expansion (``eq-residual-binomial``)
    :math:`(1-\alpha)^H\delta_{ij} + \sum_{r\ge1}\binom{H}{r}\alpha^r(1-\alpha)^{H-r}(M^r)_{ij}`.
    """
    a = _check_alpha(alpha, exact=True)
    i, j = _check_int("i", i), _check_int("j", j)
    H = _check_int("H", H, low=0)
    if j > i:
        return Fraction(0)
    if form == "eigen":
        s = sum(((-1) ** (m - j) * math.comb(i - j, m - j) * (1 - a + a / m) ** H
                 for m in range(j, i + 1)), Fraction(0))
        return math.comb(i - 1, j - 1) * s
    if form == "binomial":
        out = (1 - a) ** H * int(i == j)
        for r in range(1, H + 1):
            out += math.comb(H, r) * a**r * (1 - a) ** (H - r) * cesaro_power_entry_exact(i, j, r)
        return out
    raise fail("form", form, "'eigen' or 'binomial'", "is not known")


def residual_cesaro_power_exact(L: int, H: int, alpha: float | Fraction, form: str = "eigen") -> list[list[Fraction]]:
    """All of ``N^H: (L, L)`` from a closed form, exactly."""
    L = _check_int("L", L)
    return [[residual_cesaro_power_entry_exact(i, j, H, alpha, form) for j in range(1, L + 1)]
            for i in range(1, L + 1)]


def last_row_closed_form_exact(L: int, H: int, alpha: float | Fraction, form: str = "eigen") -> list[Fraction]:
    """The last row of ``N^H`` (length ``L``) from a closed form, exactly."""
    L = _check_int("L", L)
    return [residual_cesaro_power_entry_exact(L, j, H, alpha, form) for j in range(1, L + 1)]


def last_row_exact(L: int, H: int, alpha: float | Fraction) -> list[Fraction]:
    r"""The last row of ``N^H`` exactly, by the recursion of :func:`last_row` in integers.

    With :math:`\alpha = p/q` and :math:`\ell = \mathrm{lcm}(1, \dots, L)`, after
    ``h`` layers the row is :math:`a/(q\ell)^h` with integer ``a``, so every step
    is integer arithmetic; one normalisation at the end. Time grows like
    ``H**2 L**2`` bit operations: fine for ``L = 2048, H = 24`` (seconds).
    """
    L, H = _check_int("L", L), _check_int("H", H)
    a = _check_alpha(alpha, exact=True)
    p, q = a.numerator, a.denominator
    ell = math.lcm(*range(1, L + 1))
    weight = [ell // i for i in range(1, L + 1)]
    keep = (q - p) * ell
    row = [0] * (L - 1) + [1]
    for _ in range(H):
        s, new = 0, [0] * L
        for j in range(L - 1, -1, -1):
            s += row[j] * weight[j]
            new[j] = keep * row[j] + p * s
        row = new
    denom = (q * ell) ** H
    return [Fraction(x, denom) for x in row]


# ------------------------------------------------- closed form in float64


@lru_cache(maxsize=8)
def _log_binom_table(n: int) -> np.ndarray:
    k = np.arange(n + 1)
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _alternating_log_terms(L: int, H: int, alpha: float):
    """log|t_{jm}| and sign of the terms of the alternating sum, prefactor included:
    ``t_{jm} = C(L-1, j-1) C(L-j, m-j) (-1)^(m-j) lambda_m^H``; arrays ``(L, L)``
    indexed ``[j-1, m-1]``, ``-inf`` for ``m < j``."""
    j = np.arange(1, L + 1)[:, None]
    m = np.arange(1, L + 1)[None, :]
    lam = (1 - alpha) + alpha / m
    with np.errstate(divide="ignore", invalid="ignore"):
        n = L - j
        k = m - j
        log_c2 = gammaln(n + 1) - gammaln(np.maximum(k, 0) + 1) - gammaln(np.maximum(n - k, 0) + 1)
        log_t = _log_binom_table(L - 1)[j - 1] + log_c2 + H * np.log(lam)
    log_t = np.where(m >= j, log_t, -np.inf)
    sign = np.where((m - j) % 2 == 0, 1.0, -1.0)
    return log_t, sign


def last_row_alternating(L: int, H: int, alpha: float) -> np.ndarray:
    r"""The last row of ``N^H``, ``(L,)``, by the alternating closed form in float64.

    Written as in the paper: :math:`\binom{L-1}{j-1}` times the inner alternating sum
    of :math:`\binom{L-j}{m-j}\lambda_m^H`, binomials as ``exp(gammaln)``.
    Numerically useless beyond small ``L``: the terms exceed the result by many
    orders of magnitude (:func:`alternating_max_term_log10`) and overflow to
    ``inf`` (then ``nan``) once they pass ``1e308``.
    """
    L, H = _check_int("L", L), _check_int("H", H)
    alpha = _check_alpha(alpha)
    log_t, sign = _alternating_log_terms(L, H, alpha)
    prefactor_log = _log_binom_table(L - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        inner = np.sum(sign * np.exp(log_t - prefactor_log[:, None]), axis=1)
        return np.exp(prefactor_log) * inner


def alternating_max_term_log10(L: int, H: int, alpha: float) -> np.ndarray:
    r"""``(L,)``: :math:`\log_{10}\max_m |t_{jm}|`, the largest term of the alternating
    sum for :math:`(N^H)_{L,j}` (prefactor included), computed in log space."""
    L, H = _check_int("L", L), _check_int("H", H)
    log_t, _ = _alternating_log_terms(L, H, _check_alpha(alpha))
    return log_t.max(axis=1) / math.log(10)


# ------------------------------------------------------- the stable method


def last_row(L: int, H: int, alpha: float) -> np.ndarray:
    r"""The last row :math:`p = e_L^\top N^H`, ``(L,)``, stably in ``O(H L)`` (``eq-cesaro-recursion``).

    One layer maps a row ``r`` to
    :math:`(rN)_j = (1-\alpha) r_j + \alpha\sum_{i \ge j} r_i/i`: a reverse
    cumulative sum. Every quantity is a sum of non-negative numbers, so the
    componentwise relative error is at most about ``H (L + 3)`` units of
    roundoff -- except that entries below ``~1e-308`` underflow (use
    :func:`log_last_row`).
    """
    L, H = _check_int("L", L), _check_int("H", H)
    alpha = _check_alpha(alpha)
    inv = 1.0 / np.arange(1, L + 1)
    row = np.zeros(L)
    row[-1] = 1.0
    for _ in range(H):
        tail = np.cumsum((row * inv)[::-1])[::-1]
        row = (1 - alpha) * row + alpha * tail
    return row


def log_last_row(L: int, H: int, alpha: float) -> np.ndarray:
    r""":math:`\ln p_j` for the last row of ``N^H``, ``(L,)``, by the same recursion in
    log space (reverse ``logaddexp`` accumulation); no underflow. Entries that are
    exactly zero (only for ``alpha = 0``) are ``-inf``."""
    L, H = _check_int("L", L), _check_int("H", H)
    alpha = _check_alpha(alpha)
    log_inv = -np.log(np.arange(1, L + 1))
    with np.errstate(divide="ignore"):
        log_keep, log_mix = np.log1p(-alpha), np.log(alpha)
        row = np.full(L, -np.inf)
    row[-1] = 0.0
    for _ in range(H):
        tail = np.logaddexp.accumulate((row + log_inv)[::-1])[::-1]
        row = np.logaddexp(log_keep + row, log_mix + tail)
    return row


def log_cesaro_rows(L: int, H: int) -> np.ndarray:
    r"""``(H + 1, L)``: :math:`\ln (M^r)_{L,j}` for ``r = 0..H`` (row ``r``, column ``j - 1``),
    the last rows of every power of the pure Cesàro matrix up to ``H``, by the
    recursion of :func:`log_last_row` with :math:`\alpha = 1`, keeping each step
    (``O(H L)``). Row 0 is :math:`\ln e_L^\top` (``-inf`` except at ``j = L``).
    These are the path weights of ``eq-cesaro-paths``, summed over the
    paths with ``r`` jumps."""
    L, H = _check_int("L", L), _check_int("H", H, low=0)
    log_inv = -np.log(np.arange(1, L + 1))
    out = np.full((H + 1, L), -np.inf)
    out[0, -1] = 0.0
    for r in range(1, H + 1):
        out[r] = np.logaddexp.accumulate((out[r - 1] + log_inv)[::-1])[::-1]
    return out


# --------------------------------------------------------- continuous limit


def rho_causal(x: npt.ArrayLike, H: int) -> np.ndarray:
    r""":math:`\rho^{(M)}_H(x) = (\ln 1/x)^{H-1}/(H-1)!` on ``x in (0, 1]``; ``x: (n,)`` (``eq-cesaro-rho``)."""
    H = _check_int("H", H)
    x = np.asarray(x, dtype=np.float64)
    if np.any((x <= 0) | (x > 1)):
        raise fail("x", described("an array with entries outside (0, 1]"), "0 < x <= 1")
    s = -np.log(x)
    with np.errstate(divide="ignore"):
        return np.exp((H - 1) * np.log(s) - gammaln(H)) if H > 1 else np.ones_like(x)


def rho_residual(x: npt.ArrayLike, H: int, alpha: float) -> np.ndarray:
    r"""The continuous part of :math:`\rho^{(N)}_H(x)` on ``(0, 1]``, ``x: (n,)`` (``eq-cesaro-rho``):
    :math:`\sum_{r=1}^H \binom{H}{r}\alpha^r(1-\alpha)^{H-r}\rho^{(M)}_r(x)`.
    The Dirac mass :math:`(1-\alpha)^H` at ``x = 1`` is not included."""
    H = _check_int("H", H)
    alpha = _check_alpha(alpha)
    return sum(math.comb(H, r) * alpha**r * (1 - alpha) ** (H - r) * rho_causal(x, r)
               for r in range(1, H + 1))


def limit_cell_masses(L: int, H: int, alpha: float) -> np.ndarray:
    r"""``(L,)``: the mass the continuous limit puts in each cell ``((j-1)/L, j/L]``,
    the Dirac mass :math:`(1-\alpha)^H` counted in the last cell. Uses
    :math:`\int_0^b \rho^{(M)}_r = Q(r, \ln 1/b)` (regularised upper incomplete gamma)."""
    L, H = _check_int("L", L), _check_int("H", H)
    alpha = _check_alpha(alpha)
    edges = np.arange(0, L + 1) / L
    with np.errstate(divide="ignore"):
        s = -np.log(edges)  # s = inf at x = 0
    out = np.zeros(L)
    for r in range(1, H + 1):
        # mass of ((j-1)/L, j/L] = P(r, s_{j-1}) - P(r, s_j) = Q(r, s_j) - Q(r, s_{j-1});
        # take the difference of whichever is small, to avoid cancellation
        lower = gammainc(r, s)
        upper = np.ones_like(lower)  # needed (and computed) only at the cells' edges where lower >= 0.5
        need = lower >= 0.5
        need[1:] |= need[:-1]
        upper[need] = gammaincc(r, s[need])
        mass = np.where(lower[:-1] < 0.5, lower[:-1] - lower[1:], upper[1:] - upper[:-1])
        out += math.comb(H, r) * alpha**r * (1 - alpha) ** (H - r) * np.maximum(mass, 0.0)
    out[-1] += (1 - alpha) ** H
    return out


def total_variation(p: npt.ArrayLike, q: npt.ArrayLike) -> float:
    """Total-variation distance ``sum |p - q| / 2`` of two profiles ``(L,)``."""
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


# ------------------------------------------------------ shape of a profile


def profile_minimum(p: npt.ArrayLike) -> tuple[int, float]:
    """Position ``j*`` (1-indexed) of the smallest entry of ``p: (L,)`` (the last one
    among ties) and ``x* = j*/L``."""
    p = _check_profile(p)
    j = len(p) - int(np.argmin(p[::-1]))
    return j, j / len(p)


def classify_profile(p: npt.ArrayLike, rtol: float = 1e-12) -> str:
    r"""The shape of a profile ``p: (L,)``, ignoring relative changes below ``rtol``:

    * ``"U-shape"``: over positions ``1..L-1`` the minimum ``j*`` lies below
      ``p_1`` and is followed by a rise (some ``p_j > p_{j*}`` with
      ``j* < j < L``) -- a valley in the middle;
    * ``"monotone + final spike"``: non-increasing on ``1..L-1``, then
      ``p_L > p_{L-1}``;
    * ``"monotone"``: non-increasing throughout;

    (profiles are non-negative; comparisons are relative, ``a > b (1 + rtol)``).
    * ``"other"``: anything else (for instance increasing).
    """
    p = _check_profile(p)
    body = p[:-1]
    j_star = int(np.argmin(body))
    falls = body[0] > body[j_star] * (1 + rtol)
    if falls and np.any(body[j_star + 1:] > body[j_star] * (1 + rtol)):
        return "U-shape"
    if not np.all(body[1:] <= body[:-1] * (1 + rtol)):
        return "other"
    return "monotone + final spike" if p[-1] > p[-2] * (1 + rtol) else "monotone"


@dataclass(frozen=True)
class DeadZone:
    """Summary of the middle of a profile (densities are ``L p_j``; uniform = 1).

    ``middle_density``: ``L p_j`` at ``j = ceil(L/2)`` (``x = 1/2``);
    ``width``: fraction of positions with density below ``threshold``;
    ``peak_to_trough``: ``max p / min p``;
    ``end_to_middle``: ``p_L / p_mid``, > 1 when the last token rises above the middle.
    """

    middle_density: float
    width: float
    peak_to_trough: float
    end_to_middle: float
    threshold: float


def dead_zone(p: npt.ArrayLike, threshold: float = 0.1) -> DeadZone:
    """The dead-zone summary of a profile ``p: (L,)`` (see :class:`DeadZone`)."""
    p = _check_profile(p)
    check_float("threshold", threshold, low=0.0, low_open=True)
    L = len(p)
    density = L * p
    mid = density[(L + 1) // 2 - 1]
    return DeadZone(
        middle_density=float(mid),
        width=float(np.mean(density < threshold)),
        peak_to_trough=float(p.max() / p.min()) if p.min() > 0 else math.inf,
        end_to_middle=float(density[-1] / mid) if mid > 0 else math.inf,
        threshold=float(threshold),
    )


# ----------------------------------------------------------- studies


def alternating_error_grid(Ls: Sequence[int], Hs: Sequence[int], alpha: float, exact_L_max: int = 256) -> np.ndarray:
    """``(len(Hs), len(Ls))``: max over ``j`` of the relative error of
    :func:`last_row_alternating` (``inf`` where it overflows to ``inf``/``nan``).

    The reference is :func:`last_row_exact` for ``L <= exact_L_max`` and
    :func:`log_last_row` (proved accurate to ~``H L`` roundoffs) above.
    """
    out = np.empty((len(Hs), len(Ls)))
    for a, H in enumerate(Hs):
        for b, L in enumerate(Ls):
            if L <= exact_L_max:
                exact = last_row_exact(L, H, alpha)
                log_ref = np.array([math.log(x.numerator) - math.log(x.denominator) for x in exact])
            else:
                log_ref = log_last_row(L, H, alpha)
            approx = last_row_alternating(L, H, alpha)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                err = np.abs(approx * np.exp(-log_ref) - 1)
            out[a, b] = np.inf if not np.all(np.isfinite(err)) else err.max()
    return out


@dataclass(frozen=True)
class AlphaSweep:
    r"""Landmarks of the last row of ``N^H`` over ``alpha: (n,)`` (all ``(n,)``, log10):
    first token ``p_1``, middle ``p_mid`` (``j = ceil(L/2)``), ``p_{L-1}``, last
    ``p_L``; ``j_min`` the 1-indexed position of the minimum; ``shape`` from
    :func:`classify_profile`."""

    alpha: np.ndarray
    log10_first: np.ndarray
    log10_middle: np.ndarray
    log10_before_last: np.ndarray
    log10_last: np.ndarray
    j_min: np.ndarray
    shape: tuple


def alpha_sweep(L: int, H: int, alphas: Sequence[float]) -> AlphaSweep:
    """Landmarks of the profile for each ``alpha`` in ``alphas`` (log space, no underflow)."""
    L, H = _check_int("L", L, low=3), _check_int("H", H)
    alphas = [_check_alpha(a) for a in alphas]
    rows = [log_last_row(L, H, a) for a in alphas]
    ln10, mid = math.log(10), (L + 1) // 2 - 1
    shapes = []
    for r in rows:
        finite = np.isfinite(r)
        shapes.append(classify_profile(np.where(finite, np.exp(r - r[finite].max()), 0.0)))
    return AlphaSweep(
        alpha=np.array(alphas),
        log10_first=np.array([r[0] for r in rows]) / ln10,
        log10_middle=np.array([r[mid] for r in rows]) / ln10,
        log10_before_last=np.array([r[-2] for r in rows]) / ln10,
        log10_last=np.array([r[-1] for r in rows]) / ln10,
        j_min=np.array([L - int(np.argmin(r[::-1])) for r in rows]),
        shape=tuple(shapes),
    )


def _bisect(f, lo: float, hi: float, tol: float = 1e-10) -> float:
    flo = f(lo)
    if flo * f(hi) > 0:
        raise ValueError(f"no sign change of the criterion on [{lo}, {hi}]")
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if f(mid) * flo > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def alpha_last_above_middle(L: int, H: int) -> float:
    r"""The ``alpha`` at which the last token's influence equals the middle's,
    :math:`p_L = p_{\lceil L/2\rceil}`; for smaller ``alpha`` the last token rises
    above the middle (what a log plot shows as a "U")."""
    L, H = _check_int("L", L), _check_int("H", H)
    mid = (L + 1) // 2 - 1

    def gap(a):
        r = log_last_row(L, H, a)
        return r[-1] - r[mid]

    return _bisect(gap, 1e-9, 1.0)


def alpha_dead_zone(L: int, H: int, factor: float = 10.0) -> float:
    r"""The smallest ``alpha`` above the peak of the middle density with
    :math:`L\,p_{\lceil L/2\rceil} \le \text{factor}/(H-1)!` -- the range where the
    middle is a "dead zone of order 1/(H-1)!" (``inf`` if never)."""
    L, H = _check_int("L", L), _check_int("H", H)
    mid = (L + 1) // 2 - 1
    log_target = math.log(factor) - math.lgamma(H)

    def excess(a):
        return math.log(L) + log_last_row(L, H, a)[mid] - log_target

    if excess(1.0) > 0:
        return math.inf
    grid = np.linspace(0.0, 1.0, 101)[1:]
    values = np.array([excess(a) for a in grid])
    above = np.nonzero(values > 0)[0]
    if above.size == 0:
        return 0.0
    k = above[-1]
    return _bisect(excess, float(grid[k]), float(grid[k + 1]))


def limit_discrepancy(L: int, H: int, alpha: float, positions: npt.ArrayLike) -> np.ndarray:
    r"""``(len(positions),)``: :math:`p_j / m_j`, discrete over continuous-limit cell
    mass (:func:`limit_cell_masses`) at the 1-indexed ``positions`` (1 = exact)."""
    p, m = last_row(L, H, alpha), limit_cell_masses(L, H, alpha)
    idx = np.asarray(positions) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return p[idx] / m[idx]


def limit_accurate_from(L: int, H: int, alpha: float, rtol: float = 0.01) -> int:
    r"""The first position ``j0`` from which the continuous limit is accurate: for every
    ``j0 <= j <= L - 1``, :math:`|p_j/m_j - 1| \le` ``rtol`` with ``m_j`` the limit's
    cell mass (:func:`limit_cell_masses`). ``L`` when no such stretch exists before
    the last position (then the limit is wrong right up to the end)."""
    L, H = _check_int("L", L), _check_int("H", H)
    rtol = check_float("rtol", rtol, low=0.0, low_open=True)
    err = np.abs(limit_discrepancy(L, H, alpha, np.arange(1, L)) - 1)
    bad = np.nonzero(~(err <= rtol))[0]
    return 1 if bad.size == 0 else int(bad.max()) + 2


def peak_to_trough_floor(L: int, H: int, n_grid: int = 100) -> tuple[float, float]:
    r"""``(log10 floor, alpha at the floor)``: the smallest peak-to-trough ratio
    :math:`\max_j p_j / \min_j p_j` of the exact profile over :math:`\alpha \in (0, 1]`
    (grid of ``n_grid`` points, refined by a bounded search), in log10. No residual
    weight gives the scalar model a shallower profile at this ``L`` and ``H``."""
    L, H = _check_int("L", L), _check_int("H", H)
    n_grid = _check_int("n_grid", n_grid, low=3)

    def log10_ratio(a):
        r = log_last_row(L, H, float(a))
        return float((r.max() - r.min()) / math.log(10))

    grid = np.linspace(1.0 / n_grid, 1.0, n_grid)
    values = np.array([log10_ratio(a) for a in grid])
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n_grid - 1)]
    from scipy.optimize import minimize_scalar
    best = minimize_scalar(log10_ratio, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    if best.fun < values[i]:
        return float(best.fun), float(best.x)
    return float(values[i]), float(grid[i])


# ------------------------------------------------- layer-dependent residual weights


def _check_schedule(alphas) -> np.ndarray:
    a = np.asarray([float(_check_alpha(x)) for x in np.atleast_1d(np.asarray(alphas, dtype=float))])
    if a.size == 0:
        raise fail("alphas", a.tolist(), "a non-empty list of residual weights in [0, 1]")
    return a


def jump_distribution(alphas: Sequence[float]) -> np.ndarray:
    r""":math:`P(R = r)` for ``r = 0..H``, where :math:`R = \sum_\ell B_\ell` counts the jumps of the walk
    of ``prop-cesaro-walk`` when layer :math:`\ell` jumps with probability :math:`\alpha_\ell` (independent
    Bernoulli variables: a Poisson-binomial law). It is the weight of :math:`M^r` in
    :math:`\prod_\ell N_\ell` (``prop-cesaro-schedule``, ``eq-cesaro-schedule``): ``(H + 1,)`` float64, by
    convolution."""
    w = np.array([1.0])
    for a in _check_schedule(alphas):
        w = np.concatenate([w * (1.0 - a), [0.0]]) + np.concatenate([[0.0], w * a])
    return w


def log_last_row_schedule(L: int, alphas: Sequence[float]) -> np.ndarray:
    r""":math:`\ln p_j` for the last row of :math:`\prod_\ell N_\ell`, :math:`N_\ell = (1-\alpha_\ell) I + \alpha_\ell M`,
    ``(L,)``: the recursion of :func:`log_last_row` with layer :math:`\ell`'s own weight (the factors
    commute, so their order does not matter). ``-inf`` where an entry is exactly zero."""
    L = _check_int("L", L)
    alphas = _check_schedule(alphas)
    log_inv = -np.log(np.arange(1, L + 1))
    row = np.full(L, -np.inf)
    row[-1] = 0.0
    with np.errstate(divide="ignore"):
        for a in alphas:
            tail = np.logaddexp.accumulate((row + log_inv)[::-1])[::-1]
            row = np.logaddexp(np.log1p(-a) + row, np.log(a) + tail)
    return row


def log10_peak_to_trough_schedule(L: int, alphas: Sequence[float]) -> float:
    r""":math:`\log_{10}(\max_j p_j / \min_j p_j)` of the profile of a schedule (:func:`log_last_row_schedule`)."""
    r = log_last_row_schedule(L, alphas)
    return float((r.max() - r.min()) / math.log(10))


def schedule_floor(L: int, H: int, a_min: float, *, polish: bool = True) -> tuple[float, np.ndarray]:
    r"""The smallest :math:`\log_{10}` peak-to-trough ratio over schedules with every
    :math:`\alpha_\ell \in [a_{\min}, 1]`, and the schedule that reaches it (sorted; the order does not
    matter). Two families are searched exactly in one variable, the constant weight and
    :math:`H - 1` layers at :math:`a_{\min}` with one layer free, and the better is polished by a
    bounded search over all :math:`H` weights (L-BFGS-B; ``polish=False`` skips it, for speed). A
    numerical minimum: an upper bound on the floor, attained by the schedule returned."""
    from scipy.optimize import minimize, minimize_scalar

    L, H = _check_int("L", L), _check_int("H", H)
    a_min = float(_check_alpha(a_min))
    f = lambda a: log10_peak_to_trough_schedule(L, np.clip(a, a_min, 1.0))
    if a_min == 1.0:
        return f(np.ones(H)), np.ones(H)
    one = lambda b: np.concatenate([np.full(H - 1, a_min), [b]])
    families = [lambda b: np.full(H, b), one]
    starts = [one(1.0), np.full(H, a_min)]  # the ends of the families: bounded searches stop short of them
    for family in families:
        res = minimize_scalar(lambda b: f(family(b)), bounds=(a_min, 1.0), method="bounded", options={"xatol": 1e-6})
        starts.append(family(float(res.x)))
    x0 = min(starts, key=f)
    if not polish:
        return f(x0), np.sort(x0)
    best = minimize(f, x0, method="L-BFGS-B", bounds=[(a_min, 1.0)] * H)
    x = np.clip(best.x, a_min, 1.0) if best.fun < f(x0) else x0
    return f(x), np.sort(x)


def tail_mass(p: npt.ArrayLike, fraction: float) -> float:
    r"""The share of a profile ``p: (L,)`` on the positions ``L(1 - fraction) < j < L`` --
    the end of the context *without* the last token. A uniform profile gives about
    ``fraction``; a decreasing one less."""
    p = _check_profile(p)
    fraction = check_float("fraction", fraction, low=0.0, high=1.0, low_open=True)
    L = p.size
    start = int(math.floor(L * (1 - fraction)))
    return float(p[start:L - 1].sum() / p.sum())


def scalar_model_gradients(L: int, H: int, alpha: float, seed: int) -> dict:
    r"""Gradients in the scalar model (``eq-cesaro-eta``) of the last output
    :math:`y_L = (N^H h)_L` with attention logits ``s`` (zero: uniform) in every layer,
    ``h: (L,)`` standard normal from ``seed``. Returns ``(L,)`` arrays:
    ``"inputs"``: :math:`\partial y_L/\partial h_j`; ``"rho"``: :math:`(N^H)_{L,j}`;
    ``"logits_last"``/``"logits_first"``: :math:`\partial y_L/\partial s_{Lk}` in the
    last/first layer, against the key position ``k``. By autograd (float64).

    Only the final query's logits :math:`s_{L\cdot}` of each layer are variables
    (the other rows stay at zero, so their attention is the uniform causal
    average, a running mean): the gradients returned are those of the model with
    every logit, in :math:`O(HL)` memory instead of :math:`O(HL^2)`, so that the
    paper's :math:`L = 2048` takes seconds."""
    import torch

    L, H = _check_int("L", L), _check_int("H", H)
    alpha = _check_alpha(alpha)
    g = as_torch_generator("seed", seed)
    h = torch.randn(L, dtype=torch.float64, generator=g).requires_grad_(True)
    final_query = torch.zeros(H, L, dtype=torch.float64, requires_grad=True)  # s_{Lk} of every layer
    counts = torch.arange(1, L + 1, dtype=torch.float64)
    x = h
    for layer in range(H):
        attended = torch.cat([(torch.cumsum(x, 0) / counts)[:-1], (torch.softmax(final_query[layer], 0) @ x)[None]])
        x = (1 - alpha) * x + alpha * attended
    gh, gs = torch.autograd.grad(x[-1], (h, final_query))
    return {"inputs": gh.numpy(), "rho": last_row(L, H, alpha),
            "logits_last": gs[-1].numpy(), "logits_first": gs[0].numpy()}


def logit_gradient_per_key(L: int, H: int, alpha: float, seed: int) -> dict:
    r"""The gradient that teaches the scalar model *where to attend*, per key, over every layer and
    every query (``eq-cesaro-eta-all``): at uniform attention (all logits zero),

    .. math::

        \frac{\partial y_L}{\partial s^{(\ell)}_{ik}} = (N^{H-\ell})_{L,i}\,\frac{\alpha}{i}
        \Bigl(x^{(\ell-1)}_k - \frac1i\sum_{m \le i} x^{(\ell-1)}_m\Bigr), \qquad k \le i,

    and ``"per_key"`` is its root sum of squares over :math:`\ell` and :math:`i \ge k`, ``(L,)``, by
    suffix sums in :math:`O(HL)` (the squares expand into three sums over :math:`i \ge k`); ``"rho"``
    is :math:`(N^H)_{L,j}`. The inputs :math:`x^{(0)}` are standard normal from ``seed``, as in
    :func:`scalar_model_gradients`. Tested against autograd with every logit a variable."""
    import torch

    L, H = _check_int("L", L), _check_int("H", H)
    alpha = float(_check_alpha(alpha))
    g = as_torch_generator("seed", seed)
    x = torch.randn(L, dtype=torch.float64, generator=g).numpy()
    idx = np.arange(1, L + 1, dtype=np.float64)
    inputs = []  # x^(l-1) for l = 1..H
    for _ in range(H):
        inputs.append(x)
        x = (1 - alpha) * x + alpha * np.cumsum(x) / idx
    rows = [np.zeros(L)]  # (N^m)_{L,.} for m = 0..H-1
    rows[0][-1] = 1.0
    for _ in range(H - 1):
        v = rows[-1]
        rows.append((1 - alpha) * v + alpha * np.cumsum((v / idx)[::-1])[::-1])
    total = np.zeros(L)
    for layer in range(1, H + 1):
        xin, down = inputs[layer - 1], rows[H - layer]
        c2 = (down * alpha / idx) ** 2
        mean = np.cumsum(xin) / idx
        suffix = lambda v: np.cumsum(v[::-1])[::-1]
        total += xin ** 2 * suffix(c2) - 2 * xin * suffix(c2 * mean) + suffix(c2 * mean ** 2)
    return {"per_key": np.sqrt(np.maximum(total, 0.0)), "rho": last_row(L, H, alpha)}
