r"""Self-attention with LayerNorm as dynamics on the sphere (chapter 5 of the book).

With LayerNorm written as a row normalisation (the centring absorbed into
:math:`W_V`, see the chapter), one layer is

.. math::
   X^{(t+1)} = D^{(t)} A^{(t)} X^{(t)} W_V, \qquad
   D^{(t)} = \mathrm{diag}\big(1/\lVert (A^{(t)} X^{(t)} W_V)_{i,:}\rVert\big),

tokens on the unit sphere :math:`S^{d-1}` (eq. ``le-dynamics``). :math:`A^{(t)}`
is the masked softmax of :math:`X W_{QK} X^\top` (``W_QK: (d, d)``; ``W_QK = 0``
gives uniform attention over each token's mask row). With ``centre=True`` the
normalisation is LayerNorm's own, centring included:
:math:`y \mapsto Py/\lVert Py\rVert` with :math:`P = I - \mathbf 1\mathbf 1^\top/d`,
so every token lies in the hyperplane :math:`\mathbf 1^\perp` and the rank is at
most :math:`\min(N, d - 1)`; :func:`centred_lift` carries a construction in
dimension :math:`d - 1` into it.

Proof (a) in coordinates: :func:`gnomonic` (the chart :math:`x \mapsto x/\langle
x, v\rangle`, in which the normalisation is invisible) and
:func:`gnomonic_weights` (the row-stochastic matrix that moves the charted
tokens, eq. ``le-gnomonic``).

Contents: the step and its iteration (batched over inputs), random orthogonal
and hemisphere inputs for part (a); the causal :math:`N = 2, d = 2`
counterexample (:func:`counterexample_wv`, :func:`equilibria_2x2`,
:func:`jacobian_2x2`, :func:`basins_2x2`) for part (b); the construction with
:math:`2^k` equilibria of each rank :math:`k` (:func:`rank_construction_wv`,
:func:`rank_k_equilibria`) for part (c); the linearised stability of an
equilibrium (:func:`ln_step_jacobian`, :func:`tangent_eigenvalues`,
:func:`equilibrium_stability`, :func:`transient_growth`) and
asymptotically stable equilibria of every rank (:func:`chain_wv`,
:func:`chain_spectrum`, :func:`stable_chain`, :func:`stable_rank_construction`); numerical rank and token-geometry
statistics for the pretrained-model section.

Numerical rank (:func:`numerical_rank`): the number of singular values above
``rtol`` times the largest one; ``rtol = 1e-6`` in float64 by default.
"""

import hashlib
import itertools
import math
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt
import torch
from scipy.optimize import brentq

from ._checks import as_float_tensor, as_torch_generator, check_float, check_int, described, fail, shape_of
from .checkpoint import CheckpointStore, resumable_map
from .attention import causal_mask, check_mask, masked_softmax
from .collapse import mu
from .layernorm import normalise

__all__ = [
    "to_unit_sphere",
    "ln_step",
    "iterate_ln",
    "gnomonic",
    "gnomonic_weights",
    "check_proof_a",
    "centred_lift",
    "ranks_reached",
    "classify_2x2",
    "token2_residual",
    "check_orthogonal",
    "random_orthogonal",
    "hemisphere_inputs",
    "counterexample_wv",
    "equilibria_2x2",
    "jacobian_2x2",
    "basins_2x2",
    "rank_construction_wv",
    "rank_k_equilibria",
    "ln_step_jacobian",
    "tangent_eigenvalues",
    "equilibrium_stability",
    "transient_growth",
    "chain_wv",
    "chain_spectrum",
    "stable_chain",
    "stable_rank_construction",
    "numerical_rank",
    "token_geometry",
    "layer_geometry",
]


def to_unit_sphere(Y: torch.Tensor) -> torch.Tensor:
    """Each row scaled to norm 1: the unit-sphere normalisation of Wu et al.'s dynamics.

    ``normalise(Y, "rmsnorm", radius=1)`` (no centring: the centring of a real
    LayerNorm is absorbed into :math:`W_V`, see the chapter). ``Y: (..., N, d)``;
    a zero row is an error (LayerNorm is undefined there).
    """
    if (torch.linalg.vector_norm(Y, dim=-1) == 0).any():
        raise fail("Y", "a tensor with a zero row", "rows of non-zero norm (LayerNorm is undefined at 0)")
    return normalise(Y, "rmsnorm", radius=1.0)


def _tensor(x, name, dtype=None, device=None):
    return as_float_tensor(name, x, dtype, device)


def _normalise_rows(Y, centre: bool):
    if centre:
        Y = normalise(Y, "projection")
    return to_unit_sphere(Y)


def ln_step(X: torch.Tensor | np.ndarray, W_V: torch.Tensor | np.ndarray, mask: npt.ArrayLike | torch.Tensor,
            W_QK: torch.Tensor | np.ndarray | None = None, centre: bool = False) -> torch.Tensor:
    """One layer :math:`D A X W_V` (eq. ``le-dynamics``). ``X: (batch, N, d)``, ``W_V, W_QK: (d, d)``
    or ``(batch, d, d)``. ``centre=True``: LayerNorm's centring before the normalisation."""
    X = _tensor(X, "X")
    if X.ndim != 3:
        raise fail("X", f"a tensor of shape {tuple(X.shape)}", "shape (batch, N, d)")
    W_V = _tensor(W_V, "W_V", X.dtype, X.device)
    d = X.shape[-1]
    if W_V.shape[-2:] != (d, d):
        raise fail("W_V", f"a tensor of shape {tuple(W_V.shape)}", f"shape (d, d) = ({d}, {d})")
    if W_QK is None:
        scores = torch.zeros(X.shape[:-1] + (X.shape[-2],), dtype=X.dtype, device=X.device)
    else:
        W_QK = _tensor(W_QK, "W_QK", X.dtype, X.device)
        scores = (X @ W_QK) @ X.transpose(-1, -2)
    A = masked_softmax(scores, mask)
    return _normalise_rows(A @ X @ W_V, centre)


