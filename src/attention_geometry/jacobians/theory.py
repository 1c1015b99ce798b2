r"""The expected squared Jacobian of a random-init decoder, derived (value pathway).

The model (``eq-jac-linear-layer`` in the book): positions are rows,
:math:`h^{(l)} \in \mathbb R^{L\times d}`, and one layer is

.. math::  h^{(l+1)} = h^{(l)} + A^{(l)} h^{(l)} W^{(l)},

with fixed attention matrices :math:`A^{(l)}` (uniform causal attention:
:math:`A^{(l)} = M`, the Cesàro matrix) and independent random
:math:`W^{(l)} = W_V^{(l)} W_O^{(l)} \in \mathbb R^{d\times d}` with zero mean and
:math:`\mathbb E[W W^\top] = g_l I_d` (the layer's *gain*: for Gaussian
:math:`W_V, W_O` with entries of variance :math:`\sigma^2`,
:math:`g = (\sigma^2 d)^2`; with pre-normalisation the gain also carries the
inverse square of the residual stream's RMS).

Expanding the product of the ``H`` layer Jacobians :math:`\delta_{ik} I + A_{ik} W`
over the set :math:`S` of layers whose attention branch a path takes gives
:math:`J_j = \sum_S c_S(j)\, W_S` with :math:`W_S` the ordered product of the
:math:`W^{(l)}, l \in S`, and :math:`c_S(j) = (\prod_{l\in S} A^{(l)})_{L,j}`.
Two different sets differ in a layer whose :math:`W` appears once, with mean 0:
the cross terms vanish. Hence (``eq-jac-expected``)

.. math::

   \mathbb E\,\lVert J_j\rVert_F^2 = d \sum_{S} \Bigl(\prod_{l\in S} g_l\Bigr) c_S(j)^2
   \;\overset{A = M}{=}\; d \sum_{r=0}^{H} e_r(g_1,\dots,g_H)\,\bigl[(M^r)_{L,j}\bigr]^2,

with :math:`e_r` the elementary symmetric polynomials
(:math:`e_r = \binom{H}{r} g^r` for equal gains): a sum of **squared** path
weights over the number of attention jumps -- not
:math:`\gamma^H (N^H)_{L,j}`, which sums the path weights themselves, as if
every path carried the same scalar gain with the same sign.

Functions: :func:`elementary_symmetric`, :func:`layer_gains`,
:func:`log_expected_jacobian_sq` and :func:`expected_jacobian_sq` (the formula),
:func:`linear_decoder_blocks` (the exact Jacobian of one draw of the model) and
:func:`monte_carlo_jacobian_sq` (its Monte Carlo average, for the tests and the
book). :func:`mlp_gain`, :func:`mlp_cross_fraction` and :func:`predicted_profile_sq` carry the theorem over to a
pre-norm decoder whose normalisation depends on the position (``eq-jac-predicted``):
with the branch of block ``l`` reading position ``k`` through a norm of RMS
:math:`r_l(k)`, the attention path weights become :math:`c_S = (\prod_{l\in S} M D_l)_{L,j}`,
:math:`D_l = \operatorname{diag}(1/r_l)`, and an MLP branch (the same random matrices
at every position) is a jump that stays in place, :math:`D'_l`. The sum over the sets
of branches is a recursion on an ``L x L`` matrix, from the output down,
:math:`Y \leftarrow Y + g' D'_l Y D'_l`, then :math:`Y \leftarrow Y + g (M D_l)^\top Y (M D_l)`,
from :math:`Y = e_L e_L^\top`; :math:`\mathbb E\lVert J_j\rVert_F^2 = d\,Y_{jj}` up to the
final norm's factor. Shapes: ``L`` positions, ``d`` width, ``H`` layers, ``n`` draws.
"""

import math

import numpy as np
import numpy.typing as npt
import torch
from scipy.special import erf, logsumexp

from .._checks import check_choice, check_float, check_int, fail
from ..cesaro import cesaro_matrix, log_cesaro_rows

__all__ = [
    "elementary_symmetric",
    "layer_gains",
    "mlp_gain",
    "mlp_cross_fraction",
    "mlp_cross_fractions",
    "gelu_mlp_gain",
    "predicted_profile_sq",
    "pooled_mean_squares",
    "predicted_profile",
    "mean_layer_gains",
    "log_expected_jacobian_sq",
    "expected_jacobian_sq",
    "linear_decoder_blocks",
    "monte_carlo_jacobian_sq",
    "value_gain",
]


