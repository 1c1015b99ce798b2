r"""Rank collapse of masked self-attention over depth (chapter 4 of the book).

The dynamical system, for tokens :math:`X^{(t)} \in \mathbb R^{N\times d}`:

.. math::
   X^{(t+1)} = A^{(t)} X^{(t)} W_V^{(t)}, \qquad
   A^{(t)} = \mathrm{softmax}_G\!\big(X^{(t)} W_Q^{(t)} W_K^{(t)\top} X^{(t)\top} / \sqrt{d_{QK}}\big),

where :math:`\mathrm{softmax}_G` is the row softmax restricted to the mask
(entries off the mask are 0, see :mod:`attention_geometry.attention`). Options:
LayerNorm after the layer (no affine map: centre each token, scale it to norm
:math:`\sqrt d`) and a skip connection :math:`X + A X W_V`.

The collapse measure is :math:`\mu(X) = \lVert X - \mathbf 1 \bar x^\top\rVert_F` with
:math:`\bar x = X^\top \mathbf 1 / N` the mean token (:func:`mu`).

Random initialisation: :math:`W_Q, W_K, W_V` have i.i.d. :math:`\mathcal N(0, 1/d)`
entries, drawn fresh for every layer and every initialisation from an explicit
``torch.Generator``. With tokens of norm :math:`\sqrt d`, the logits
:math:`x_i W_Q W_K^\top x_j` then have variance about :math:`d`, so
``d_qk = d`` gives unit-variance logits; a *smaller* ``d_qk`` (a lower
temperature) sharpens attention, a larger one flattens it.

Shapes: ``X: (batch, N, d)``; a run over ``n_inits`` initialisations carries
``(n_inits, batch, N, d)`` and returns ``(depth + 1, n_inits, batch)`` arrays.
"""

import math

import numpy as np
import torch

from ._checks import as_float_tensor as _tensor_checked, check_float, check_int, fail
from .attention import check_mask, masked_softmax
from .layernorm import normalise

__all__ = [
    "mu",
    "attention_matrix",
    "standardise_tokens",
    "draw_layer_weights",
    "mu_over_depth",
    "mu_over_depth_loop",
    "fit_rate",
]


def _tensor(x, name, dtype=None, device=None):
    return _tensor_checked(name, x, dtype, device)


def mu(X) -> torch.Tensor:
    r"""Collapse measure :math:`\lVert X - \mathbf 1\bar x^\top\rVert_F`. ``X: (..., N, d)`` -> ``(...)``."""
    X = _tensor(X, "X")
    if X.ndim < 2:
        raise fail("X", f"a tensor of shape {tuple(X.shape)}", "shape (..., N, d)")
    return torch.linalg.vector_norm(X - X.mean(dim=-2, keepdim=True), dim=(-2, -1))


def _checked_mask(mask, device) -> torch.Tensor:
    """The mask as a torch bool tensor, checked once (a long run would re-check every layer)."""
    return torch.as_tensor(check_mask(mask), device=device)


def attention_matrix(X, W_Q, W_K, mask, d_qk: float) -> torch.Tensor:
    r""":math:`\mathrm{softmax}_G(X W_Q W_K^\top X^\top/\sqrt{d_{QK}})`.

    ``X: (..., N, d)``, ``W_Q, W_K: (..., d, d)`` (broadcast), returns ``(..., N, N)``.
    """
    check_float("d_qk", d_qk, low=0.0, low_open=True)
    W_QK = W_Q @ W_K.transpose(-1, -2)  # (d, d) first: N d^2 + N^2 d instead of 2 N d^2 + N^2 d
    scores = (X @ W_QK) @ X.transpose(-1, -2) / math.sqrt(d_qk)
    return masked_softmax(scores, mask)


def standardise_tokens(X) -> torch.Tensor:
    r"""Scale each sample so its mean squared token norm is ``d``. ``X: (batch, N, d)``."""
    X = _tensor(X, "X")
    d = X.shape[-1]
    scale = X.pow(2).sum(-1).mean(-1, keepdim=True).clamp_min(1e-30).sqrt()
    return X * (math.sqrt(d) / scale)[..., None]


def draw_layer_weights(generator: torch.Generator, n_inits: int, d: int, dtype, device="cpu"):
    r"""One layer's ``W_Q, W_K, W_V: (n_inits, d, d)``, entries :math:`\mathcal N(0, 1/d)`.

    Drawn on the CPU from ``generator`` (so a run is reproducible on any device),
    then moved to ``device``.
    """
    W = torch.randn((3, n_inits, d, d), generator=generator, dtype=torch.float64) / math.sqrt(d)
    W = W.to(dtype=dtype, device=device)
    return W[0], W[1], W[2]


def _check_run(X0, n_layers, n_inits, d_qk):
    check_int("n_layers", n_layers, low=1)
    check_int("n_inits", n_inits, low=1)
    if X0.ndim != 3:
        raise fail("X0", f"a tensor of shape {tuple(X0.shape)}", "shape (batch, N, d)")
    check_float("d_qk", d_qk, low=0.0, low_open=True)


def _layer(X, W_Q, W_K, W_V, mask, d_qk, layernorm, skip):
    A = attention_matrix(X, W_Q, W_K, mask, d_qk)
    Y = A @ X @ W_V
    if skip:
        Y = X + Y
    return normalise(Y, "layernorm") if layernorm else Y