def iterate_ln(X0: torch.Tensor | np.ndarray, W_V: torch.Tensor | np.ndarray | Callable[[int], torch.Tensor | np.ndarray],
               mask: npt.ArrayLike | torch.Tensor, n_steps: int, W_QK: torch.Tensor | np.ndarray | None = None, every: int = 1,
               centre: bool = False) -> tuple[torch.Tensor, np.ndarray]:
    """Iterate :func:`ln_step`; returns ``(X_final, mu_traj)`` with ``mu_traj: (n_steps // every + 1, batch)``.

    ``W_V`` may also be a callable ``t -> (d, d)`` (a different value matrix per layer).
    """
    check_int("n_steps", n_steps, low=0)
    X = _normalise_rows(_tensor(X0, "X0"), centre)
    mask = check_mask(mask)
    mus = [mu(X)]
    with torch.no_grad():
        for t in range(n_steps):
            W = W_V(t) if callable(W_V) else W_V
            X = ln_step(X, W, mask, W_QK, centre)
            if (t + 1) % every == 0:
                mus.append(mu(X))
    return X, torch.stack(mus).cpu().numpy()


def gnomonic(X: torch.Tensor | np.ndarray, v: torch.Tensor | np.ndarray) -> torch.Tensor:
    r"""The chart :math:`x \mapsto x / \langle x, v\rangle` of the open hemisphere around ``v``.

    ``X: (..., N, d)`` with every :math:`\langle x_i, v\rangle > 0`, ``v: (d,)``. It maps
    a token and every positive multiple of it to the same point of the plane
    :math:`\{p : \langle p, v\rangle = 1\}`, so the normalisation of LayerNorm does
    not move charted tokens; :math:`x = p/\lVert p\rVert` inverts it on the sphere.
    """
    h = _heights(X, v)
    if (h <= 0).any():
        raise fail("X", "tokens outside the open hemisphere of v", "every <x_i, v> > 0")
    return _tensor(X, "X") / h[..., None]


def _heights(X, v):
    """<x_i, v> for ``X: (..., N, d)`` and ``v: (d,)`` or ``(..., d)``."""
    X = _tensor(X, "X")
    v = _tensor(v, "v", X.dtype, X.device)
    return (X * v.unsqueeze(-2)).sum(-1)


def gnomonic_weights(A: torch.Tensor, X: torch.Tensor | np.ndarray, v: torch.Tensor | np.ndarray) -> torch.Tensor:
    r"""The row-stochastic matrix :math:`B_{ij} = A_{ij} h_j / \sum_k A_{ik} h_k`, :math:`h_j = \langle x_j, v\rangle`.

    Eq. ``le-gnomonic``: for a step :math:`x_i' = \sum_j A_{ij} x_j / \lVert\cdot\rVert` (the
    rotation undone), :math:`\mathrm{gnomonic}(X') = B\,\mathrm{gnomonic}(X)`: in the chart the
    LayerNorm dynamics is a pure averaging, with :math:`B_{ij} \ge A_{ij}\min_j h_j`.
    ``A: (..., N, N)``, ``X: (..., N, d)``, ``v: (d,)``.
    """
    B = A * _heights(X, v)[..., None, :]
    return B / B.sum(-1, keepdim=True)


def check_proof_a(X0: torch.Tensor | np.ndarray, W_V: torch.Tensor | np.ndarray, mask: npt.ArrayLike | torch.Tensor, n_steps: int,
                  W_QK: torch.Tensor | np.ndarray | None, v: torch.Tensor | np.ndarray) -> dict:
    r"""The two steps of proof (a), checked along a run of :func:`ln_step` with an orthogonal ``W_V``.

    With the rotations undone, :math:`Z^{(t)} = X^{(t)} (W_V^\top)^t`, the proof needs
    (1) the heights :math:`\min_i \langle z_i^{(t)}, v\rangle` never to decrease (the
    tokens stay in the hemisphere) and (2) :math:`\mathrm{gnomonic}(Z^{(t+1)}) =
    B^{(t)}\,\mathrm{gnomonic}(Z^{(t)})` (eq. ``le-gnomonic``). ``X0: (batch, N, d)`` in the
    open hemisphere of ``v: (batch, d)``. Returns ``heights: (n_steps + 1, batch)``,
    ``chart_residual`` (largest deviation in (2), relative to the charted tokens' size)
    and ``spread``: the largest distance between charted tokens, ``(n_steps + 1, batch)``.
    """
    W = _tensor(W_V, "W_V", torch.float64)
    check_orthogonal(W, tol=1e-9)
    mask = check_mask(mask)
    X = to_unit_sphere(_tensor(X0, "X0", torch.float64))
    W_QK = _tensor(W_QK, "W_QK", torch.float64)
    U = torch.eye(W.shape[0], dtype=torch.float64)  # W_V^t
    heights, spreads, resid = [], [], 0.0
    with torch.no_grad():
        for t in range(n_steps + 1):
            Z = X @ U.T
            heights.append(_heights(Z, v).amin(-1))
            G = gnomonic(Z, v)
            spreads.append(torch.cdist(G, G).amax((-2, -1)))
            if t == n_steps:
                break
            A = masked_softmax((X @ W_QK) @ X.transpose(-1, -2), mask)
            X, U = ln_step(X, W, mask, W_QK), U @ W
            G1 = gnomonic(X @ U.T, v)
            resid = max(resid, float(((G1 - gnomonic_weights(A, Z, v) @ G).abs().amax((-2, -1))
                                      / G.abs().amax((-2, -1))).max()))
    return {"heights": torch.stack(heights).numpy(), "chart_residual": resid,
            "spread": torch.stack(spreads).numpy()}