def value_gain(width: int, init_std: float) -> float:
    r"""The gain :math:`g = \mathbb E\lVert x W_V W_O\rVert^2 / \lVert x\rVert^2 = (\sigma^2 d)^2`
    of one attention branch with square Gaussian :math:`W_V, W_O` of entry
    standard deviation :math:`\sigma` = ``init_std`` (``eq-jac-gain``)."""
    width = check_int("width", width, low=1)
    init_std = check_float("init_std", init_std, low=0.0, low_open=True)
    return float((init_std**2 * width) ** 2)


def layer_gains(H: int, gain: float, growth: float = 0.0) -> np.ndarray:
    r"""``(H,)``: per-layer gains :math:`g_l = g / (1 + \zeta (l - 1))`, ``l = 1..H``
    (``growth`` = :math:`\zeta`, ``eq-jac-layer-gains``).

    :math:`\zeta = 0`: equal gains. A pre-norm decoder divides each branch by the
    residual stream's RMS; if the stream's squared RMS grows by the same amount
    every layer, :math:`r_{l-1}^2 = r_0^2 (1 + \zeta (l-1))`, the gains fall like
    this, with :math:`\zeta` that growth relative to the input's :math:`r_0^2`."""
    H = check_int("H", H, low=1)
    gain = check_float("gain", gain, low=0.0)
    growth = check_float("growth", growth, low=0.0)
    return gain / (1.0 + growth * np.arange(H, dtype=np.float64))


