"""A small random-init decoder with every component behind a switch (chapter 9).

The decoder is pure torch so that each component can be switched off: the
causal mask (or a sliding window), the normalisation (``"layernorm"``,
``"rmsnorm"`` or ``"none"``, both without gain or bias), the residual
connection and rotary position embeddings. One layer, pre-norm::

    Z = norm(X);  S = rope(Z W_Q) rope(Z W_K)^T / sqrt(d_h);  A = softmax(S + mask)
    X <- X + A Z W_V W_O      (or A Z W_V W_O without the residual)

Shapes: ``X: (batch, n, d)``; scores ``S: (batch, layer, n, n)`` (one head).
"""

from dataclasses import dataclass, replace

import torch

from ._checks import check_bool, check_choice, check_float, check_int, fail
from .attention import make_mask, masked_softmax
from .collapse import mu
from .layernorm import normalise
from .recency import recency_fraction, triples

__all__ = ["SynthConfig", "init_weights", "decoder_forward", "synth_inputs",
           "influence_profile", "measure_variant", "default_variants", "synthesis_experiment"]

#: The normalisations the switchable decoder offers (the book's vocabulary).
NORMS = ("layernorm", "rmsnorm", "none")


@dataclass(frozen=True)
class SynthConfig:
    """The switches. ``window``: the one-sided window of width ``w`` of
    :mod:`~attention_geometry.attention` (keys ``i - w <= j <= i``, ``w + 1`` keys;
    ``None``: the full causal mask)."""

    causal: bool = True
    window: int | None = None
    norm: str = "layernorm"
    residual: bool = True
    rope: bool = False
    n_layers: int = 4
    alpha: float = 0.5  # anisotropy of the inputs: a shared direction of weight alpha

    def check(self):
        check_bool("causal", self.causal)
        check_choice("norm", self.norm, NORMS)
        check_int("n_layers", self.n_layers, low=1)
        if self.window is not None:
            check_int("window", self.window, low=1)
            if not self.causal:
                raise fail("window", self.window, "None when causal is False")
        check_float("alpha", self.alpha, low=0.0, high=1.0, high_open=True)
        return self


def init_weights(d, n_layers, *, generator, scale=1.0, dtype=torch.float64):
    """Per layer ``(W_Q, W_K, W_V, W_O)``, each ``(d, d)``, entries N(0, scale^2 / d)."""
    if check_int("d", d, low=2) % 2:
        raise fail("d", d, "an even integer >= 2 (RoPE rotates pairs)")
    check_int("n_layers", n_layers, low=1)
    check_float("scale", scale, low=0.0, low_open=True)
    std = scale / d**0.5
    return [tuple(torch.randn(d, d, generator=generator, dtype=dtype) * std for _ in range(4))
            for _ in range(n_layers)]


def _rope(X):
    """Rotary embedding of ``X: (batch, n, d)`` (pairs of coordinates, base 10000)."""
    n, d = X.shape[-2:]
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=X.dtype) / d)
    ang = torch.arange(n, dtype=X.dtype)[:, None] * freq[None, :]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = X[..., 0::2], X[..., 1::2]
    out = torch.empty_like(X)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


def _mask(n, cfg, device):
    """The configuration's mask as a torch bool tensor ``(n, n)``."""
    kind = "complete" if not cfg.causal else "causal" if cfg.window is None else "one_sided"
    return torch.as_tensor(make_mask(kind, n, cfg.window), device=device)


def decoder_forward(X, weights, cfg: SynthConfig = SynthConfig()):
    """``X: (batch, n, d)`` -> ``(hidden (batch, n, d), scores (batch, layer, n, n))``.

    ``weights``: from :func:`init_weights`; only the first ``cfg.n_layers`` are used.
    Masked scores are ``-inf``."""
    cfg.check()
    if X.ndim != 3:
        raise fail("X", f"a tensor of shape {tuple(X.shape)}", "shape (batch, n, d)")
    if len(weights) < cfg.n_layers:
        raise fail("weights", f"{len(weights)} layers", f"at least n_layers = {cfg.n_layers} layers")
    if weights[0][0].shape[0] != X.shape[-1]:
        raise fail("X", f"width {X.shape[-1]}", f"the weights' width {weights[0][0].shape[0]}")
    d = X.shape[-1]
    allowed = _mask(X.shape[-2], cfg, X.device)
    scores = []
    for Wq, Wk, Wv, Wo in weights[: cfg.n_layers]:
        Z = normalise(X, cfg.norm)
        Q, K = Z @ Wq, Z @ Wk
        if cfg.rope:
            Q, K = _rope(Q), _rope(K)
        S = (Q @ K.transpose(-1, -2)) / d**0.5
        A = masked_softmax(S, allowed)
        scores.append(S.masked_fill(~allowed, float("-inf")))
        out = A @ (Z @ Wv @ Wo)
        X = X + out if cfg.residual else out
    return X, torch.stack(scores, dim=1)


