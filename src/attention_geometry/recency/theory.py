r"""Closed forms for the recency chapter: the paper's, and the corrected ones.

All closed forms use the large-:math:`d` approximation of Kim et al. (2025): every
inner product of normalised tokens is replaced by its limit (law of large
numbers), *including inside the softmax*. For inputs of anisotropy :math:`\alpha`
(:mod:`attention_geometry.recency.simulation`) the first-layer scores become
:math:`S^{(1)}_{ii} = \sqrt d` and :math:`S^{(1)}_{ij} = \sqrt d\,\alpha`, so with

.. math::

    a = e^{\sqrt d},\quad b = e^{\sqrt d\,\alpha},\quad D_i = a + (i-1)\,b,
    \quad \rho = b/a = e^{-\sqrt d(1-\alpha)},\quad \delta_i = D_i/a = 1 + (i-1)\rho,

the first-layer attention is :math:`A_{ii} = a/D_i`, :math:`A_{ij} = b/D_i`
(:math:`j < i`). The residual adds :math:`\gamma x_i^{(0)}`; relative to the
normalised token :math:`y_i` (norm :math:`\sqrt d`) that is :math:`r\,y_i` with
:math:`r = \gamma/\sqrt{d(1-\alpha)}`, because :math:`\lVert x_i^{(0)}\rVert^2 \to 1/(1-\alpha)`
(:func:`residual_weight`). Then, for query :math:`i >` key :math:`j`,

.. math::

    S^{(2)}_{ij} = \sqrt d\,\frac{P_i}{\sqrt{N_i N_j}},\qquad
    P_i = (1-\alpha)(1+r)\frac{\rho}{\delta_i} + \alpha(1+r)^2,\qquad
    N_j = (1-\alpha)\,q_j + \alpha(1+r)^2,

with :math:`q_j = (1/\delta_j + r)^2 + (j-1)\rho^2/\delta_j^2`, and
:math:`S^{(2)}_{ii} = \sqrt d` (:func:`layer2_scores`). The paper's final
:math:`h(j)` (its Eq. 41) is :math:`1/\sqrt{d N_j}` evaluated with :math:`r = \gamma`
instead (:func:`paper_h`), i.e. a residual that adds the *normalised* token.
Written in :math:`\rho` and :math:`\delta` nothing overflows for any :math:`d` here
(:math:`e^{\sqrt d}` itself never appears), and differences between keys are
formed without cancellation (:func:`layer2_log_profile`).

Without normalisation (Proposition 1) the scores are :math:`\langle x_i, x_j\rangle/\sqrt d`
with :math:`\lVert x_i\rVert^2 \to 1`, so the first layer is nearly uniform, not
nearly diagonal (:func:`no_ln_layer2_scores`; the paper's version is
:func:`paper_no_ln_layer2_scores`).

**The missing factor.** The approximation replaces each first-layer weight
:math:`e^{S^{(1)}_{ij}}` by :math:`e^{E S^{(1)}_{ij}} = b` although
:math:`S^{(1)}_{ij} - \sqrt d\alpha` keeps a spread of order one for every :math:`d`. To
leading order the second layer's key dependence is *linear* in the
off-diagonal weights (first order in :math:`\rho` for :math:`\alpha > 0`; for
:math:`\alpha = 0` a product of two *independent* weights), so the exact mean is
the closed form with :math:`b` replaced by the mean weight
:math:`\tilde b = E\,e^{S^{(1)}_{ij}} = b\,m_1(d,\alpha)` (:func:`mean_first_layer_weight`,
``weights="mean"``). The ratio of the mean contrast to the paper's closed form
tends to :math:`e^{(1-\alpha^2)^2/2}` for :math:`\alpha > 0` and to :math:`e` for
:math:`\alpha = 0` (:func:`contrast_factor_limit`), not to 1.

:func:`mean_field_scores` runs the whole network on the limiting Gram matrix:
the same approximation at every layer (at layer 2 it equals the formulas above;
the tests check it).

Conventions: ``d`` the width, ``n`` the number of tokens; returned score
matrices are ``(n, n)`` float64 with query ``i`` along axis 0 and key ``j`` along
axis 1, NaN above the diagonal (future keys).
"""

import math
from collections.abc import Sequence

import numpy as np
import torch
from scipy import integrate, special

from .._checks import check_choice, fail
from ..stats import Estimate, ratio_estimate
from .simulation import RecencyStats, check_model, gram_layer

__all__ = [
    "WEIGHTS",
    "residual_weight",
    "cosine_log_density",
    "mean_first_layer_weight",
    "contrast_factor",
    "contrast_factor_limit",
    "contrast_orders",
    "factor_row",
    "rise_row",
    "layer2_scores",
    "layer2_log_profile",
    "layer2_contrast",
    "theorem1_scores",
    "paper_h",
    "corrected_h",
    "no_ln_layer2_scores",
    "paper_no_ln_layer2_scores",
    "limit_gram",
    "mean_field_scores",
    "layer1_score_sd",
    "key_difference_sd",
    "layer2_rp",
]


def _idx(n):
    return np.arange(1, n + 1, dtype=np.float64)


def _masked(S):
    S = np.array(S, dtype=np.float64)
    S[np.triu_indices(S.shape[0], 1)] = np.nan
    return S