def elementary_symmetric(gains: np.ndarray) -> np.ndarray:
    r"""``(H + 1,)``: :math:`e_0, \dots, e_H` of ``gains: (H,)`` (the coefficients of
    :math:`\prod_l (1 + g_l t)`), by the product recursion; all non-negative for
    non-negative gains, so no cancellation."""
    g = np.asarray(gains, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise fail("gains", "an array with negative, non-finite or no entries",
                    "a non-empty array of finite gains >= 0")
    e = np.zeros(g.size + 1)
    e[0] = 1.0
    for i, gl in enumerate(g):
        e[1:i + 2] = e[1:i + 2] + gl * e[:i + 1]
    return e


def _gains(H, gains):
    if np.ndim(gains) == 0:
        return layer_gains(H, float(gains))
    g = np.asarray(gains, dtype=np.float64).ravel()
    if g.size != H:
        raise fail("gains", f"an array of {g.size} gains", f"one gain per layer, H = {H}")
    return g


def log_expected_jacobian_sq(L: int, H: int, gains: float | np.ndarray, d: int = 1) -> np.ndarray:
    r"""``(L,)``: :math:`\ln \mathbb E\lVert J_j\rVert_F^2` of ``eq-jac-expected`` for uniform
    causal attention: :math:`\ln d + \ln\sum_r e_r(g)\,(M^r)_{L,j}^2`, in log space
    (no underflow). ``gains``: one number (equal gains) or ``(H,)`` per-layer gains."""
    L, H = check_int("L", L), check_int("H", H)
    d = check_int("d", d)
    e = elementary_symmetric(_gains(H, gains))
    with np.errstate(divide="ignore"):
        log_e = np.log(e)[:, None]
    return math.log(d) + logsumexp(log_e + 2.0 * log_cesaro_rows(L, H), axis=0)


def expected_jacobian_sq(L: int, H: int, gains: float | np.ndarray, d: int = 1) -> np.ndarray:
    r"""``(L,)``: :math:`\mathbb E\lVert J_j\rVert_F^2` of ``eq-jac-expected`` (see
    :func:`log_expected_jacobian_sq`)."""
    return np.exp(log_expected_jacobian_sq(L, H, gains, d))


def linear_decoder_blocks(W: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    r"""``(n, L, d, d)``: the exact blocks :math:`\partial h^{(H)}_L / \partial h^{(0)}_j` of the
    linear model ``eq-jac-linear-layer`` for ``n`` draws at once.

    ``W: (n, H, d, d)`` (layer ``l`` is ``W[:, l]``), ``A: (H, L, L)`` or ``(L, L)``
    (the same attention in every layer). Backward recursion from the output,
    :math:`G_k \leftarrow G_k + W \sum_i A_{ik} G_i` (row-vector convention), so
    ``G[:, j]`` maps a change of :math:`h^{(0)}_j` to the change of :math:`h^{(H)}_L`.
    """
    if not isinstance(W, torch.Tensor) or W.ndim != 4 or W.shape[-1] != W.shape[-2]:
        raise fail("W", f"an object of shape {tuple(getattr(W, 'shape', ()))}", "a tensor (n, H, d, d)")
    n, H, d, _ = W.shape
    A = torch.as_tensor(A, dtype=W.dtype)
    if A.ndim == 2:
        A = A.expand(H, *A.shape)
    if A.ndim != 3 or A.shape[0] != H or A.shape[1] != A.shape[2]:
        raise fail("A", f"a tensor of shape {tuple(A.shape)}", f"(H, L, L) or (L, L) with H = {H}")
    L = A.shape[1]
    G = torch.zeros(n, L, d, d, dtype=W.dtype)
    G[:, -1] = torch.eye(d, dtype=W.dtype)
    for layer in reversed(range(H)):
        mixed = torch.einsum("ik,nidf->nkdf", A[layer], G)
        G = G + torch.einsum("nab,nkbf->nkaf", W[:, layer], mixed)
    return G


def monte_carlo_jacobian_sq(L: int, H: int, d: int, gain: float, n_draws: int, seed: int,
                            heads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    r"""Monte Carlo :math:`\mathbb E\lVert J_j\rVert_F^2` of the linear model with uniform
    causal attention, ``(mean: (L,), standard error: (L,))`` over ``n_draws`` draws.

    Each layer's :math:`W = \sum_{h} W_V^{h} W_O^{h}` over ``heads`` heads of width
    ``d / heads``, entries Gaussian with :math:`\sigma^2 = \sqrt{g}/d`, so that
    :math:`\mathbb E[WW^\top] = g I` for any number of heads (``eq-jac-gain``).
    Float64, ``torch.Generator`` seeded by ``seed``."""
    L, H, d = check_int("L", L), check_int("H", H), check_int("d", d)
    n_draws, heads = check_int("n_draws", n_draws, low=2), check_int("heads", heads)
    gain = check_float("gain", gain, low=0.0)
    if d % heads:
        raise fail("heads", heads, f"a divisor of d = {d}")
    gen = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    std = math.sqrt(math.sqrt(gain) / d)
    dh = d // heads
    V = std * torch.randn(n_draws, H, heads, d, dh, generator=gen, dtype=torch.float64)
    O = std * torch.randn(n_draws, H, heads, dh, d, generator=gen, dtype=torch.float64)
    W = torch.einsum("nlhab,nlhbc->nlac", V, O)
    M = torch.as_tensor(cesaro_matrix(L))
    sq = linear_decoder_blocks(W, M).pow(2).sum((-1, -2)).numpy()  # (n, L)
    return sq.mean(0), sq.std(0, ddof=1) / math.sqrt(n_draws)


def _silu_moments(variance: float) -> tuple[float, float]:
    """``(E silu(a)^2, E silu'(a)^2)`` for ``a ~ N(0, variance)``, by Gauss-Hermite quadrature."""
    z, w = np.polynomial.hermite_e.hermegauss(96)
    w = w / w.sum()
    a = math.sqrt(variance) * z
    sig = 1.0 / (1.0 + np.exp(-a))
    return float(w @ (a * sig) ** 2), float(w @ (sig * (1.0 + a * (1.0 - sig))) ** 2)


def mlp_gain(width: int, init_std: float, mlp_width: int) -> float:
    r"""The gain :math:`\mathbb E\lVert J u\rVert^2/\lVert u\rVert^2` of a SwiGLU branch
    :math:`x \mapsto W_{\mathrm{down}}(\operatorname{silu}(W_{\mathrm{gate}}x) \odot W_{\mathrm{up}}x)`
    at a normalised input (RMS 1) with Gaussian matrices of entry standard deviation
    :math:`\sigma` = ``init_std``, for a direction :math:`u \perp x`:
    :math:`\sigma^4 d\, d_{\mathrm{ff}}\,(\mathbb E\operatorname{silu}(a)^2 + s^2\,\mathbb E\operatorname{silu}'(a)^2)`,
    :math:`a \sim \mathcal N(0, s^2)`, :math:`s^2 = \sigma^2 d` (the pre-activations' variance)."""
    width = check_int("width", width, low=1)
    init_std = check_float("init_std", init_std, low=0.0, low_open=True)
    mlp_width = check_int("mlp_width", mlp_width, low=1)
    s2 = init_std**2 * width
    e_act, e_slope = _silu_moments(s2)
    return float(init_std**4 * width * mlp_width * (e_act + s2 * e_slope))


def mlp_cross_fraction(width: int, init_std: float, cosine: float = 0.0, activation: str = "swiglu") -> float:
    r"""The SwiGLU branch's gain between two positions whose normalised inputs have cosine
    ``cosine``, as a fraction of its gain at one position (:func:`mlp_gain`): the ``mlp_cross`` of
    :func:`predicted_profile_sq` for such a pair. To leading order in :math:`1/d`,

    .. math:: c(r) = \frac{\mathbb E[\operatorname{silu}(a)\operatorname{silu}(b)]
              + r s^2\,\mathbb E[\operatorname{silu}'(a)\operatorname{silu}'(b)]}
              {\mathbb E\operatorname{silu}(a)^2 + s^2\,\mathbb E\operatorname{silu}'(a)^2},

    :math:`(a, b)` Gaussian with variances :math:`s^2 = \sigma^2 d` and correlation :math:`r`: the
    gate and up pre-activations of the two positions are correlated as their inputs are, and the
    weights are shared. ``c(1) = 1``; at ``r = 0`` only the mean of the gate's output is shared,
    :math:`c(0) = (\mathbb E\operatorname{silu}(a))^2/(\dots)`, small for small :math:`s^2`.
    ``activation="gelu"``: GPT-2's MLP :math:`W_{\mathrm{out}}\operatorname{gelu}(W_{\mathrm{in}}x)`,
    :math:`c(r) = \mathbb E[\operatorname{gelu}'(a)\operatorname{gelu}'(b)]/\mathbb E\operatorname{gelu}'(a)^2`,
    :math:`(\tfrac12)^2/\mathbb E\operatorname{gelu}'(a)^2` at ``r = 0`` (:math:`\operatorname{gelu}'` has mean
    :math:`\tfrac12`), far above the SwiGLU's (Monte Carlo in the tests for both)."""
    width = check_int("width", width, low=1)
    init_std = check_float("init_std", init_std, low=0.0, low_open=True)
    r = check_float("cosine", cosine, low=-1.0, high=1.0)
    check_choice("activation", activation, ("swiglu", "gelu"))
    s2 = init_std**2 * width
    z, w = np.polynomial.hermite_e.hermegauss(64)
    w = w / w.sum()
    s = math.sqrt(s2)
    a = s * z[:, None] * np.ones((1, z.size))
    b = s * (r * z[:, None] + math.sqrt(max(1.0 - r * r, 0.0)) * z[None, :])
    ww = w[:, None] * w[None, :]

    def silu(x):
        return x / (1.0 + np.exp(-x))

    def slope(x):
        sig = 1.0 / (1.0 + np.exp(-x))
        return sig * (1.0 + x * (1.0 - sig))

    if activation == "gelu":
        def gelu_slope(x):
            return 0.5 * (1.0 + erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x**2) / math.sqrt(2 * math.pi)
        return float((ww * gelu_slope(a) * gelu_slope(b)).sum() / (w @ gelu_slope(s * z) ** 2))
    e_act, e_slope = _silu_moments(s2)
    cross = float((ww * silu(a) * silu(b)).sum() + r * s2 * (ww * slope(a) * slope(b)).sum())
    return cross / (e_act + s2 * e_slope)


def mlp_cross_fractions(width: int, init_std: float, cosines: npt.ArrayLike, activation: str = "swiglu") -> np.ndarray:
    """:func:`mlp_cross_fraction` at every entry of ``cosines`` (any shape, clipped to [-1, 1]),
    interpolated from 401 exact values on [-1, 1] (the function is smooth; the largest
    interpolation error is below 1e-4, a test)."""
    grid = np.linspace(-1.0, 1.0, 401)
    table = np.array([mlp_cross_fraction(width, init_std, float(r), activation) for r in grid])
    return np.interp(np.clip(np.asarray(cosines, dtype=np.float64), -1.0, 1.0), grid, table)


def gelu_mlp_gain(width: int, init_std: float, mlp_width: int, out_std: float | None = None) -> float:
    r"""The gain :math:`\mathbb E\lVert J u\rVert^2/\lVert u\rVert^2` of a GELU branch
    :math:`x \mapsto W_{\mathrm{out}}\operatorname{gelu}(W_{\mathrm{in}}x)` (GPT-2's MLP, biases zero
    at initialisation) at a normalised input (RMS 1), entries of :math:`W_{\mathrm{in}}` of standard
    deviation :math:`\sigma` = ``init_std`` and of :math:`W_{\mathrm{out}}` of ``out_std``
    (default :math:`\sigma`; GPT-2: :math:`\sigma/\sqrt{2H}`), for a direction :math:`u \perp x`:
    :math:`\sigma^2\sigma_{\mathrm{out}}^2\, d\, d_{\mathrm{ff}}\,\mathbb E\operatorname{gelu}'(a)^2`,
    :math:`a \sim \mathcal N(0, s^2)`, :math:`s^2 = \sigma^2 d`, with the exact GELU
    :math:`\operatorname{gelu}'(a) = \Phi(a) + a\varphi(a)` (GPT-2's tanh form differs by less than
    :math:`10^{-3}`)."""
    width = check_int("width", width, low=1)
    init_std = check_float("init_std", init_std, low=0.0, low_open=True)
    mlp_width = check_int("mlp_width", mlp_width, low=1)
    out_std = init_std if out_std is None else check_float("out_std", out_std, low=0.0, low_open=True)
    z, w = np.polynomial.hermite_e.hermegauss(96)
    a = math.sqrt(init_std**2 * width) * z
    cdf = 0.5 * (1.0 + erf(a / math.sqrt(2.0)))
    slope = cdf + a * np.exp(-0.5 * a**2) / math.sqrt(2.0 * math.pi)
    return float(init_std**2 * out_std**2 * width * mlp_width * (w / w.sum()) @ slope**2)


def predicted_profile_sq(attention_ms: np.ndarray, attention_gain: float, mlp_ms: np.ndarray | None = None,
                         mlp_gain: float = 0.0, mlp_cross: float | np.ndarray = 1.0) -> np.ndarray:
    r"""``(L,)``: :math:`\mathbb E\lVert J_j\rVert_F^2 / d` of a pre-norm decoder with uniform causal
    attention whose branches read position ``k`` of block ``l`` through a norm of mean square
    ``attention_ms[l, k]`` (and ``mlp_ms[l, k]``), ``(H, L)`` each: the theorem
    ``eq-jac-expected`` with the gains :math:`g/r_l(k)^2` (``eq-jac-predicted``; see the
    module). With ``attention_ms`` constant in ``k`` and no MLP it is
    :func:`expected_jacobian_sq` at the gains ``attention_gain / attention_ms[:, 0]``.

    ``mlp_cross``: the MLP's gain between two different positions as a fraction of its gain at
    one position, :math:`Y \leftarrow Y + g'D'(cY + (1-c)\operatorname{diag}Y)D'`. The MLP's
    weights are shared by the positions, but a nonlinear MLP's Jacobian at a position depends on
    that position's input: ``1`` (the default) is exact when the MLP's Jacobian is the same matrix
    at every position (a linear MLP, or positions with the same input), ``0`` when the positions'
    Jacobians are independent of each other; a real decoder lies between (tests: both ends against
    Monte Carlo). An array ``(H, L, L)`` gives the fraction of each block for each pair of positions
    (:func:`mlp_cross_fractions` of :func:`~.decoders.mlp_input_cosines`); its diagonal is 1."""
    ms = np.asarray(attention_ms, dtype=np.float64)
    if ms.ndim != 2 or ms.shape[1] < 1 or not np.all(np.isfinite(ms)) or np.any(ms <= 0):
        raise fail("attention_ms", f"an array of shape {ms.shape}", "(H, L) finite mean squares > 0")
    attention_gain = check_float("attention_gain", attention_gain, low=0.0)
    mlp_gain = check_float("mlp_gain", mlp_gain, low=0.0)
    if np.ndim(mlp_cross) == 0:
        mlp_cross = check_float("mlp_cross", mlp_cross, low=0.0, high=1.0)
    else:
        mlp_cross = np.asarray(mlp_cross, dtype=np.float64)
        if mlp_cross.shape != (ms.shape[0], ms.shape[1], ms.shape[1]) or not np.all(np.isfinite(mlp_cross)):
            raise fail("mlp_cross", f"an array of shape {mlp_cross.shape}",
                       f"a number in [0, 1] or finite fractions of shape (H, L, L) = {(ms.shape[0],) + ms.shape[1:] * 2}")
    H, L = ms.shape
    if mlp_ms is not None:
        mlp_ms = np.asarray(mlp_ms, dtype=np.float64)
        if mlp_ms.shape != ms.shape or not np.all(np.isfinite(mlp_ms)) or np.any(mlp_ms <= 0):
            raise fail("mlp_ms", f"an array of shape {mlp_ms.shape}", f"the shape of attention_ms, {ms.shape}, > 0")
    inv_i = 1.0 / np.arange(1, L + 1)
    Y = np.zeros((L, L))
    Y[-1, -1] = 1.0
    for l in range(H - 1, -1, -1):  # from the output down: the MLP comes after the attention in a block
        if mlp_ms is not None and mlp_gain > 0:
            D = 1.0 / np.sqrt(mlp_ms[l])
            if np.ndim(mlp_cross) == 0:
                shared = mlp_cross * Y + (1 - mlp_cross) * np.diag(np.diag(Y))
            else:  # per pair of positions, 1 on the diagonal
                shared = mlp_cross[l] * Y
                np.fill_diagonal(shared, np.diag(Y))
            Y = Y + mlp_gain * (D[:, None] * shared * D[None, :])
        D = 1.0 / np.sqrt(ms[l])
        Y = Y + attention_gain * (D[:, None] * _cesaro_sandwich(Y, inv_i) * D[None, :])
    return np.diag(Y).copy()


def pooled_mean_squares(per_draw: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """``(attention, mlp)``, each ``(H, L)``: the residual stream's mean squares where each block's
    norms read it (:func:`~.decoders.residual_mean_square`, one ``(H, n, L)`` pair per weight draw),
    averaged over the sequences of every draw."""
    if not per_draw:
        raise fail("per_draw", "an empty list", "one (attention, mlp) pair of (H, n, L) arrays per weight draw")
    return tuple(np.concatenate([np.asarray(part[i], dtype=np.float64) for part in per_draw], 1).mean(1)
                 for i in (0, 1))


def predicted_profile(per_draw: list[tuple[np.ndarray, np.ndarray]], attention_gain: float, mlp_gain: float,
                      mlp_cross: float | np.ndarray = 1.0) -> np.ndarray:
    r"""``(L,)``: the predicted profile :math:`\rho(j)` (up to scale), with no fit: the
    theorem at each block's gains :math:`g/r_l(k)^2` (``eq-jac-predicted``), the mean squares
    pooled over the draws' sequences (:func:`pooled_mean_squares`); ``mlp_cross`` as in
    :func:`predicted_profile_sq`."""
    attention_ms, mlp_ms = pooled_mean_squares(per_draw)
    return np.sqrt(predicted_profile_sq(attention_ms, attention_gain, mlp_ms, mlp_gain, mlp_cross=mlp_cross))


def mean_layer_gains(per_draw: list[tuple[np.ndarray, np.ndarray]], attention_gain: float,
                     mlp_gain: float) -> tuple[np.ndarray, np.ndarray]:
    """``(attention, mlp)``, each ``(H,)``: every block's gains :math:`g/r_l(k)^2` and
    :math:`g'/r_l(k)^2`, averaged over the positions ``k`` (mean squares pooled over the draws'
    sequences, :func:`pooled_mean_squares`)."""
    attention_ms, mlp_ms = pooled_mean_squares(per_draw)
    return (attention_gain / attention_ms).mean(1), (mlp_gain / mlp_ms).mean(1)


def _cesaro_sandwich(Y: np.ndarray, inv_i: np.ndarray) -> np.ndarray:
    """:math:`M^\\top Y M` for the Cesàro matrix ``M`` (``M[i, j] = 1/i`` for ``j <= i``, 1-based) in
    :math:`O(L^2)`: :math:`(YM)_{a,j} = \\sum_{i \\ge j} Y_{a,i}/i`, a reversed cumulative sum, twice."""
    YM = np.cumsum((Y * inv_i[None, :])[:, ::-1], axis=1)[:, ::-1]
    return np.cumsum((YM * inv_i[:, None])[::-1, :], axis=0)[::-1, :]