def mu_over_depth(
    X0,
    mask,
    n_layers: int,
    n_inits: int,
    seed: int,
    *,
    d_qk: float | None = None,
    layernorm: bool = False,
    skip: bool = False,
    dtype=torch.float32,
    device="cpu",
) -> dict:
    r"""Iterate random-init attention layers from ``X0: (batch, N, d)``, batched.

    Every one of ``n_inits`` initialisations (weights drawn layer by layer from
    ``torch.Generator().manual_seed(seed)``) is applied to every input at once.
    ``d_qk`` defaults to ``d``. Returns NumPy arrays of shape
    ``(n_layers + 1, n_inits, batch)``: ``"mu"`` (:math:`\mu(X^{(t)})`) and
    ``"norm"`` (:math:`\lVert X^{(t)}\rVert_F`).
    """
    X0 = _tensor(X0, "X0", dtype=dtype, device=device)
    d = X0.shape[-1]
    d_qk = float(d) if d_qk is None else d_qk
    _check_run(X0, n_layers, n_inits, d_qk)
    mask = _checked_mask(mask, X0.device)
    gen = torch.Generator().manual_seed(seed)
    X = X0.unsqueeze(0).expand(n_inits, *X0.shape).contiguous()
    mus, norms = [mu(X)], [torch.linalg.vector_norm(X, dim=(-2, -1))]
    with torch.no_grad():
        for _ in range(n_layers):
            W_Q, W_K, W_V = (w[:, None] for w in draw_layer_weights(gen, n_inits, d, dtype, device))
            X = _layer(X, W_Q, W_K, W_V, mask, d_qk, layernorm, skip)
            mus.append(mu(X))
            norms.append(torch.linalg.vector_norm(X, dim=(-2, -1)))
    return {
        "mu": torch.stack(mus).cpu().double().numpy(),
        "norm": torch.stack(norms).cpu().double().numpy(),
    }


def mu_over_depth_loop(X0, mask, n_layers, n_inits, seed, *, d_qk=None, layernorm=False,
                       skip=False, dtype=torch.float32, device="cpu") -> dict:
    """Reference for :func:`mu_over_depth`: the same weights, one sample at a time.

    A plain Python loop over initialisations and inputs; used by the tests and
    the benchmark, never by the chapters.
    """
    X0 = _tensor(X0, "X0", dtype=dtype, device=device)
    d = X0.shape[-1]
    d_qk = float(d) if d_qk is None else d_qk
    _check_run(X0, n_layers, n_inits, d_qk)
    mask = _checked_mask(mask, X0.device)
    gen = torch.Generator().manual_seed(seed)
    weights = [draw_layer_weights(gen, n_inits, d, dtype, device) for _ in range(n_layers)]
    out_mu = np.zeros((n_layers + 1, n_inits, X0.shape[0]))
    out_norm = np.zeros_like(out_mu)
    with torch.no_grad():
        for k in range(n_inits):
            for b in range(X0.shape[0]):
                X = X0[b]
                out_mu[0, k, b], out_norm[0, k, b] = float(mu(X)), float(X.norm())
                for t, (W_Q, W_K, W_V) in enumerate(weights, start=1):
                    X = _layer(X, W_Q[k], W_K[k], W_V[k], mask, d_qk, layernorm, skip)
                    out_mu[t, k, b], out_norm[t, k, b] = float(mu(X)), float(X.norm())
    return {"mu": out_mu, "norm": out_norm}


def fit_rate(values, t_min: int = 0, floor: float = 1e-5) -> np.ndarray:
    r"""Fitted exponential rate per layer of each trajectory.

    ``values: (T + 1, ...)`` positive (e.g. :math:`\mu(X^{(t)})`). Least squares
    of :math:`\log v_t` on :math:`t` over ``t >= t_min`` while
    :math:`v_t / v_0 > ` ``floor`` (later points sit at the precision floor).
    Returns ``-slope`` with shape ``(...)``: :math:`v_t \approx C e^{-\mathrm{rate}\,t}`;
    NaN where fewer than 3 points qualify.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim < 1 or v.shape[0] < 3:
        raise fail("values", f"an array of shape {v.shape}", "shape (T + 1, ...) with T >= 2")
    T = v.shape[0]
    flat = v.reshape(T, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = flat / flat[0]
        logv = np.log(flat)
    t = np.arange(T, dtype=np.float64)[:, None]
    ok = (t >= t_min) & (rel > floor) & np.isfinite(logv)
    # stop at the first point below the floor: after it the curve is noise
    ok &= np.cumprod(ok | (t < t_min), axis=0).astype(bool)
    n = ok.sum(0)
    tw, lw = np.where(ok, t, 0.0), np.where(ok, logv, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tm, lm = tw.sum(0) / n, lw.sum(0) / n
        cov = (np.where(ok, (t - tm) * (logv - lm), 0.0)).sum(0)
        var = (np.where(ok, (t - tm) ** 2, 0.0)).sum(0)
        slope = cov / var
    rate = np.where(n >= 3, -slope, np.nan)
    return rate.reshape(v.shape[1:])