def residual_weight(d: int, alpha: float, gamma: float, residual: str = "input") -> float:
    r"""Weight :math:`r` of the residual on :math:`y_i`: :math:`\gamma/\sqrt{d(1-\alpha)}` for the
    model's residual (``residual="input"``, adds :math:`\gamma x_i^{(0)}`), :math:`\gamma` for the
    paper's Eq. 33-41 (``residual="normalised"``, adds :math:`\gamma y_i`)."""
    d, _, alpha, gamma, *_ = check_model(d, 3, alpha, gamma)
    if residual == "input":
        return gamma / math.sqrt(d * (1.0 - alpha))
    if residual == "normalised":
        return gamma
    raise fail("residual", residual, "'input' or 'normalised'")


#: The first-layer weights a closed form uses: ``"limit"`` is the paper's
#: :math:`e^{E S^{(1)}_{ij}}`, ``"mean"`` is :math:`E e^{S^{(1)}_{ij}}`.
WEIGHTS = ("limit", "mean")


def cosine_log_density(r: np.ndarray, d: int, alpha: float, centred: bool = True) -> np.ndarray:
    r"""Log-density of the cosine :math:`S^{(1)}_{ij}/\sqrt d` of two input tokens (def. ``def-rec-mean-weight``).

    Per coordinate of an orthonormal basis (of :math:`\mathbf 1^\perp` for LayerNorm,
    ``centred=True``) the two tokens are :math:`\nu` independent pairs of jointly
    Gaussian numbers with correlation :math:`\alpha` (:math:`\nu = d - 1` centred,
    :math:`d` otherwise), so the cosine has the law of their uncentred sample
    correlation: Hotelling's form of Fisher's density,

    .. math::

        f(r) = \frac{(\nu-1)\Gamma(\nu)}{\sqrt{2\pi}\,\Gamma(\nu+\frac12)}(1-\alpha^2)^{\nu/2}
        (1-r^2)^{(\nu-3)/2}(1-\alpha r)^{\frac12-\nu}\,
        {}_2F_1\bigl(\tfrac12,\tfrac12;\nu+\tfrac12;\tfrac{1+\alpha r}2\bigr).

    ``r``: array in (-1, 1); returns an array of the same shape.
    """
    d, _, alpha, *_ = check_model(d, 3, alpha)
    nu = d - 1 if centred else d
    if nu < 3:
        raise fail("d", d, f"an integer >= {4 if centred else 3} (a density needs nu >= 3)", "is out of range")
    r = np.asarray(r, dtype=np.float64)
    const = (math.log(nu - 1) + special.gammaln(nu) - 0.5 * math.log(2 * math.pi)
             - special.gammaln(nu + 0.5) + nu / 2 * math.log1p(-alpha**2))
    return (const + (nu - 3) / 2 * np.log1p(-r**2) + (0.5 - nu) * np.log1p(-alpha * r)
            + np.log(special.hyp2f1(0.5, 0.5, nu + 0.5, (1 + alpha * r) / 2)))


def mean_first_layer_weight(d: int, alpha: float, centred: bool = True) -> float:
    r""":math:`m_1(d,\alpha) = E\,e^{S^{(1)}_{ij} - \sqrt d\alpha}`, exact at finite :math:`d` (def. ``def-rec-mean-weight``).

    The mean first-layer weight over the paper's :math:`e^{\sqrt d\alpha}`: the integral of
    :math:`e^{\sqrt d(r-\alpha)}` against :func:`cosine_log_density`, by adaptive
    quadrature in the variable :math:`t = \sqrt d(r-\alpha)`. Tends to
    :math:`e^{(1-\alpha^2)^2/2}` as :math:`d \to \infty` (the score's spread is
    :math:`1-\alpha^2`).
    """
    d, _, alpha, *_ = check_model(d, 3, alpha)
    sd = math.sqrt(d)
    lo, hi = max(-1.0, alpha - 60.0 / sd), min(1.0, alpha + 60.0 / sd)

    def integrand(r):
        return np.exp(sd * (r - alpha) + cosine_log_density(r, d, alpha, centred))

    value, _ = integrate.quad(integrand, lo, hi, points=[alpha], limit=400, epsabs=0.0, epsrel=1e-11)
    return float(value)