def synth_inputs(batch, n, d, alpha, *, generator, dtype=torch.float64):
    """``(batch, n, d)``: ``sqrt(alpha) u + sqrt(1 - alpha) z_i``, one shared Gaussian ``u`` per sequence."""
    check_int("batch", batch, low=1)
    check_int("n", n, low=3)
    u = torch.randn(batch, 1, d, generator=generator, dtype=dtype)
    z = torch.randn(batch, n, d, generator=generator, dtype=dtype)
    return alpha**0.5 * u + (1 - alpha) ** 0.5 * z


def influence_profile(X, weights, cfg: SynthConfig = SynthConfig()):
    """``(n,)``: ``||d y_n / d x_j||_F^2`` of the last output, exact, averaged over the
    batch and normalised to sum 1. ``X: (batch, n, d)``."""
    out = []
    for x in X:
        J = torch.func.jacrev(lambda x: decoder_forward(x[None], weights, cfg)[0][0, -1])(x)
        out.append(J.pow(2).sum(dim=(0, 2)))  # J: (d, n, d)
    p = torch.stack(out).mean(0)
    return p / p.sum()


def measure_variant(cfg, *, d=32, n=16, batch=64, jac_batch=4, seed=0, scale=1.0, max_layers=None):
    """One variant's measurements, a dict: last-layer recency probability (mean over the
    batch, causal triples i > k > j; ``rp_inside``: only triples whose two keys are both
    visible, which differs from ``rp`` for a sliding window; NaN if there is none), the relative collapse ``mu(X_L) / ||X_L||_F``, and the
    influence profile's ends over its middle (``first_mid``, ``last_mid``).
    The weights depend on ``seed`` only (the same for every variant of one run)."""
    g = torch.Generator().manual_seed(seed)
    weights = init_weights(d, max(cfg.n_layers, max_layers or 0), generator=g, scale=scale)
    X0 = synth_inputs(batch, n, d, cfg.alpha, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        H, S = decoder_forward(X0, weights, cfg)
    rp = recency_fraction(S[:, -1], triples(n))
    i, k, j = triples(n)
    near, far = S[:, -1, i, k], S[:, -1, i, j]
    inside = (torch.isfinite(near) & torch.isfinite(far)).all(0)  # both keys visible (windows)
    rp_inside = (0.5 * (torch.sign(near - far) + 1))[:, inside].mean()
    rel_mu = mu(H) / torch.linalg.vector_norm(H, dim=(-2, -1))
    prof = influence_profile(X0[:jac_batch], weights, cfg)
    mid = prof[n // 4: 3 * n // 4].mean()
    return {"rp": float(rp.mean()), "rp_se": float(rp.std() / batch**0.5),
            "rp_inside": float(rp_inside),
            "mu_rel": float(rel_mu.mean()), "first_mid": float(prof[0] / mid),
            "last_mid": float(prof[-1] / mid), "profile": prof.numpy()}


def default_variants(n_layers=4, window=4, alpha=0.5):
    """The baseline and one change at a time: name -> :class:`SynthConfig`."""
    base = SynthConfig(n_layers=n_layers, alpha=alpha)
    return {
        "baseline (causal, LN, residual)": base,
        "no causal mask": replace(base, causal=False),
        f"sliding window w={window}": replace(base, window=window),
        "RMSNorm": replace(base, norm="rmsnorm"),
        "no norm": replace(base, norm="none"),
        "no residual": replace(base, residual=False),
        "RoPE": replace(base, rope=True),
        "isotropic inputs": replace(base, alpha=0.0),
        f"depth {2 * n_layers}": replace(base, n_layers=2 * n_layers),
    }


def synthesis_experiment(variants, **kwargs):
    """The rows (one dict per variant, with its ``"variant"`` name) of :func:`measure_variant`,
    plus the profiles ``{name: (n,)}``; every variant uses the same weights and inputs."""
    max_layers = max(c.n_layers for c in variants.values())
    rows, profiles = [], {}
    for name, cfg in variants.items():
        m = measure_variant(cfg, max_layers=max_layers, **kwargs)
        profiles[name] = m.pop("profile")
        rows.append({"variant": name, **m})
    return rows, profiles