def centred_lift(W: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""Carry a value matrix of dimension :math:`k` into centred LayerNorm in dimension :math:`k + 1`.

    ``W: (k, k)`` -> ``(W_lift, U)`` with ``U: (k, k+1)`` orthonormal rows spanning
    :math:`\mathbf 1^\perp \subset \mathbb R^{k+1}` and ``W_lift = U^T W U``. Tokens ``Y: (.., k)``
    lift to ``Y @ U``; then the centred dynamics (``centre=True``) with ``W_lift``
    equals the uncentred one with ``W`` read through ``U``, since ``U`` is an isometry
    onto :math:`\mathbf 1^\perp` and the centring is the identity there.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise fail("W", f"a matrix of shape {W.shape}", "a square (k, k) matrix")
    k = W.shape[0]
    # an orthonormal basis of 1^perp: the last k left singular vectors of the centring projection
    P = np.eye(k + 1) - 1.0 / (k + 1)
    U = np.linalg.svd(P)[0][:, :k].T
    return U.T @ W @ U, U


def ranks_reached(W_V: torch.Tensor | np.ndarray, n: int, n_random: int, n_steps: int,
                  generator: torch.Generator | int, *, centre: bool = False, rtol: float = 1e-6) -> np.ndarray:
    """Numerical ranks reached from ``n_random`` uniform random inputs on the sphere.

    Causal mask, uniform attention, ``n_steps`` layers of :func:`ln_step` with ``W_V: (d, d)``.
    Returns ``(n_random,)`` integers.
    """
    W = _tensor(W_V, "W_V", torch.float64)
    d = W.shape[-1]
    X0 = torch.randn((check_int("n_random", n_random, low=1), check_int("n", n, low=1), d),
                     generator=as_torch_generator("generator", generator), dtype=torch.float64)
    X, _ = iterate_ln(X0, W, causal_mask(n), n_steps, every=max(1, n_steps), centre=centre)
    return numerical_rank(X, rtol)


def check_orthogonal(W: torch.Tensor | np.ndarray, tol: float = 1e-6, name: str = "W_V") -> np.ndarray:
    """Raise ``ValueError`` unless ``W: (d, d)`` satisfies ``max|W W^T - I| <= tol``."""
    W = np.asarray(W.detach().cpu() if hasattr(W, "detach") else W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise fail(name, f"a matrix of shape {W.shape}", "a square (d, d) matrix")
    err = np.abs(W @ W.T - np.eye(W.shape[0])).max()
    if err > tol:
        raise fail(name, f"a matrix with max|W W^T - I| = {err:.3g}", f"an orthogonal matrix (max|W W^T - I| <= tol = {tol:g})", "is not orthogonal")
    return W


def random_orthogonal(d: int, generator: torch.Generator | int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A Haar-random orthogonal ``(d, d)`` matrix (QR of a Gaussian matrix with the sign fix)."""
    check_int("d", d, low=1)
    G = torch.randn((d, d), generator=as_torch_generator("generator", generator), dtype=torch.float64)
    Q, R = torch.linalg.qr(G)
    Q = Q * torch.sign(torch.diagonal(R))[None, :]
    return Q.to(dtype)


def hemisphere_inputs(batch: int, n: int, d: int, generator: torch.Generator | int, spread: float = 1.0,
                      dtype: torch.dtype = torch.float64,
                      return_pole: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    r"""Unit tokens in the open hemisphere :math:`\{x : \langle x, v\rangle > 0\}` of a random pole ``v``.

    Tokens are :math:`(v + \text{spread}\cdot g)/\lVert\cdot\rVert` with Gaussian
    :math:`g` of norm about ``spread * sqrt(d)``, redrawn until
    :math:`\langle x, v\rangle > 0`. Returns ``(batch, n, d)``.
    """
    generator = as_torch_generator("generator", generator)
    v = to_unit_sphere(torch.randn((batch, 1, d), generator=generator, dtype=torch.float64))
    X = torch.empty((batch, n, d), dtype=torch.float64)
    todo = torch.ones((batch, n), dtype=torch.bool)
    while todo.any():
        cand = to_unit_sphere(v + spread * torch.randn((batch, n, d), generator=generator, dtype=torch.float64))
        ok = todo & ((cand * v).sum(-1) > 0)
        X[ok] = cand[ok]
        todo &= ~ok
    return (X.to(dtype), v[:, 0].to(dtype)) if return_pole else X.to(dtype)


# ------------------------------------------------------------ (b) N = 2, d = 2


def counterexample_wv() -> np.ndarray:
    r"""The book's value matrix for the causal :math:`N = d = 2` counterexample (eq. ``le-wv``).

    :math:`W_V = \begin{pmatrix}1 & 0\\ -1 & 1/2\end{pmatrix}` (rows act on row
    vectors, :math:`x \mapsto x W_V`), with :math:`W_{QK} = 0`. Then
    :math:`e_1 W_V = e_1` (token 1 is attracted to :math:`\pm e_1`), and given
    :math:`x_1 = e_1` token 2 has the stable fixed point :math:`(-4/5, 3/5)`.
    """
    return np.array([[1.0, 0.0], [-1.0, 0.5]])


def _angle_map(theta: np.ndarray, W_V: np.ndarray) -> np.ndarray:
    """The causal N = 2 map in angles. ``theta: (..., 2)`` -> ``(..., 2)``."""
    x = np.stack([np.cos(theta), np.sin(theta)], axis=-1)  # (..., 2 tokens, 2)
    y1 = x[..., 0, :] @ W_V
    y2 = (x[..., 0, :] + x[..., 1, :]) @ W_V / 2
    return np.stack([np.arctan2(y1[..., 1], y1[..., 0]), np.arctan2(y2[..., 1], y2[..., 0])], -1)


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def token2_residual(theta2: npt.ArrayLike, W_V: npt.ArrayLike | None = None) -> np.ndarray:
    r"""One step of token 2 on the circle with token 1 fixed at :math:`e_1`: :math:`\mathrm{wrap}(g(\theta_2) - \theta_2)`.

    ``theta2: (...)``; zeros are token 2's equilibria (for the counterexample's ``W_V``).
    """
    W = counterexample_wv() if W_V is None else np.asarray(W_V, dtype=np.float64)
    th = np.asarray(theta2, dtype=np.float64)
    both = np.stack([np.zeros_like(th), th], -1)
    return _wrap(_angle_map(both, W)[..., 1] - th)


def classify_2x2(theta: npt.ArrayLike, tol: float = 1e-6) -> np.ndarray:
    r"""Where a pair of angles ``theta: (..., 2)`` ended: 0 collapsed (:math:`x_2 = x_1`),
    1 antipodal (:math:`x_2 = -x_1`), 2 rank 2 (:math:`|\det[x_1; x_2]| >` ``tol``)."""
    th = np.asarray(theta, dtype=np.float64)
    det = np.sin(th[..., 1] - th[..., 0])
    dot = np.cos(th[..., 1] - th[..., 0])
    return np.where(np.abs(det) > tol, 2, np.where(dot > 0, 0, 1))


def equilibria_2x2(W_V: npt.ArrayLike | None = None, n_grid: int = 4000) -> np.ndarray:
    r"""All equilibria :math:`(\theta_1, \theta_2)` of the causal N = 2, d = 2 LN dynamics, ``(k, 2)``.

    Token 1: unit left eigenvectors of ``W_V`` with a positive eigenvalue. Token 2:
    the zeros of :math:`\theta_2 \mapsto \mathrm{wrap}(g(\theta_2) - \theta_2)` on a grid
    of ``n_grid`` angles, refined by Brent's method (the jumps of the wrapped
    residual and the singular point :math:`x_2 = -x_1` are skipped).
    """
    W = counterexample_wv() if W_V is None else np.asarray(W_V, dtype=np.float64)
    if W.shape != (2, 2):
        raise fail("W_V", f"a matrix of shape {W.shape}", "a 2 x 2 matrix")
    vals, vecs = np.linalg.eig(W.T)  # left eigenvectors of W: columns of eig(W^T)
    t1 = []
    for lam, v in zip(vals, vecs.T):
        if abs(lam.imag) < 1e-12 and lam.real > 0:
            v = v.real / np.linalg.norm(v.real)
            t1 += [math.atan2(v[1], v[0]), math.atan2(-v[1], -v[0])]
    out = []
    grid = np.linspace(-np.pi, np.pi, n_grid, endpoint=False)
    for a in t1:
        def res(b):
            return _wrap(_angle_map(np.array([a, b]), W)[1] - b)
        r = np.array([res(b) for b in grid])
        for i in range(n_grid):
            b0, b1 = grid[i], grid[(i + 1) % n_grid] + (2 * np.pi if i == n_grid - 1 else 0)
            if r[i] == 0:
                out.append((a, b0))
            elif r[i] * r[(i + 1) % n_grid] < 0 and abs(r[i] - r[(i + 1) % n_grid]) < np.pi:
                if res(b0) * res(b1) >= 0:
                    continue
                b = brentq(res, b0, b1, xtol=1e-14)
                if abs(_wrap(b - a - np.pi)) > 1e-6:  # x2 = -x1: A X = 0, not an equilibrium
                    out.append((a, _wrap(b)))
    return np.array(out)


def jacobian_2x2(theta: npt.ArrayLike, W_V: npt.ArrayLike | None = None, h: float = 1e-6) -> np.ndarray:
    """Jacobian ``(2, 2)`` of the angle map at ``theta: (2,)`` by central differences."""
    W = counterexample_wv() if W_V is None else np.asarray(W_V, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    J = np.zeros((2, 2))
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        J[:, k] = _wrap(_angle_map(theta + e, W) - _angle_map(theta - e, W)) / (2 * h)
    return J


def basins_2x2(W_V: npt.ArrayLike | None = None, n_grid: int = 200,
               n_steps: int = 300) -> tuple[np.ndarray, np.ndarray]:
    r"""Where each initial :math:`(\theta_1, \theta_2)` on a grid ends.

    Returns ``(grid: (n_grid,), final: (n_grid, n_grid, 2))``, ``final[i, j]`` the
    angles reached from :math:`(\theta_1, \theta_2) = (\text{grid}[i], \text{grid}[j])`.
    """
    W = counterexample_wv() if W_V is None else np.asarray(W_V, dtype=np.float64)
    grid = np.linspace(-np.pi, np.pi, n_grid, endpoint=False) + np.pi / n_grid
    th = np.stack(np.meshgrid(grid, grid, indexing="ij"), -1)
    for _ in range(n_steps):
        th = _angle_map(th, W)
    return grid, th


# ------------------------------------------------------ (c) equilibria of every rank


def rank_construction_wv(n: int, d: int) -> np.ndarray:
    r"""Proposition ``le-prop-ranks``: :math:`W_V = \mathrm{diag}(1, \gamma, \gamma^2, \dots, \gamma^{d-1})` with
    :math:`\gamma = 2 + (N-1)\sqrt{\min(N, d)}`: large enough that every
    sign pattern of :func:`rank_k_equilibria` exists (see the chapter)."""
    for name, v, hi in (("N", n, 64), ("d", d, 16)):
        check_int(name, v, low=1, high=hi)
    gamma = 2.0 + (n - 1) * math.sqrt(min(n, d))
    return np.diag(gamma ** np.arange(d, dtype=np.float64))


def _token(sigma, lam, c=None, sign=1.0):
    """Unit x with (sigma + x) diag(lam) = c' x, c' > 0 (see the chapter)."""
    used = sigma != 0
    if c is not None:  # c = lam[m]: coordinate m is free
        m = c
        den = np.where(used, lam[m] - lam, 1.0)  # used coordinates never include m
        alpha = np.where(used, lam * sigma / den, 0.0)
        rest = 1.0 - np.sum(alpha**2)
        if rest <= 0:
            raise fail("W_V", described("a diagonal whose ratios are too small"), "a W_V like rank_construction_wv's, "
                       "whose gamma makes every sign pattern exist", "fails the construction's existence condition")
        alpha[m] = sign * math.sqrt(rest)
        return alpha
    lo = lam[used].max()

    def f(cc):
        return np.sum((lam[used] * sigma[used] / (cc - lam[used])) ** 2) - 1.0

    hi = lo * 2
    while f(hi) > 0:
        hi *= 2
    cc = brentq(f, lo * (1 + 1e-15) + 1e-300, hi, xtol=1e-14 * hi, rtol=1e-15)
    return np.where(used, lam * sigma / (cc - lam), 0.0)


def rank_k_equilibria(W_V: np.ndarray, n: int, k: int) -> np.ndarray:
    r"""The :math:`2^k` constructed equilibria of rank ``k`` for the causal mask, ``W_QK = 0``.

    ``W_V = diag(lam)`` with increasing ``lam``. For each sign pattern
    :math:`s \in \{\pm1\}^k`: token :math:`i \le k` solves
    :math:`(S_{i-1} + x_i) W_V = \lambda_i x_i` with :math:`x_i` having sign
    :math:`s_i` on :math:`e_i`; tokens :math:`i > k` solve it with the unique
    :math:`c > \lambda_k`. ``S_{i-1}`` is the sum of the earlier tokens.
    Returns ``(2**k, n, d)``.
    """
    W = np.asarray(W_V, dtype=np.float64)
    lam = np.diag(W)
    d = lam.size
    if not np.allclose(W, np.diag(lam)) or np.any(np.diff(lam) <= 0) or lam[0] <= 0:
        raise fail("W_V", f"a matrix with diagonal {lam.tolist()}", "a diagonal matrix with positive increasing entries")
    check_int("k", k, low=1, high=min(n, d))
    out = []
    for signs in itertools.product((1.0, -1.0), repeat=k):
        X = np.zeros((n, d))
        S = np.zeros(d)
        for i in range(n):
            X[i] = _token(S, lam, c=i, sign=signs[i]) if i < k else _token(S, lam)
            S = S + X[i]
        out.append(X)
    return np.array(out)


# ------------------------------------------------------ stability of an equilibrium


def _tangent_bases(X: torch.Tensor, centre: bool) -> torch.Tensor:
    r"""Orthonormal bases of each token's tangent space, ``X: (N, d)`` -> ``(N, d, m)``.

    Without centring the tangent space of the unit sphere at :math:`x_i`,
    :math:`x_i^\perp` (``m = d - 1``); with centring the sphere inside
    :math:`\mathbf 1^\perp`, :math:`x_i^\perp \cap \mathbf 1^\perp` (``m = d - 2``).
    """
    n, d = X.shape
    rows = [X[:, None, :]]
    if centre:
        rows.append(torch.full((n, 1, d), d ** -0.5, dtype=X.dtype))
    C = torch.cat(rows, 1)  # (N, c, d): the directions each tangent space is orthogonal to
    Vh = torch.linalg.svd(C, full_matrices=True)[2]  # (N, d, d); rows c.. span the orthogonal complement
    return Vh[:, C.shape[1]:, :].transpose(-1, -2)


def ln_step_jacobian(X: torch.Tensor | np.ndarray, W_V: torch.Tensor | np.ndarray, mask: npt.ArrayLike | torch.Tensor,
                     W_QK: torch.Tensor | np.ndarray | None = None, centre: bool = False) -> torch.Tensor:
    r"""The Jacobian of one :func:`ln_step` in tangent coordinates of the product of spheres.

    ``X: (N, d)`` unit tokens (with ``centre``: also in :math:`\mathbf 1^\perp`), ``W_V, W_QK: (d, d)``.
    The dynamics lives on :math:`(S^{d-1})^N` (with centring on the spheres of
    :math:`\mathbf 1^\perp`, :math:`(S^{d-2})^N`); the derivative :math:`DF(X)` of
    :math:`F =` ``ln_step`` (torch autograd, float64) is read in orthonormal bases
    :math:`B_j` of the tangent spaces at ``X`` and :math:`B'_i` at :math:`F(X)`
    (:math:`B_i` projected there and orthonormalised, so :math:`B'_i = B_i` at a fixed point):
    ``J[(i, a), (j, b)]`` :math:`= \langle \partial F_i/\partial x_j\, B_j e_b, B'_i e_a\rangle`.
    Returns ``(N m, N m)`` with ``m = d - 1`` (``d - 2`` with centring). At an
    equilibrium, :math:`F(X) = X`, its eigenvalues are the linearisation's
    (independent of the bases); the equilibrium is asymptotically stable when
    their largest modulus is below 1 (:func:`equilibrium_stability`).
    """
    X = _tensor(X, "X", torch.float64)
    if X.ndim != 2:
        raise fail("X", shape_of(X), "shape (N, d)", "has the wrong shape")
    n, d = X.shape
    W_V = _tensor(W_V, "W_V", torch.float64)
    W_QK = None if W_QK is None else _tensor(W_QK, "W_QK", torch.float64)
    mask = check_mask(mask)

    def step(Z):
        return ln_step(Z[None], W_V, mask, W_QK, centre)[0]

    J = torch.autograd.functional.jacobian(step, X).reshape(n * d, n * d)
    with torch.no_grad():
        B_in, Y = _tangent_bases(X, centre), step(X)
        # the bases at F(X): B_in projected onto the tangent spaces at F(X) and orthonormalised symmetrically,
        # M (M^T M)^(-1/2), so that at an equilibrium they are B_in itself (a basis of a null space computed
        # afresh could turn by any rotation, and the blocks' eigenvalues would not be the linearisation's)
        M = B_in - Y[:, :, None] * (Y[:, None, :] @ B_in)
        evals, evecs = torch.linalg.eigh(M.transpose(-1, -2) @ M)
        B_out = M @ evecs @ torch.diag_embed(evals.rsqrt()) @ evecs.transpose(-1, -2)
    return torch.block_diag(*B_out).T @ J @ torch.block_diag(*B_in)


def tangent_eigenvalues(X: torch.Tensor | np.ndarray, W_V: torch.Tensor | np.ndarray, mask: npt.ArrayLike | torch.Tensor,
                        W_QK: torch.Tensor | np.ndarray | None = None, centre: bool = False,
                        tol: float = 1e-9) -> np.ndarray:
    r"""The eigenvalues (complex) of the linearisation at each equilibrium: those of :func:`ln_step_jacobian`.

    ``X: (..., N, d)`` -> ``(..., N m)`` with ``m = d - 1`` (``d - 2`` with centring). With a
    causal mask token :math:`i` does not depend on later tokens, the Jacobian is block
    lower-triangular and its eigenvalues are its diagonal blocks', computed block by
    block (an eigenvalue repeated in two blocks would otherwise be resolved only to
    about the square root of the rounding error). Raises ``ValueError`` unless every
    ``X`` is a fixed point of :func:`ln_step` to ``tol`` (largest entry of ``ln_step(X) - X``).
    """
    X = _tensor(X, "X", torch.float64)
    if X.ndim < 2:
        raise fail("X", shape_of(X), "shape (..., N, d)", "has the wrong shape")
    flat = X.reshape(-1, *X.shape[-2:])
    with torch.no_grad():
        moved = float((ln_step(flat, _tensor(W_V, "W_V", torch.float64), mask,
                               None if W_QK is None else _tensor(W_QK, "W_QK", torch.float64), centre) - flat).abs().max())
    if moved > check_float("tol", tol, low=0.0):
        raise fail("X", described(f"tokens that one step moves by {moved:.3g}"), f"an equilibrium (moved by at most tol = {tol:g})")
    n = X.shape[-2]
    m = X.shape[-1] - 1 - bool(centre)  # tangent dimension per token
    causal = not bool(torch.triu(torch.as_tensor(check_mask(mask)), diagonal=1).any())
    out = []
    for x in flat:
        J = ln_step_jacobian(x, W_V, mask, W_QK, centre)
        blocks = [J[i * m:(i + 1) * m, i * m:(i + 1) * m] for i in range(n)] if causal else [J]
        out.append(torch.cat([torch.linalg.eigvals(b) for b in blocks]).numpy() if m else np.zeros(0, complex))
    return np.array(out).reshape(*X.shape[:-2], n * m)


def equilibrium_stability(X: torch.Tensor | np.ndarray, W_V: torch.Tensor | np.ndarray, mask: npt.ArrayLike | torch.Tensor,
                          W_QK: torch.Tensor | np.ndarray | None = None, centre: bool = False,
                          tol: float = 1e-9) -> np.ndarray:
    r"""The spectral radius of the linearisation at each equilibrium: the largest
    :math:`\lvert\text{eigenvalue}\rvert` of :func:`tangent_eigenvalues`.

    ``X: (..., N, d)`` -> ``(...)``. Below 1: asymptotically stable (a discrete map);
    above 1: unstable, and its basin has measure zero. Raises ``ValueError`` unless
    every ``X`` is an equilibrium (see :func:`tangent_eigenvalues`).
    """
    ev = np.abs(tangent_eigenvalues(X, W_V, mask, W_QK, centre, tol))
    return ev.max(-1, initial=0.0)


def transient_growth(J: torch.Tensor | np.ndarray, n_steps: int) -> float:
    r"""The largest amplification of a perturbation by the linearisation in ``n_steps`` steps:
    :math:`\max_{0 \le t \le n} \lVert J^t\rVert_2`.

    ``J: (m, m)`` (e.g. :func:`ln_step_jacobian` at an equilibrium, in its orthonormal
    bases, so the norm is the tangent spaces'). A spectral radius below 1 makes
    :math:`J^t \to 0`, but a non-normal :math:`J` can first amplify a perturbation by
    this factor; the nonlinear terms then decide whether it comes back, so a large
    factor means a small basin.
    """
    J = np.asarray(J.detach().cpu() if hasattr(J, "detach") else J, dtype=np.float64)
    if J.ndim != 2 or J.shape[0] != J.shape[1]:
        raise fail("J", shape_of(J), "a square (m, m) matrix", "has the wrong shape")
    P, best = np.eye(J.shape[0]), 1.0
    for _ in range(check_int("n_steps", n_steps, low=0)):
        P = J @ P
        best = max(best, float(np.linalg.norm(P, 2)))
    return best


def chain_wv(X: npt.ArrayLike, c: npt.ArrayLike) -> np.ndarray:
    r"""The value matrix for which the tokens ``X: (k, k)`` are an equilibrium, with :math:`(S_{i-1} + x_i) W_V = c_i x_i`.

    Causal mask, uniform attention, no centring. ``X``: unit rows, linearly
    independent; ``c: (k,)`` positive. :math:`W_V = X^{-1} B X` with :math:`B =
    \mathrm{diag}(c) - \mathrm{subdiag}(c_1, \dots, c_{k-1})`: the rows of :math:`TX` (:math:`T`
    lower-triangular ones: the prefix sums :math:`S_{i-1} + x_i`) times :math:`W_V` are
    :math:`T B X = C X` (the sum telescopes). Eq. ``le-chain``.
    """
    X, c = np.asarray(X, dtype=np.float64), np.asarray(c, dtype=np.float64)
    k = X.shape[0]
    if X.shape != (k, k) or c.shape != (k,):
        raise fail("X", shape_of(X), "a square (k, k) matrix with c of shape (k,)", "has the wrong shape")
    if np.any(c <= 0) or not np.allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12):
        raise fail("c", described(f"c = {c.tolist()} with row norms {np.linalg.norm(X, axis=1).round(12).tolist()}"),
                   "positive c and unit tokens")
    B = np.diag(c) - np.diag(c[:-1], -1)
    return np.linalg.solve(X, B @ X)


def _newton_terms(c: Sequence, j: int, z):
    """prod_{m < j} (z - c_m) (numpy polynomial coefficients when z is None)."""
    if z is None:
        p = np.array([1.0])
        for m in range(j):
            p = np.polynomial.polynomial.polymul(p, [-float(c[m]), 1.0])
        return p
    out = 1
    for m in range(j):
        out = out * (z - c[m])
    return out


def chain_spectrum(G: npt.ArrayLike, c: npt.ArrayLike) -> list[np.ndarray]:
    r"""The eigenvalues of each token's block of the linearisation at the equilibrium of :func:`chain_wv`.

    ``G: (k, k)`` the Gram matrix of the tokens (unit diagonal), ``c: (k,)``.
    Causal attention makes the linearisation block lower-triangular, so its
    spectrum is the union of the blocks'. Token :math:`i`'s block (``k - 1``
    eigenvalues, complex) has :math:`c_m/c_i` for :math:`m > i` and :math:`z/c_i` for
    the roots of :math:`r_i(z) = \sum_{j \le i} (-1)^{i-j} G_{ji}
    \big(\prod_{m=j}^{i-1} c_m\big) \prod_{m<j} (z - c_m)` (eq. ``le-chain-r``).
    Returns a list of ``k`` arrays of shape ``(k - 1,)``.
    """
    G, c = np.asarray(G, dtype=np.float64), np.asarray(c, dtype=np.float64)
    k = c.size
    out = []
    for i in range(k):
        r = np.zeros(1)
        for j in range(i + 1):
            coef = (-1) ** (i - j) * G[j, i] * np.prod(c[j:i])
            r = np.polynomial.polynomial.polyadd(r, coef * _newton_terms(c, j, None))
        roots = np.polynomial.polynomial.polyroots(r) if i > 0 else np.zeros(0)
        out.append(np.concatenate([roots / c[i], c[i + 1:] / c[i]]).astype(complex))
    return out


def _stable_rho(k: int) -> Fraction:
    return 1 - Fraction(1, 2 * k * k)


def stable_chain(k: int, rho: float | Fraction | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Tokens and value matrix of an asymptotically stable equilibrium of rank ``k`` (:prf:ref:`le-prop-stable`).

    :math:`c_m = \rho^{m-1}` and the roots of every :math:`r_i` (:func:`chain_spectrum`)
    placed at :math:`\rho\, c_i c_m`, :math:`m < i`: then the linearisation's spectral
    radius is :math:`\rho` (for ``k >= 2``). Newton's divided differences of
    :math:`r_i` on the nodes :math:`c_1, \dots, c_{i-1}` give the Gram matrix column
    by column, :math:`G_{ji} = (-1)^{i-j} r_i[c_1, \dots, c_j] / \prod_{m=j}^{i-1} c_m`,
    computed in exact rational arithmetic (the nodes are close and floats cancel);
    the tokens are its Cholesky factor and :math:`W_V` is :func:`chain_wv`.
    ``rho`` defaults to :math:`1 - 1/(2k^2)`. Raises ``ValueError`` when that Gram
    matrix is not positive definite (no such tokens exist; ``rho`` too small).
    Returns ``(W_V: (k, k), X: (k, k), c: (k,))``.
    """
    k = check_int("k", k, low=1, high=16)
    if rho is None:
        rho = _stable_rho(k)
    elif not isinstance(rho, Fraction):
        rho = Fraction(check_float("rho", rho, low=0.0, high=1.0, low_open=True, high_open=True))
    if not 0 < rho < 1:
        raise fail("rho", float(rho), "a number in (0, 1)")
    c = [rho ** m for m in range(k)]
    G = [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    for i in range(1, k):
        roots = [rho * c[i] * c[m] for m in range(i)]
        table = [_newton_terms(roots, i, x) for x in c[:i]]  # r_i = prod (z - root) at the nodes
        dd = [table[0]]
        for level in range(1, i):
            table = [(table[t + 1] - table[t]) / (c[t + level] - c[t]) for t in range(i - level)]
            dd.append(table[0])
        for j in range(i):
            G[j][i] = G[i][j] = (-1) ** (i - j) * dd[j] / math.prod(c[j:i])
    Gf = np.array([[float(g) for g in row] for row in G])
    try:
        X = np.linalg.cholesky(Gf)
    except np.linalg.LinAlgError:
        raise fail("rho", float(rho), f"a rho for which the Gram matrix of rank k = {k} is positive definite",
                   "gives no tokens") from None
    cf = np.array([float(x) for x in c])
    return chain_wv(X, cf), X, cf


def stable_rank_construction(n: int, d: int, k: int, rho: float | Fraction | None = None, *, tol: float = 1e-14,
                             max_iter: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    r"""An asymptotically stable equilibrium of rank ``k`` for ``n`` tokens in dimension ``d`` (causal, ``W_QK = 0``).

    :math:`W_V` = block-diag(:func:`stable_chain`'s ``(k, k)`` matrix,
    :math:`\mathrm{diag}(\rho^k, \dots, \rho^{d-1})`): the extra eigenvalues' ratios to every
    :math:`c_i` are at most :math:`\rho`, so the first ``k`` tokens' blocks keep the spectral radius
    :math:`\rho` (the later tokens' blocks are not covered: measure them).
    Tokens :math:`1..k`: the chain's, padded with zeros. Each later token: the limit
    of its own map :math:`x \mapsto (S + x)W_V/\lVert\cdot\rVert` (the earlier tokens
    fixed, sum :math:`S`) started at the previous token, iterated until it moves
    by less than ``tol`` (``ValueError`` after ``max_iter`` steps); it stays in the
    span of the first ``k`` tokens, which :math:`W_V` maps into itself.
    Returns ``(W_V: (d, d), X: (n, d))``; check it with :func:`equilibrium_stability`.
    """
    n, d = check_int("n", n, low=1, high=64), check_int("d", d, low=1, high=16)
    k = check_int("k", k, low=1, high=min(n, d))
    rho = _stable_rho(k) if rho is None else rho
    Wk, Xk, c = stable_chain(k, rho)
    W = np.diag(float(rho) ** np.arange(d, dtype=np.float64))
    W[:k, :k] = Wk
    X = np.zeros((n, d))
    X[:k, :k] = Xk
    S = X[:k].sum(0)
    for i in range(k, n):
        x = X[i - 1]
        for _ in range(check_int("max_iter", max_iter, low=1)):
            y = (S + x) @ W
            x, prev = y / np.linalg.norm(y), x
            if np.abs(x - prev).max() < tol:
                break
        else:
            raise fail("max_iter", max_iter, f"more steps: token {i + 1} had not settled", "is too few")
        X[i] = x
        S = S + x
    return W, X


def numerical_rank(X: torch.Tensor | np.ndarray, rtol: float = 1e-6) -> np.ndarray:
    """Number of singular values above ``rtol * sigma_max``. ``X: (..., N, d)`` -> ``(...)``."""
    X = _tensor(X, "X")
    check_float("rtol", rtol, low=0.0, high=1.0, low_open=True, high_open=True)
    s = torch.linalg.svdvals(X.double())
    return (s > rtol * s[..., :1]).sum(-1).cpu().numpy()


def token_geometry(X: torch.Tensor | np.ndarray, rtol: float = 1e-4) -> dict:
    r"""Per-sample token geometry of ``X: (batch, N, d)``, each as a ``(batch,)`` array.

    ``full_rank``: numerical rank of the row-normalised tokens (tolerance
    ``rtol`` relative to :math:`\sigma_{\max}`) equals :math:`\min(N, d)`; ``sigma_min``: smallest
    singular value of the row-normalised tokens (every token scaled to unit
    norm, so layers of different scale compare); ``mean_abs_cos``: mean
    :math:`|\cos|` over pairs :math:`i \ne j`; ``rel_mu``: :math:`\mu(X)/\lVert X\rVert_F`.
    """
    X = _tensor(X, "X").double()
    if X.ndim != 3:
        raise fail("X", f"a tensor of shape {tuple(X.shape)}", "shape (batch, N, d)")
    check_float("rtol", rtol, low=0.0, high=1.0, low_open=True, high_open=True)
    n, d = X.shape[-2:]
    U = to_unit_sphere(X)
    C = (U @ U.transpose(-1, -2)).abs()
    off = (C.sum((-2, -1)) - torch.diagonal(C, dim1=-2, dim2=-1).sum(-1)) / (n * (n - 1))
    sv = torch.linalg.svdvals(U)  # one SVD for the rank and the smallest singular value
    return {
        # row scaling does not change the rank; on unit tokens one huge token
        # (an attention sink) cannot hide the others below the tolerance
        "full_rank": ((sv > rtol * sv[..., :1]).sum(-1) == min(n, d)).numpy(),
        "sigma_min": sv[..., -1].numpy(),
        "mean_abs_cos": off.numpy(),
        "rel_mu": (mu(X) / torch.linalg.vector_norm(X, dim=(-2, -1))).numpy(),
    }


def layer_geometry(hidden_states: Callable[[torch.Tensor], Sequence[torch.Tensor]], input_ids: torch.Tensor, *,
                   chunk: int = 16, rtol: float = 1e-4, store: CheckpointStore | None = None, key: dict | None = None) -> dict:
    """:func:`token_geometry` of every layer of a model, over many samples, ``chunk`` at a time.

    ``hidden_states``: a callable ``ids (b, seq) -> [ (b, seq, d) per layer ]`` (e.g. a
    model's residual stream); ``input_ids: (batch, seq)``. Returns each statistic
    as ``(layers, batch)``. Chunks go through :func:`~attention_geometry.checkpoint.resumable_map`
    with ``key`` (which must name the model) plus the ids, so a long run resumes.
    """
    chunk = check_int("chunk", chunk, low=1)
    ids = input_ids
    full_key = {**(key or {}), "ids": hashlib.sha256(ids.cpu().numpy().tobytes()).hexdigest()[:16],
                "shape": list(ids.shape), "chunk": chunk, "rtol": rtol}

    def piece(start):
        with torch.no_grad():
            hs = hidden_states(ids[start:start + chunk])
        g = [token_geometry(h.float().cpu(), rtol=rtol) for h in hs]
        return {k: np.stack([x[k] for x in g]) for k in g[0]}

    parts = resumable_map(piece, range(0, ids.shape[0], chunk), store=store, name="layer_geometry", key=full_key)
    return {k: np.concatenate([p[k] for p in parts], axis=1) for k in parts[0]}