def _cosine_rule(d: int, exponent: float, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss--Jacobi nodes and normalised weights for the density proportional to
    ``(1 - r**2) ** exponent`` on (-1, 1)."""
    r, w = special.roots_jacobi(nodes, exponent, exponent)
    return r, w / w.sum()


def _series_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product of two power series truncated at the length of the last axis."""
    k = a.shape[-1]
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    for i in range(k):
        out[..., i:] += a[..., i:i + 1] * b[..., :k - i]
    return out


def _series_inv_sqrt(v: np.ndarray) -> np.ndarray:
    """:math:`(1 + v)^{-1/2}` as a truncated power series, for a series ``v`` without constant term."""
    out, term = np.zeros(v.shape), np.zeros(v.shape)
    term[..., 0] = 1.0
    for j in range(v.shape[-1]):
        out += math.comb(2 * j, j) * (-0.25) ** j * term  # binom(-1/2, j)
        term = _series_mul(term, v)
    return out


def _contrast_series(x, qa, ka, aa, kb, qb, bb, ab, order: int = 4) -> np.ndarray:
    r"""Taylor coefficients :math:`F_0..F_{\rm order}` in :math:`\sigma` of
    :math:`F = \cos(a, b) - \cos(a, y_k)`, :math:`a = y_q + \sigma A`, :math:`b = y_k + \sigma B`, for unit
    :math:`y_q, y_k` with :math:`y_q\cdot y_k = x`, from the inner products ``qa`` :math:`= y_q\cdot A`,
    ``ka`` :math:`= y_k\cdot A`, ``aa`` :math:`= A\cdot A`, ``kb``, ``qb``, ``bb``, ``ab`` (arrays that
    broadcast); the coefficients along a new last axis."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in (x, qa, ka, aa, kb, qb, bb, ab)))

    def series(*c):
        out = np.zeros(shape + (order + 1,))
        for i, ci in enumerate(c):
            out[..., i] = ci
        return out

    inv_a = _series_inv_sqrt(series(0.0, 2 * qa, aa))
    inv_b = _series_inv_sqrt(series(0.0, 2 * kb, bb))
    return (_series_mul(_series_mul(series(x, qb + ka, ab), inv_a), inv_b)
            - _series_mul(series(x, ka), inv_a))


def _psd_root(c: np.ndarray) -> np.ndarray:
    """A square root ``R`` with ``R @ R.T == c`` of a stack of symmetric positive semi-definite matrices."""
    w, v = np.linalg.eigh(c)
    return v * np.sqrt(np.clip(w, 0.0, None))[..., None, :]


def _chi2_rule(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-point Gauss rule of :math:`\\chi^2_k` (exact for cubics): the nodes, twice those of the
    generalised Laguerre rule of parameter :math:`k/2 - 1`, and the weights from the mean :math:`k`
    (the Laguerre weights, of size :math:`\\Gamma(k/2)`, overflow from :math:`k \\approx 340`)."""
    x = 2 * special.roots_genlaguerre(2, k / 2 - 1)[0]
    w_1 = (x[1] - k) / (x[1] - x[0])
    return x, np.array([w_1, 1.0 - w_1])


def _fourth_order_parts(d: int, n_1: float, nodes: int) -> tuple[np.ndarray, float]:
    r"""The single-intermediate means :math:`\varphi_0..\varphi_4` and the pair term :math:`\psi_4` of
    :func:`contrast_orders` (its docstring defines them), by ``nodes`` points per axis."""
    sd = math.sqrt(d)
    x, wx = _cosine_rule(d, (d - 4) / 2, nodes)
    zeta, wz = _cosine_rule(d, (d - 5) / 2, nodes)
    # one intermediate m: the triangle q, k, m with x = xi_qk, p = xi_qm, s = xi_km
    X, P, Z = np.meshgrid(x, x, zeta, indexing="ij")
    S = X * P + np.sqrt((1 - X**2) * (1 - P**2)) * Z
    e0, ea, eb = np.exp(sd * (X - 1.0)), np.exp(sd * (P - 1.0)), np.exp(sd * (S - 1.0))
    # A = e0 y_k + ea y_m - n_1 y_q,  B = eb y_m - n_1 y_k
    f = _contrast_series(
        X, e0 * X + ea * P - n_1, e0 + ea * S - n_1 * X,
        e0**2 + ea**2 + n_1**2 + 2 * e0 * ea * S - 2 * n_1 * (e0 * X + ea * P),
        eb * S - n_1, eb * P - n_1 * X, eb**2 + n_1**2 - 2 * n_1 * eb * S,
        e0 * eb * S - e0 * n_1 + ea * eb - n_1 * (ea * S + eb * P - n_1 * X))
    phi = np.einsum("i,j,k,ijkl->l", wx, wx, wz, f)
    # two intermediates each twice: the Gaussian of the centred (A, B)'s conditional covariance given
    # x; coordinates y_q = (1, 0), y_k = (x, c) in the plane (c = sqrt(1 - x^2)), y_m = (p, h) + w off it
    P2, Z2 = np.meshgrid(x, zeta, indexing="ij")
    w2 = np.outer(wx, wz)
    h, c = np.sqrt(1 - P2**2) * Z2, np.sqrt(1 - x**2)[:, None, None]
    ea2 = np.exp(sd * (P2 - 1.0))
    eb2 = np.exp(sd * (x[:, None, None] * P2 + c * h - 1.0))
    ea2 = np.broadcast_to(ea2, eb2.shape)
    v = np.stack([ea2 * P2 - n_1, ea2 * h, eb2 * P2 - n_1 * x[:, None, None], eb2 * h - n_1 * c], -1)
    root_in = _psd_root(np.einsum("ij,xija,xijb->xab", w2, v, v))  # (x, 4, 4)
    w_m = np.stack([ea2, eb2], -1) * ((1 - P2**2) * (1 - Z2**2) / (d - 3))[..., None] ** 0.5
    root_off = _psd_root(np.einsum("ij,xija,xijb->xab", w2, w_m, w_m))  # (x, 2, 2): lambda_XY
    # a rule exact for quartics: 3-point Gauss-Hermite per in-plane coordinate; off the plane the
    # Gram of (A, B) from h_1 = sqrt(c_1) e_1, h_2 = g e_1 + sqrt(c_2) e_2, c_1 ~ chi2(d-3), c_2 ~ chi2(d-4)
    g, wg = special.roots_hermitenorm(3)
    wg = wg / wg.sum()
    grid = np.stack(np.meshgrid(g, g, g, g, indexing="ij"), -1).reshape(-1, 4)
    w_grid = np.einsum("a,b,c,d->abcd", wg, wg, wg, wg).reshape(-1)
    inner = np.einsum("xab,pb->xpa", root_in, grid)  # (x, 81, 4): A's and B's plane coordinates
    A_in, B_in = inner[..., :2], inner[..., 2:]
    yk = np.stack([x, np.sqrt(1 - x**2)], -1)[:, None, :]
    psi_4 = 0.0
    for c_1, v_1 in zip(*_chi2_rule(d - 3)):
        for gg, v_g in zip(g, wg):
            for c_2, v_2 in zip(*_chi2_rule(d - 4)):
                basis = np.array([[math.sqrt(c_1), 0.0], [gg, math.sqrt(c_2)]])  # h_1, h_2 in (e_1, e_2)
                A_off, B_off = np.einsum("xab,bc->axc", root_off, basis)  # (x, 2) each
                dot = lambda u, t: np.sum(u * t, -1)[:, None]
                f4 = _contrast_series(
                    x[:, None], A_in[..., 0], np.sum(A_in * yk, -1), np.sum(A_in**2, -1) + dot(A_off, A_off),
                    np.sum(B_in * yk, -1), B_in[..., 0], np.sum(B_in**2, -1) + dot(B_off, B_off),
                    np.sum(A_in * B_in, -1) + dot(A_off, B_off))[..., 4]
                psi_4 += v_1 * v_g * v_2 * float(wx @ f4 @ w_grid)
    return phi, psi_4


def contrast_orders(d: int, n: int, nodes: int = 90) -> dict[str, float]:
    r"""The mean contrast :math:`\Delta = E[S^{(2)}_{L,L-1} - S^{(2)}_{L,1}]` of isotropic inputs
    (:math:`c = \omega = 0`) order by order in the off-diagonal first-layer weights, exact at finite
    :math:`d` (``prop-rec-orders``, eqs. ``eq-rec-orders`` and ``eq-rec-orders-4``).

    With LayerNorm's centring the tokens are independent and uniform on a sphere of :math:`\nu = d - 1`
    dimensions, so a first-layer cosine :math:`\xi` has density proportional to
    :math:`(1-\xi^2)^{(d-4)/2}`, and the off-diagonal weight over the diagonal one is
    :math:`\varepsilon = e^{\sqrt d(\xi - 1)}`. Scaling every :math:`\varepsilon` by :math:`\tau`,
    the contrast's :math:`\tau^1` term has mean zero and

    .. math::

        \Delta_2 &= \sqrt d\,(L-2)\,\tilde M^2, \qquad \tilde M = E[\varepsilon(1-\xi^2)],\\
        \Delta_3 &= \sqrt d\,\bigl\{(L-2)\,[-\tfrac12\tilde M K + C] - 2(L-2)(L-3)\,n_1\tilde M^2\bigr\},\\
        \Delta_4 &= \sqrt d\,\bigl\{(L-2)\,\varphi_4 + (L-2)(L-3)\,\psi_4 - 3(L-2)^2\,n_1\varphi_3
                    + 3(L-2)^3\,n_1^2\tilde M^2\bigr\},\qquad
                    \varphi_3 = C - \tfrac12\tilde M K + 2n_1\tilde M^2,

    with :math:`n_1 = E[\varepsilon\xi]`, :math:`K = E[\varepsilon^2(1-\xi^2)(1+6\xi)]` and
    :math:`C = E[\varepsilon_{qk}\varepsilon_{qp}\varepsilon_{pk}\{(3xz - y)(x - zy) - z(1-y^2)\}]`
    over a triangle of tokens (:math:`x = \xi_{qk}`, :math:`y = \xi_{pk}`, :math:`z = \xi_{qp}`), where
    :math:`z = xy + \sqrt{(1-x^2)(1-y^2)}\,\zeta` and :math:`\zeta` has density proportional to
    :math:`(1-\zeta^2)^{(d-5)/2}`, independent of :math:`x` and :math:`y`.

    *The fourth order.* Write the query :math:`q = L`, the key :math:`k = L-1` (exchangeable with
    key 1, which has no earlier tokens) and the :math:`L-2` intermediate tokens :math:`m`. Centre each
    intermediate's contributions, :math:`\delta A_m = \varepsilon_{qm}y_m - n_1 y_q` and
    :math:`\delta B_m = \varepsilon_{km}y_m - n_1 y_k` (:math:`E[\delta A_m \mid y_q, y_k] =
    E[\delta B_m \mid y_q, y_k] = 0`). Cosines ignore the factor :math:`1 + \tau(L-2)n_1` this
    takes out of :math:`u_q` and :math:`u_k`, so the contrast is :math:`F(\sigma) = \cos(a, b) -
    \cos(a, y_k)`, :math:`a = y_q + \sigma(\varepsilon_{qk}y_k + \sum_m\delta A_m)`,
    :math:`b = y_k + \sigma\sum_m\delta B_m`, at :math:`\sigma = \tau/(1+\tau(L-2)n_1)`. In the
    coefficient :math:`F_j` of :math:`\sigma^j` a term in which an intermediate appears once has mean
    zero, so :math:`E F_j = (L-2)\varphi_j` for :math:`j \le 3` and
    :math:`E F_4 = (L-2)\varphi_4 + (L-2)(L-3)\psi_4`: :math:`\varphi_j = E F_j` with one
    intermediate (graph: the triangle :math:`q, k, m`; :math:`\varphi_2 = \tilde M^2`), and
    :math:`\psi_4` the mean, per ordered pair :math:`m \ne m'`, of the terms in which both appear
    twice (graphs on :math:`q, k, m, m'`, the cosine :math:`\xi_{mm'}` included). Given :math:`y_q, y_k` the two
    intermediates are independent, so by Wick's theorem :math:`\psi_4` is :math:`E F_4` with
    :math:`\varepsilon_{qk} = 0` and :math:`(\sum\delta A, \sum\delta B)` replaced by a Gaussian
    pair with the conditional covariance of :math:`(\delta A_m, \delta B_m)`: in the plane of
    :math:`y_q, y_k` (basis :math:`y_q`, :math:`(y_k - xy_q)/\sqrt{1-x^2}`, where
    :math:`y_m = (p, \sqrt{1-p^2}\,\zeta)` with :math:`p = \xi_{qm}`) the :math:`4\times 4` second
    moments of the centred coordinates, and :math:`\lambda_{XY}` times the identity off it,
    :math:`\lambda_{XY} = E[XY(1-p^2)(1-\zeta^2) \mid x]/(d-3)` for
    :math:`X, Y \in \{\varepsilon_{qm}, \varepsilon_{km}\}`. Substituting
    :math:`\sigma = \tau - (L-2)n_1\tau^2 + (L-2)^2n_1^2\tau^3 - \dots` into
    :math:`\sum_j \sigma^j E F_j` gives :math:`\Delta_3` and :math:`\Delta_4`.

    Quadrature: the one-dimensional moments are Gauss--Jacobi sums of ``4 * nodes`` nodes, :math:`C`
    a product rule of ``nodes`` per axis; :math:`\varphi_4` the same product rule on the triangle with
    ``nodes // 2`` per axis (the Taylor coefficients of :math:`F` by power-series arithmetic at each
    node), :math:`\psi_4` Gauss--Jacobi in :math:`x` and :math:`(p, \zeta)` (``nodes // 2``) and a
    rule exact for the quartic in the Gaussian (three Gauss--Hermite points per plane coordinate; off
    the plane the Gram matrix from :math:`\chi^2_{d-3}`, :math:`N(0,1)`, :math:`\chi^2_{d-4}` with
    two, three and two points). Returns ``{"second": Δ2, "third": Δ3, "fourth": Δ4,
    "through_third": Δ2 + Δ3, "total": Δ2 + Δ3 + Δ4}``; each order is at most about
    :math:`E\sum_m \varepsilon_{Lm}` times the one before (at :math:`d = 16`, :math:`L = 10`, where that
    is 0.28: third over second -0.23, fourth over third -0.16, and Monte Carlo's remainder -0.5 % of the
    contrast, -0.11 of the fourth). ``6 <= d <= 512``, ``n >= 3``."""
    d, n, *_ = check_model(d, n, 0.0)
    if not 6 <= d <= 512:  # the triangle's density needs d - 5 > 0; the Jacobi rules fail from d of about 800
        raise fail("d", d, "an integer from 6 to 512 (the contrast there is below 1e-17)", "is out of range")
    sd = math.sqrt(d)
    r, w = _cosine_rule(d, (d - 4) / 2, 4 * nodes)
    eps = np.exp(sd * (r - 1.0))
    m_tilde = float(w @ (eps * (1 - r**2)))
    n_1 = float(w @ (eps * r))
    k_2 = float(w @ (eps**2 * (1 - r**2) * (1 + 6 * r)))
    x, wx = _cosine_rule(d, (d - 4) / 2, nodes)
    zeta, wz = _cosine_rule(d, (d - 5) / 2, nodes)
    X, Y, Z = np.meshgrid(x, x, zeta, indexing="ij")
    z = X * Y + np.sqrt((1 - X**2) * (1 - Y**2)) * Z
    f = np.exp(sd * (X + Y + z - 3.0)) * ((3 * X * z - Y) * (X - z * Y) - z * (1 - Y**2))
    cycle = float(np.einsum("i,j,k,ijk->", wx, wx, wz, f))
    second = sd * (n - 2) * m_tilde**2
    third = sd * ((n - 2) * (-0.5 * m_tilde * k_2 + cycle) - 2 * (n - 2) * (n - 3) * n_1 * m_tilde**2)
    phi, psi_4 = _fourth_order_parts(d, n_1, max(nodes // 2, 8))
    phi_3 = cycle - 0.5 * m_tilde * k_2 + 2 * n_1 * m_tilde**2
    m = n - 2
    fourth = float(sd * (m * phi[4] + m * (m - 1) * psi_4 - 3 * m**2 * n_1 * phi_3
                         + 3 * m**3 * n_1**2 * m_tilde**2))
    return {"second": second, "third": third, "fourth": fourth, "through_third": second + third,
            "total": second + third + fourth}


def contrast_factor(d: int, n: int, alpha: float = 0.0, gamma: float = 0.0) -> float:
    r"""The adjusted closed-form contrast over the paper's: ``layer2_contrast(weights="mean") /
    layer2_contrast(weights="limit")``, at finite :math:`d` (tends to :func:`contrast_factor_limit`)."""
    return layer2_contrast(d, n, alpha, gamma, weights="mean") / layer2_contrast(d, n, alpha, gamma)


def contrast_factor_limit(alpha: float) -> float:
    r"""The limit of (mean second-layer contrast) / (paper's closed form) as :math:`d \to \infty`
    (eq. ``eq-rec-factor-limit``): :math:`e^{(1-\alpha^2)^2/2}` for :math:`0 < \alpha < 1` (first
    order in the off-diagonal weight) and :math:`e` for :math:`\alpha = 0` (a product of two
    independent weights, each of mean :math:`e^{1/2}`)."""
    _, _, alpha, *_ = check_model(2, 3, alpha)
    return math.e if alpha == 0 else math.exp((1.0 - alpha**2) ** 2 / 2.0)


def _rho(d, alpha, weights):
    """rho = b/a with b = e^{sqrt(d) alpha} (``"limit"``) or the mean weight E e^{S^(1)} (``"mean"``)."""
    check_choice("weights", weights, WEIGHTS)
    rho = math.exp(-math.sqrt(d) * (1.0 - alpha))
    return rho * mean_first_layer_weight(d, alpha) if weights == "mean" else rho


def _parts(d, n, alpha, r, weights="limit"):
    """rho, delta_i (n,), P_i (n,), N_j (n,) of the module docstring."""
    rho = _rho(d, alpha, weights)
    t = _idx(n) - 1.0  # i - 1
    delta = 1.0 + t * rho
    P = (1.0 - alpha) * (1.0 + r) * rho / delta + alpha * (1.0 + r) ** 2
    q = (1.0 / delta + r) ** 2 + t * rho**2 / delta**2
    N = (1.0 - alpha) * q + alpha * (1.0 + r) ** 2
    return rho, delta, P, N


def layer2_scores(d: int, n: int, alpha: float = 0.0, gamma: float = 0.0, residual: str = "input",
                  weights: str = "limit") -> np.ndarray:
    r"""``(n, n)``: the large-:math:`d` closed form of :math:`S^{(2)}` with LayerNorm (eq. ``eq-rec-corrected``).

    ``residual="input"`` is this book's corrected form (the residual adds the
    pre-norm input); ``residual="normalised"`` is what the paper's Eq. 41 implies.
    At :math:`\alpha = \gamma = 0` both equal Theorem 1 (:func:`theorem1_scores`).
    ``weights="limit"``: the first-layer weights :math:`e^{E S^{(1)}}` of the paper's
    approximation; ``weights="mean"``: their means :math:`E e^{S^{(1)}}` (the adjusted
    closed form, eq. ``eq-rec-adjusted``).
    """
    d, n, alpha, gamma, *_ = check_model(d, n, alpha, gamma)
    r = residual_weight(d, alpha, gamma, residual)
    _, _, P, N = _parts(d, n, alpha, r, weights)
    S = math.sqrt(d) * P[:, None] / np.sqrt(N[:, None] * N[None, :])
    np.fill_diagonal(S, math.sqrt(d))
    return _masked(S)


def layer2_log_profile(d: int, n: int, alpha: float = 0.0, gamma: float = 0.0, residual: str = "input",
                       weights: str = "limit") -> np.ndarray:
    r"""``(n,)``: :math:`\log S^{(2)}_{ij} - \log S^{(2)}_{i1} = \log h(j) - \log h(1)` for keys
    :math:`j = 1..n` (any query :math:`i > j`), computed without cancellation:
    :math:`N_j - N_1 = -(1-\alpha)(j-1)\rho\,[1/\delta_j + 1 + 2r - \rho/\delta_j]/\delta_j`."""
    d, n, alpha, gamma, *_ = check_model(d, n, alpha, gamma)
    r = residual_weight(d, alpha, gamma, residual)
    rho, delta, _, N = _parts(d, n, alpha, r, weights)
    t = _idx(n) - 1.0
    dN = -(1.0 - alpha) * t * rho / delta * (1.0 / delta + 1.0 + 2.0 * r - rho / delta)
    return -0.5 * np.log1p(dN / N[0])


def layer2_contrast(d: int, n: int, alpha: float = 0.0, gamma: float = 0.0, residual: str = "input",
                    weights: str = "limit") -> float:
    r"""Recency contrast of the last query, :math:`S^{(2)}_{n,n-1} - S^{(2)}_{n,1}`, without cancellation
    (``weights`` as in :func:`layer2_scores`)."""
    S = layer2_scores(d, n, alpha, gamma, residual, weights)
    return float(S[n - 1, 0] * np.expm1(layer2_log_profile(d, n, alpha, gamma, residual, weights)[n - 2]))


def theorem1_scores(d: int, n: int) -> np.ndarray:
    r"""``(n, n)``: the paper's Eq. 5 (eq. ``eq-rec-thm1``), :math:`S^{(2)}_{ij} = \sqrt d(a+j-1)/\sqrt{(a^2+i-1)(a^2+j-1)}`,
    :math:`S_{ii} = \sqrt d` (evaluated in the stable form :math:`a \to` ratios)."""
    d, n, *_ = check_model(d, n, 0.0)
    e = math.exp(-math.sqrt(d))  # 1/a
    i = _idx(n)
    top = 1.0 + (i[None, :] - 1.0) * e  # (a + j - 1)/a
    bottom = np.sqrt((1.0 + (i[:, None] - 1.0) * e * e) * (1.0 + (i[None, :] - 1.0) * e * e))
    S = math.sqrt(d) * e * top / bottom
    np.fill_diagonal(S, math.sqrt(d))
    return _masked(S)


def paper_h(j: np.ndarray, d: int, alpha: float, gamma: float) -> np.ndarray:
    r"""The paper's Eq. 41 as printed, for keys ``j`` (array, 1-based):

    :math:`h(j) = D_j/\bigl(\sqrt d\sqrt{D_j^2(\gamma^2 + 2\alpha\gamma + \alpha) + D_j(1-\alpha)(2\gamma a + b) + (1-\alpha)(a^2 - ab)}\bigr)`,

    divided through by :math:`a` so that it is finite for every ``d``."""
    d, _, alpha, gamma, *_ = check_model(d, 3, alpha, gamma)
    rho = math.exp(-math.sqrt(d) * (1.0 - alpha))
    delta = 1.0 + (np.asarray(j, dtype=np.float64) - 1.0) * rho
    inner = (delta**2 * (gamma**2 + 2 * alpha * gamma + alpha)
             + delta * (1 - alpha) * (2 * gamma + rho) + (1 - alpha) * (1 - rho))
    return delta / (math.sqrt(d) * np.sqrt(inner))


def corrected_h(j: np.ndarray, d: int, alpha: float, gamma: float) -> np.ndarray:
    r""":math:`h(j) = 1/\lVert x^{(1)}_j\rVert` in the paper's normalisation, :math:`1/\sqrt{d N_j}`, with the
    residual the model adds (:math:`r = \gamma/\sqrt{d(1-\alpha)}`); keys ``j`` 1-based."""
    d, _, alpha, gamma, *_ = check_model(d, 3, alpha, gamma)
    j = np.asarray(j, dtype=np.float64)
    r = residual_weight(d, alpha, gamma, "input")
    rho = math.exp(-math.sqrt(d) * (1.0 - alpha))
    delta = 1.0 + (j - 1.0) * rho
    q = (1.0 / delta + r) ** 2 + (j - 1.0) * rho**2 / delta**2
    return 1.0 / np.sqrt(d * ((1.0 - alpha) * q + alpha * (1.0 + r) ** 2))


def no_ln_layer2_scores(d: int, n: int) -> np.ndarray:
    r"""``(n, n)``: Proposition 1 corrected (eq. ``eq-rec-noln``; :math:`\alpha = \gamma = 0`, no normalisation).

    :math:`S^{(1)}_{ii} \to 1/\sqrt d`, :math:`S^{(1)}_{ij} \to 0`; with :math:`a' = e^{1/\sqrt d}`,
    :math:`D'_i = a' + i - 1`: :math:`S^{(2)}_{ij} = 1/(\sqrt d\,D'_i)` for :math:`j < i` (the same for
    every key: no recency) and :math:`S^{(2)}_{ii} = (a'^2 + i - 1)/(\sqrt d\,D_i'^2)`."""
    d, n, *_ = check_model(d, n, 0.0)
    ap = math.exp(1.0 / math.sqrt(d))
    i = _idx(n)
    D = ap + i - 1.0
    S = np.repeat((1.0 / (math.sqrt(d) * D))[:, None], n, axis=1)
    np.fill_diagonal(S, (ap**2 + i - 1.0) / (math.sqrt(d) * D**2))
    return _masked(S)


def paper_no_ln_layer2_scores(d: int, n: int) -> np.ndarray:
    r"""``(n,)``: the paper's Eq. 19, :math:`S^{(2)}_{ij} = 1/(e^{\sqrt d} + i - 1)` for each query ``i``."""
    d, n, *_ = check_model(d, n, 0.0)
    e = math.exp(-math.sqrt(d))
    return e / (1.0 + (_idx(n) - 1.0) * e)


def limit_gram(n: int, alpha: float) -> np.ndarray:
    r"""``(n, n)``: the large-:math:`d` limit of the inputs' Gram matrix, :math:`\langle x_i, x_j\rangle \to
    \delta_{ij} + \alpha/(1-\alpha)` (the centring of LayerNorm changes it by :math:`O(1/d)`)."""
    _, n, alpha, *_ = check_model(2, n, alpha)
    return np.eye(n) + alpha / (1.0 - alpha)


def mean_field_scores(d: int, n: int, alpha: float = 0.0, gamma: float = 0.0, norm: str = "layernorm",
                      n_layers: int = 2) -> np.ndarray:
    r"""``(layer, n, n)``: every layer's scores under the large-:math:`d` approximation, by running
    :func:`~attention_geometry.recency.simulation.gram_layer` in float64 on :func:`limit_gram`."""
    d, n, alpha, gamma, norm, n_layers = check_model(d, n, alpha, gamma, norm, n_layers)
    K = torch.as_tensor(limit_gram(n, alpha), dtype=torch.float64)[None]
    out = []
    for _ in range(n_layers):
        K, S, _ = gram_layer(K, d=d, norm=norm, gamma=gamma)
        out.append(_masked(S[0].numpy()))
    return np.stack(out)


def layer1_score_sd(alpha: float) -> float:
    r"""Standard deviation of an off-diagonal first-layer score :math:`S^{(1)}_{ij}` to leading order in
    :math:`1/d`: :math:`1 - \alpha^2` (delta method on the cosine of two inputs). The closed forms replace
    :math:`e^{S^{(1)}_{ij}}` by :math:`e^{\sqrt d\alpha}`; its mean is larger by about
    :math:`e^{(1-\alpha^2)^2/2}`."""
    _, _, alpha, *_ = check_model(2, 3, alpha)
    return 1.0 - alpha**2


def factor_row(stats: RecencyStats, layer: int = 2, controls: str | Sequence[str] | None = "all") -> dict:
    r"""One width of the missing-factor study, from a simulation ``stats``
    (:class:`~attention_geometry.recency.simulation.RecencyStats`, LayerNorm): the last query's
    contrast at ``layer`` (control-variate :class:`~attention_geometry.stats.Estimate`),
    the paper's and the adjusted closed forms, Monte Carlo over each, and the limit."""
    est = stats.contrast_estimate(layer, controls)
    paper = layer2_contrast(stats.d, stats.n, stats.alpha, stats.gamma)
    adjusted = layer2_contrast(stats.d, stats.n, stats.alpha, stats.gamma, weights="mean")
    return {"d": stats.d, "alpha": stats.alpha, "gamma": stats.gamma, "measured": est, "paper": paper,
            "adjusted": adjusted, "over_paper": Estimate(est.value / paper, est.se / abs(paper)),
            "over_adjusted": Estimate(est.value / adjusted, est.se / abs(adjusted)),
            "adjusted_over_paper": adjusted / paper, "limit": contrast_factor_limit(stats.alpha)}


def rise_row(stats: RecencyStats) -> dict:
    r"""The rise :math:`h(n-1)/h(1) - 1 = (S^{(2)}_{n,n-1} - S^{(2)}_{n,1})/S^{(2)}_{n,1}` of the last query:
    Monte Carlo (control-variate contrast over the mean level, delta method treating the two
    as independent) against this book's, the paper's (Eq. 41) and the adjusted closed forms,
    with each one's relative error ``closed / measured - 1`` (an Estimate)."""
    d, n, a, g = stats.d, stats.n, stats.alpha, stats.gamma
    level = Estimate(float(stats.scores[1, n - 1, 0]), float(stats.scores_se[1, n - 1, 0]))
    measured = ratio_estimate(stats.contrast_estimate(2), level)
    out = {"alpha": a, "gamma": g, "measured": measured}
    for name, kw in (("ours", {}), ("paper", {"residual": "normalised"}), ("adjusted", {"weights": "mean"})):
        rise = float(np.expm1(layer2_log_profile(d, n, a, g, **kw)[n - 2]))
        out[name] = rise
        out[f"{name}_error"] = ratio_estimate(Estimate(rise, 0.0), measured)
        out[f"{name}_error"] = Estimate(out[f"{name}_error"].value - 1.0, out[f"{name}_error"].se)
    return out


def key_difference_sd(alpha: float) -> float:
    r"""Large-:math:`d` standard deviation of :math:`S^{(1)}_{ik} - S^{(1)}_{ij}` (one query, two
    keys): :math:`(1-\alpha)\sqrt{2 + 2\alpha - \alpha^2}`. The first-order expansion of the cosine
    (``sec-rec-notes-layer1``) leaves, once the query's own terms cancel,
    :math:`(1-\alpha)(\langle z_i, z_k\rangle - \langle z_i, z_j\rangle) + s(1-\alpha)^2(\langle z_k, v\rangle
    - \langle z_j, v\rangle) - \tfrac{\alpha(1-\alpha)}2(\lVert z_k\rVert^2 - \lVert z_j\rVert^2)`,
    of variance :math:`(1-\alpha)^2(2 + 2\alpha - \alpha^2)/d`."""
    _, _, alpha, *_ = check_model(4, 3, alpha, 0.0)
    return (1.0 - alpha) * math.sqrt(2.0 + 2.0 * alpha - alpha**2)


def layer2_rp(d: int, n: int, alpha: float = 0.0, gamma: float = 0.0, residual: str = "input",
              weights: str = "mean") -> float:
    r"""Predicted :math:`\mathrm{RP}^{(2)}`: the mean over triples :math:`i > k > j` of
    :math:`\Phi\bigl((\bar S^{(2)}_{ik} - \bar S^{(2)}_{ij})/\sigma\bigr)`, with the mean scores of
    :func:`layer2_scores` (``weights="mean"``: the adjusted form) and :math:`\sigma` =
    :func:`key_difference_sd`. When the first layer is nearly diagonal (:math:`\rho \ll 1`) the second
    layer's scores are the first's plus a shift, so a key pair's difference is its mean plus the
    first layer's Gaussian noise; the prediction fails where :math:`\rho` is not small."""
    from scipy.stats import norm

    S = layer2_scores(d, n, alpha, gamma, residual, weights)
    i, k, j = (np.array(t) for t in zip(*[(i, k, j) for i in range(n) for k in range(i) for j in range(k)]))
    return float(np.mean(norm.cdf((S[i, k] - S[i, j]) / key_difference_sd(alpha))))

