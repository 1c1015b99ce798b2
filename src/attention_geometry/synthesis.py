r"""One random-init decoder with every component behind a switch, and its four measurements (chapter 9).

The decoder is pure torch so that each component can be switched: the mask
(causal, a one-sided window of width ``w`` -- keys ``i - w <= j <= i``, the
book's window convention -- or none), the normalisation in front of attention
(any of :data:`~attention_geometry.layernorm.NORMS`, without gain or bias), the
residual weight :math:`\alpha`, rotary position embeddings, the depth and the
number of heads. One layer, pre-norm, with the residual written as in the
Cesàro calculus of chapter 7::

    Z = norm(X);  S_h = rope(Z W_Q,h) rope(Z W_K,h)^T / sqrt(d_h);  A_h = softmax_mask(S_h)
    X <- (1 - alpha) X + alpha * concat_h(A_h Z W_V,h) W_O        (alpha = 1: no residual)

With uniform attention and identity value maps the last row of the layer map
is that of :math:`N = (1-\alpha)I + \alpha M` (:mod:`attention_geometry.cesaro`).

Four quantities, one per paper, each per sequence, with a standard error over
independent draws of the weights, the sequences spread over them (:func:`measure`,
``n_draws``; :mod:`attention_geometry.draws`): for a random-init model the
replicate is the draw, and one draw's sequences say only how well that draw was
measured:

* ``rp``: Kim et al.'s score-level **recency probability** of the last layer,
  the fraction of triples :math:`i > k > j` with :math:`S_{ik} > S_{ij}`
  (:func:`~attention_geometry.recency.simulation.recency_fraction`), averaged over heads;
  ``rp_visible`` restricts it to triples whose two keys the mask lets the query see;
* ``mu_rel``: Wu et al.'s **rank collapse**, relative: :math:`\mu(X_L)/\lVert X_L\rVert_F`;
* ``unselectable``: Brody et al.'s **unselectable keys**: the fraction of the
  last layer's per-head key sets (keys :math:`Z W_{K,h}` of the tokens the last
  query may see) in which some key can never win an argmax;
* ``first_mid``, ``last_mid``: Chowdhury's **Jacobian position profile**
  :math:`\lVert\partial y_n/\partial x_j\rVert_F^2` of the last output (exact, by
  reverse-mode differentiation), normalised to sum 1, its first and last entry
  over the mean of its middle half.

Also ``score_sd`` (the spread of the first layer's scores: small scores mean
near-uniform attention at initialisation) and ``entropy`` (the last layer's
mean attention entropy over the largest possible, :math:`\log` of the number
of visible keys; 1 is uniform).

Shapes: ``X: (batch, n, d)``; ``scores: (batch, layer, head, n, n)``.

The component table and the claims of chapter 9 (``component_effects``,
``synthesis_claims``) are in :mod:`attention_geometry.verdicts`: this module
returns numbers.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import torch

from ._checks import as_generator, as_torch_generator, check_bool, check_choice, check_float, check_int, fail
from .attention import make_mask, masked_softmax
from .collapse import mu
from .layernorm import NORMS, normalise
from .recency.simulation import recency_fraction, triples
from .checkpoint import CheckpointStore, resumable_map
from .draws import DrawEstimate, draw_slices, over_draws, over_replicates
from .stats import Estimate

__all__ = [
    "SynthConfig",
    "MASKS",
    "init_weights",
    "rope",
    "decoder_forward",
    "synth_inputs",
    "influence_profile",
    "measure",
    "default_variants",
    "synthesis_experiment",
    "cesaro_collapse_rate",
    "cesaro_relative_collapse",
    "paired_change",
    "uniformity_over_scale",
    "uniform_gram",
    "uniform_scores",
    "gaussian_unselectable",
    "effective_alpha",
    "effective_residual",
    "DESIGN_RESPONSES",
    "design_responses",
]

#: The mask families of the switchable decoder.
MASKS = ("causal", "one_sided", "complete")


@dataclass(frozen=True)
class SynthConfig:
    """The switches (defaults: the baseline decoder)."""

    mask: str = "causal"  # or "one_sided" (needs window), "complete"
    window: int | None = None  # the one-sided window's width w: keys i - w <= j <= i
    norm: str = "layernorm"  # one of NORMS
    alpha: float = 0.5  # residual weight: X <- (1 - alpha) X + alpha * attention; 1: no residual
    rope: bool = False
    n_layers: int = 4
    n_heads: int = 4

    def check(self) -> "SynthConfig":
        check_choice("mask", self.mask, MASKS)
        if (self.mask == "one_sided") != (self.window is not None):
            raise fail("window", self.window, "an integer >= 1 with mask 'one_sided', None otherwise")
        if self.window is not None:
            check_int("window", self.window, low=1)
        check_choice("norm", self.norm, NORMS)
        check_float("alpha", self.alpha, low=0.0, high=1.0, low_open=True)
        check_bool("rope", self.rope)
        check_int("n_layers", self.n_layers, low=1)
        check_int("n_heads", self.n_heads, low=1)
        return self


def init_weights(d: int, n_layers: int, *, generator: torch.Generator | int, scale: float = 1.0,
                 dtype: torch.dtype = torch.float64, tied: bool = False) -> list[tuple[torch.Tensor, ...]]:
    """Per layer ``(W_Q, W_K, W_V, W_O)``, each ``(d, d)``, entries N(0, scale^2 / d).

    ``tied``: Kim et al.'s model up to a rotation, one draw per layer of a Haar orthogonal ``O``:
    ``W_Q = W_K = scale * O``, ``W_V = W_O = I``, so that head ``m`` scores ``Z O_m O_m^T Z^T`` (with one
    head, ``Z Z^T``: the identity weights of chapter 6) and the values are the normalised tokens.
    ``d`` even (RoPE rotates pairs of coordinates in each head).
    """
    check_bool("tied", tied)
    if check_int("d", d, low=2) % 2:
        raise fail("d", d, "an even integer >= 2 (RoPE rotates pairs)")
    check_int("n_layers", n_layers, low=1)
    check_float("scale", scale, low=0.0, low_open=True)
    std = scale / math.sqrt(d)
    generator = as_torch_generator("generator", generator)
    if tied:  # Kim et al.'s identity weights, up to a random rotation of the score space
        eye = torch.eye(d, dtype=dtype)
        out = []
        for _ in range(n_layers):
            O, R = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=dtype))
            O = O * torch.sign(torch.diagonal(R))  # Haar-distributed
            out.append((scale * O, scale * O, eye, eye))
        return out
    return [tuple(torch.randn(d, d, generator=generator, dtype=dtype) * std for _ in range(4))
            for _ in range(n_layers)]


def rope(X: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding of ``X: (..., n, d_h)`` (pairs of coordinates, base 10000)."""
    n, d = X.shape[-2:]
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=X.dtype) / d)
    ang = torch.arange(n, dtype=X.dtype)[:, None] * freq[None, :]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = X[..., 0::2], X[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def _mask(n: int, cfg: SynthConfig, device) -> torch.Tensor:
    return torch.as_tensor(make_mask(cfg.mask, n, cfg.window), device=device)


def _heads(T: torch.Tensor, h: int) -> torch.Tensor:  # (b, n, d) -> (b, h, n, d/h)
    b, n, d = T.shape
    return T.reshape(b, n, h, d // h).transpose(1, 2)


def decoder_forward(X: torch.Tensor, weights: Sequence[tuple[torch.Tensor, ...]], cfg: SynthConfig = SynthConfig()
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The layers of ``eq-syn-layer``: ``X: (batch, n, d)`` -> ``(hidden (batch, n, d),
    scores (batch, layer, head, n, n), keys (batch, head, n, d_h) of the last layer)``.

    Only the first ``cfg.n_layers`` layers of ``weights`` are used, each matrix ``(d, d)``,
    or ``(batch, d, d)``: one per sequence (sequences through different draws of the
    weights, in one batch). Scores off the mask are ``-inf``."""
    cfg.check()
    if X.ndim != 3:
        raise fail("X", f"a tensor of shape {tuple(X.shape)}", "shape (batch, n, d)")
    if len(weights) < cfg.n_layers:
        raise fail("weights", f"{len(weights)} layers", f"at least n_layers = {cfg.n_layers} layers")
    d = X.shape[-1]
    if weights[0][0].shape[-1] != d or d % cfg.n_heads or (d // cfg.n_heads) % 2:
        raise fail("X", f"width {d}", f"the weights' width {weights[0][0].shape[-1]}, "
                   f"a multiple of 2 n_heads = {2 * cfg.n_heads}")
    allowed = _mask(X.shape[-2], cfg, X.device)
    scores, keys = [], None
    for Wq, Wk, Wv, Wo in weights[: cfg.n_layers]:
        Z = normalise(X, cfg.norm)
        Q, K, V = (_heads(Z @ W, cfg.n_heads) for W in (Wq, Wk, Wv))
        if cfg.rope:
            Q, K = rope(Q), rope(K)
        S = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])
        A = masked_softmax(S, allowed)
        scores.append(S.masked_fill(~allowed, float("-inf")))
        out = (A @ V).transpose(1, 2).reshape(X.shape) @ Wo
        X = (1.0 - cfg.alpha) * X + cfg.alpha * out
        keys = K
    return X, torch.stack(scores, dim=1), keys


def synth_inputs(batch: int, n: int, d: int, anisotropy: float, *, generator: torch.Generator | int,
                 dtype: torch.dtype = torch.float64) -> torch.Tensor:
    r"""``(batch, n, d)``: :math:`\sqrt{a}\,u + \sqrt{1-a}\,z_i`, one shared Gaussian ``u`` per sequence
    (anisotropy ``a``, as the inputs of chapter 6)."""
    check_int("batch", batch, low=1)
    check_int("n", n, low=3)
    a = check_float("anisotropy", anisotropy, low=0.0, high=1.0, high_open=True)
    generator = as_torch_generator("generator", generator)
    u = torch.randn(batch, 1, d, generator=generator, dtype=dtype)
    z = torch.randn(batch, n, d, generator=generator, dtype=dtype)
    return math.sqrt(a) * u + math.sqrt(1 - a) * z


def influence_profile(X: torch.Tensor, weights: Sequence[tuple[torch.Tensor, ...]],
                      cfg: SynthConfig = SynthConfig()) -> torch.Tensor:
    r"""``(batch, n)``: :math:`\lVert\partial y_n/\partial x_j\rVert_F^2` of the last output of each
    sequence ``X: (batch, n, d)``, exact, each row normalised to sum 1.

    One forward pass for the whole batch, then one backward pass per coordinate of
    the last outputs: the sequences are independent, so the gradient of the batch's
    ``k``-th coordinates is every sequence's own row ``k`` of its Jacobian. (A plain
    loop of backward passes is several times faster here than ``vmap``.)"""
    X = X.detach().clone().requires_grad_(True)
    Y = decoder_forward(X, weights, cfg)[0][:, -1, :]  # (batch, d)
    p = torch.zeros(X.shape[:2], dtype=X.dtype, device=X.device)
    for k in range(Y.shape[-1]):
        (g,) = torch.autograd.grad(Y[:, k].sum(), X, retain_graph=k + 1 < Y.shape[-1])
        p += g.pow(2).sum(-1)
    return p / p.sum(-1, keepdim=True)


@lru_cache(maxsize=8)
def _triples(n: int):
    return triples(n)


def _finite_std(S: torch.Tensor) -> torch.Tensor:
    """Per sequence, the standard deviation of the finite entries of ``S: (batch, ...)`` (ddof 1)."""
    fin = torch.isfinite(S).flatten(1)
    x = torch.where(fin, S.flatten(1), 0.0)
    count = fin.sum(-1)
    mean = x.sum(-1) / count
    return (((x - mean[:, None]) * fin).pow(2).sum(-1) / (count - 1)).sqrt()


def _visible_triples(n: int, cfg: SynthConfig):
    i, k, j = _triples(n)
    m = torch.as_tensor(make_mask(cfg.mask, n, cfg.window))
    keep = m[i, k] & m[i, j]
    return i[keep], k[keep], j[keep]


def _unselectable_keys(keys: torch.Tensor, cfg: SynthConfig) -> np.ndarray:
    """Which of the last query's visible keys can never win an argmax, per (sequence, head):
    ``(batch, head, n)`` bool (False for keys the last query cannot see)."""
    from .selectability import classify_keys

    b, h, n, _ = keys.shape
    visible = np.flatnonzero(make_mask(cfg.mask, n, cfg.window)[-1])
    k = keys[..., visible, :].detach().cpu().numpy().reshape(b * h, len(visible), -1)
    unsel = np.zeros((b * h, n), dtype=bool)
    unsel[:, visible] = classify_keys(k)[0]
    return unsel.reshape(b, h, n)


def _per_sequence(cfg: SynthConfig, weights, X0: torch.Tensor, jac: np.ndarray) -> tuple[dict, dict]:
    """The decoder with ``weights`` (per sequence, or shared) on the sequences ``X0: (b, n, d)``:
    every quantity per sequence (the Jacobian ones over the rows ``jac``), and the per-sequence
    position arrays."""
    batch, n = X0.shape[:2]
    with torch.no_grad():
        H, S, keys = decoder_forward(X0, weights, cfg)
    last = S[:, -1]  # (batch, head, n, n)
    rp = recency_fraction(last.reshape(-1, n, n), _triples(n)).reshape(batch, -1).mean(-1)
    vis = _visible_triples(n, cfg)
    if cfg.mask != "one_sided":  # every key of a triple is visible: the same number
        rp_vis = rp
    elif len(vis[0]):
        rp_vis = recency_fraction(last.reshape(-1, n, n), vis).reshape(batch, -1).mean(-1)
    else:
        rp_vis = torch.full((batch,), float("nan"), dtype=H.dtype)
    score_sd = _finite_std(S[:, 0])
    A = torch.softmax(last, dim=-1)
    n_visible = torch.isfinite(last).sum(-1).clamp_min(2).to(H.dtype)
    ent = (-(A * torch.log(A.clamp_min(1e-300))).sum(-1) / torch.log(n_visible))[..., 1:].mean((-2, -1))
    profiles = influence_profile(X0[jac], [tuple(W if W.ndim == 2 else W[jac] for W in layer) for layer in weights],
                                 cfg)
    middle = profiles[:, n // 4: 3 * n // 4].mean(-1)
    unsel = _unselectable_keys(keys, cfg)  # (batch, head, n)
    query = last[:, :, -1, :]  # the last query's scores, (batch, head, n)
    seen = torch.isfinite(query)
    centred = torch.where(seen, query - (query.nan_to_num(0, 0, 0) * seen).sum(-1, keepdim=True)
                          / seen.sum(-1, keepdim=True), torch.nan)
    spread = torch.linalg.vector_norm(H - H.mean(-2, keepdim=True), dim=-1)
    first_score = (centred[..., 0] - centred[..., n // 4: 3 * n // 4].nanmean(-1)).mean(-1)  # NaN: key 1 unseen
    samples = {
        "rp": rp, "rp_visible": rp_vis, "mu_rel": mu(H) / torch.linalg.vector_norm(H, dim=(-2, -1)),
        "unselectable": torch.as_tensor(unsel.any(-1), dtype=torch.float64).mean(-1),
        "first_mid": profiles[:, 0] / middle, "last_mid": profiles[:, -1] / middle, "first_share": profiles[:, 0],
        "score_sd": score_sd, "entropy": ent, "score_first": first_score,
    }
    samples = {k: np.asarray(v.detach().cpu(), dtype=np.float64) for k, v in samples.items()}
    arrays = {"profiles": profiles, "centred": centred, "spread": spread, "unsel": unsel}
    return samples, arrays


def _per_row(draws: list, rows: list[slice]) -> list[tuple[torch.Tensor, ...]]:
    """Per layer, each matrix ``(batch, d, d)``: row ``s`` holds the weights of the draw whose
    slice of ``rows`` contains ``s`` (all draws in one batch)."""
    which = torch.as_tensor(np.repeat(np.arange(len(draws)), [r.stop - r.start for r in rows]))
    return [tuple(torch.stack([w[layer][m] for w in draws])[which] for m in range(4)) for layer in range(len(draws[0]))]


def _draw_estimate(per_draw: list[np.ndarray]) -> Estimate:
    """:func:`~attention_geometry.draws.over_draws`, or a NaN estimate where a value is not finite."""
    if all(np.all(np.isfinite(v)) for v in per_draw):
        return over_draws(per_draw)
    return Estimate(float("nan"), float("nan"))


def measure(cfg: SynthConfig, *, d: int = 32, n: int = 64, batch: int = 64, jac_batch: int = 8,
            anisotropy: float = 0.5, seed: int = 0, scale: float = 1.0, max_layers: int | None = None,
            n_draws: int = 1, tied: bool = False) -> dict[str, Estimate | np.ndarray]:
    """The four quantities (and ``score_sd``, ``entropy``) of one variant, as estimates over the weight
    draws (:class:`~attention_geometry.draws.DrawEstimate`; with one draw, over its sequences), plus the
    mean ``profile: (n,)``, the per-sequence ``profiles: (jac_batch, n)``,
    three more position profiles ``(n,)`` -- ``score_profile`` (the last query's scores by key
    position, centred over the visible keys, mean over sequences and heads: Kim's quantity),
    ``score_first`` (per sequence, the last query's centred score of key 1 minus the mean over the
    middle half of the keys, mean over heads: above 0, score primacy; NaN where key 1 is unseen),
    ``spread_profile`` (each token's distance to the mean token at the last layer over the
    root-mean-square distance: what collapse leaves), ``unselectable_profile`` (how often the key
    at each position is unselectable) -- ``log_first_mid`` and ``log_last_mid`` (estimates of the
    logarithms of the replicates' ratios), ``n_draws``, and
    ``samples``: every quantity per replicate, so that two variants, which see the same weights and
    inputs, can be compared pair by pair. With one draw the replicates are the sequences (the Jacobian
    ones over the first ``jac_batch``); with several they are the draws, each the mean over its sequences.

    ``n_draws``: independent draws of the weights; the ``batch`` sequences (and the ``jac_batch`` of
    them with Jacobians) are spread over them (:func:`~attention_geometry.draws.draw_slices`), so
    that the estimates are over draws at no extra cost: for a random-init model the replicate is the
    draw. The weights depend on ``seed`` only (the draws one after another from its generator, the
    first the same whatever ``n_draws``) and the inputs on ``seed + 1``: every variant of one
    experiment sees the same weights and inputs. ``tied``: the draws of :func:`init_weights` with
    ``tied=True`` (Kim et al.'s identity weights up to a rotation)."""
    cfg.check()
    n_draws = check_int("n_draws", n_draws, low=1)
    check_int("jac_batch", jac_batch, low=2 if n_draws == 1 else n_draws)
    check_int("batch", batch, low=max(2, jac_batch))
    seed = check_int("seed", seed, low=0)
    generator = as_torch_generator("seed", seed)
    X0 = synth_inputs(batch, n, d, anisotropy, generator=seed + 1)
    draws = [init_weights(d, max(cfg.n_layers, max_layers or 0), generator=generator, scale=scale, tied=tied)
             for _ in range(n_draws)]
    rows = draw_slices(batch, n_draws)
    jac = np.concatenate([np.arange(r.start, r.start + min(j.stop - j.start, r.stop - r.start))
                          for r, j in zip(rows, draw_slices(jac_batch, n_draws))])
    per_seq, arr = _per_sequence(cfg, draws[0] if n_draws == 1 else _per_row(draws, rows), X0, jac)
    of_draw = {"batch": rows, "jac": [np.flatnonzero((jac >= r.start) & (jac < r.stop)) for r in rows]}
    per_draw = {k: [v[i] for i in of_draw["jac" if k in ("first_mid", "last_mid", "first_share") else "batch"]]
                for k, v in per_seq.items()}
    samples = per_seq if n_draws == 1 else {k: np.array([x.mean() for x in v]) for k, v in per_draw.items()}
    out: dict = {k: _draw_estimate(v) for k, v in per_draw.items()}
    with np.errstate(divide="ignore"):  # a window's first_mid is 0: its logarithm is no estimate
        for k in ("first_mid", "last_mid"):
            logs = np.log(samples[k])
            out[f"log_{k}"] = over_replicates(logs, n_draws) if np.all(np.isfinite(logs)) else _draw_estimate([logs])
    profiles, spread = arr["profiles"], arr["spread"]
    out.update(profile=profiles.mean(0).numpy(), profiles=profiles.numpy(), samples=samples, n_draws=n_draws,
               score_profile=arr["centred"].nanmean(dim=(0, 1)).numpy(),
               spread_profile=(spread / spread.pow(2).mean(-1, keepdim=True).sqrt()).mean(0).numpy(),
               unselectable_profile=arr["unsel"].mean(axis=(0, 1)))
    return out


def default_variants(n_layers: int = 4, window: int = 4, alpha: float = 0.5, n_heads: int = 4
                     ) -> dict[str, SynthConfig]:
    """The baseline and one change at a time: name -> :class:`SynthConfig`."""
    base = SynthConfig(n_layers=n_layers, alpha=alpha, n_heads=n_heads)
    return {
        "baseline": base,
        "no causal mask": replace(base, mask="complete"),
        f"window w = {window}": replace(base, mask="one_sided", window=window),
        "RMSNorm": replace(base, norm="rmsnorm"),
        "projection only": replace(base, norm="projection"),
        "no norm": replace(base, norm="none"),
        "no residual (alpha = 1)": replace(base, alpha=1.0),
        "RoPE": replace(base, rope=True),
        f"depth {2 * n_layers}": replace(base, n_layers=2 * n_layers),
    }


def synthesis_experiment(variants: dict[str, SynthConfig], **kwargs) -> dict[str, dict]:
    """:func:`measure` of every variant on the same weights and inputs: ``{name: measurements}``."""
    max_layers = max(c.n_layers for c in variants.values())
    return {name: measure(cfg, max_layers=max_layers, **kwargs) for name, cfg in variants.items()}


def cesaro_collapse_rate(alpha: float) -> float:
    r"""The rate of :math:`N^H \to \mathbf 1 e_1^\top`: the second eigenvalue :math:`1 - \alpha/2`
    of :math:`N = (1-\alpha)I + \alpha M` (the eigenvalues of the Cesàro matrix :math:`M` are
    :math:`1, 1/2, \dots, 1/L`). Rank collapse onto the first token at this rate per layer."""
    alpha = check_float("alpha", alpha, low=0.0, high=1.0)
    return 1.0 - alpha / 2.0


def paired_change(variant: dict, baseline: dict, key: str, *, log: bool = False) -> DrawEstimate:
    """The change of ``key`` from ``baseline`` to ``variant`` (two :func:`measure` results on the
    same weights and inputs), paired by replicate: an estimate over the weight draws
    (:func:`~attention_geometry.draws.over_draws`) of the differences of the values, or of their
    logarithms with ``log=True`` (for ratios such as ``last_mid``). With one draw the pairs are its
    sequences, and the estimate is over them."""
    a, b = variant["samples"][key], baseline["samples"][key]
    if log:
        a, b = np.log(a), np.log(b)
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return over_replicates(diff, baseline.get("n_draws", 1))


def cesaro_relative_collapse(L: int, alpha: float, depths: Sequence[int], d: int = 16, seed: int = 0) -> np.ndarray:
    r""":math:`\mu(N^H X)/\lVert N^H X\rVert_F` for each depth ``H`` in ``depths``: ``(len(depths),)``.

    ``N = (1 - alpha) I + alpha M`` (:func:`~attention_geometry.cesaro.residual_cesaro_matrix`) is the
    layer map of uniform causal attention with identity values and residual weight ``alpha``;
    ``X: (L, d)`` Gaussian (seeded). Decays like :math:`(1-\alpha/2)^H` (:func:`cesaro_collapse_rate`)."""
    from .cesaro import residual_cesaro_matrix

    X = as_generator("seed", seed).standard_normal((check_int("L", L, low=2), check_int("d", d, low=1)))
    Nmat = residual_cesaro_matrix(L, alpha)
    out, Y, done = [], X, 0
    for H in sorted(int(h) for h in depths):
        Y = np.linalg.matrix_power(Nmat, H - done) @ Y
        done = H
        out.append(np.linalg.norm(Y - Y.mean(0)) / np.linalg.norm(Y))
    return np.array(out)


def uniformity_over_scale(norms: Sequence[str], scales: Sequence[float], *, d: int = 32, n: int = 64, batch: int = 64,
                          n_layers: int = 4, n_heads: int = 4, seed: int = 0, n_draws: int = 1) -> tuple[dict, dict]:
    """How uniform attention is at initialisation, against the weight scale, for each norm.

    Returns ``(entropy, score_sd)``: ``{norm: [estimate per scale]}`` -- the last layer's mean
    attention entropy over its maximum (1: uniform) and the first layer's score standard deviation,
    over ``batch`` sequences spread over ``n_draws`` draws of the weights (no Jacobians), estimates
    over the draws (:func:`~attention_geometry.draws.over_draws`). The same draws at every scale and
    norm, scaled: the norms and scales can be compared draw by draw
    (:func:`~attention_geometry.draws.draw_difference`)."""
    seed = check_int("seed", seed, low=0)
    n_draws = check_int("n_draws", n_draws, low=1, high=check_int("batch", batch, low=2))
    X0 = synth_inputs(batch, n, d, 0.5, generator=seed + 1)
    ent, sd = {}, {}
    for norm in norms:
        cfg = SynthConfig(norm=norm, n_layers=n_layers, n_heads=n_heads).check()
        ent[norm], sd[norm] = [], []
        for scale in scales:
            generator, rows = as_torch_generator("seed", seed), draw_slices(batch, n_draws)
            draws = [init_weights(d, n_layers, generator=generator, scale=scale) for _ in rows]
            with torch.no_grad():
                _, S, _ = decoder_forward(X0, draws[0] if n_draws == 1 else _per_row(draws, rows), cfg)
            last, first = S[:, -1], S[:, 0]
            A = torch.softmax(last, dim=-1)
            n_vis = torch.isfinite(last).sum(-1).clamp_min(2).to(A.dtype)
            e = (-(A * torch.log(A.clamp_min(1e-300))).sum(-1) / torch.log(n_vis))[..., 1:].mean((-2, -1)).numpy()
            s = _finite_std(first).numpy()
            ent[norm].append(over_draws([e[r] for r in rows]))
            sd[norm].append(over_draws([s[r] for r in rows]))
    return ent, sd


def uniform_gram(L: int, n_layers: int, c: float, *, normalised: bool) -> np.ndarray:
    r"""``(L, L)``: the large-width Gram matrix (over :math:`d`) of the tokens after ``n_layers``
    layers of uniform causal averaging :math:`X \leftarrow M\,\mathrm{norm}(X)`, for inputs whose Gram
    matrix over :math:`d` is :math:`c\,\mathbf 1\mathbf 1^\top + (1-c) I` (Kim et al.'s inputs,
    :prf:ref:`asm-rec-lln`). ``normalised``: each layer's norm is LayerNorm's scaling, which divides
    token :math:`i` by :math:`\sqrt{G_{ii}}`; otherwise no norm, and the Gram matrix is
    :math:`c\,\mathbf 1\mathbf 1^\top + (1-c) M^\ell M^{\ell\top}` (since :math:`M\mathbf 1 = \mathbf 1`)."""
    L = check_int("L", L, low=2)
    n_layers = check_int("n_layers", n_layers, low=0)
    c = check_float("c", c, low=0.0, high=1.0, high_open=True)
    check_bool("normalised", normalised)
    from .cesaro import cesaro_matrix

    M = cesaro_matrix(L)
    G = c + (1.0 - c) * np.eye(L)
    for _ in range(n_layers):
        if normalised:
            s = 1.0 / np.sqrt(np.diag(G))
            G = s[:, None] * G * s[None, :]
        G = M @ G @ M.T
    return G


def uniform_scores(L: int, n_layers: int, c: float, *, normalised: bool) -> np.ndarray:
    r"""``(L, L)``: the scores over :math:`\sqrt d` of the layer after ``n_layers`` layers of
    :func:`uniform_gram`, with identity query and key weights: :math:`\mathrm{norm}(G)`, the cosines
    :math:`G_{ij}/\sqrt{G_{ii}G_{jj}}` with the norm, :math:`G_{ij}` without. Query :math:`i` sees
    keys :math:`j \le i` (the rest of the row is meaningless)."""
    G = uniform_gram(L, n_layers, c, normalised=normalised)
    if not normalised:
        return G
    s = 1.0 / np.sqrt(np.diag(G))
    return s[:, None] * G * s[None, :]


def gaussian_unselectable(n_keys: int, d_h: int, n_sets: int, seed: int) -> Estimate:
    """The Gaussian yardstick of ``unselectable``: the fraction of ``n_sets`` sets of ``n_keys``
    i.i.d. Gaussian keys in ``d_h`` dimensions with a key that never wins an argmax, with its
    binomial standard error. With ``n_keys <= d_h + 1`` it is 0: such keys are almost surely
    affinely independent, each a vertex of their hull."""
    from .selectability import selectability_grid
    from .stats import proportion_estimate

    n_sets = check_int("n_sets", n_sets, low=1)
    frac = float(selectability_grid([check_int("n_keys", n_keys, low=1)], [check_int("d_h", d_h, low=1)],
                                    n_sets, as_generator("seed", check_int("seed", seed, low=0)))["any"][0, 0])
    return proportion_estimate(round(frac * n_sets), n_sets)


def effective_alpha(alpha: float, gain: npt.ArrayLike) -> np.ndarray:
    r"""The weight of attention in :math:`X \leftarrow (1-\alpha)X + \alpha B` measured against the
    stream: :math:`\alpha g / ((1-\alpha) + \alpha g)` with :math:`g = \lVert B\rVert_F/\lVert X\rVert_F`
    the branch's gain. With :math:`g = 1` it is :math:`\alpha`; a pre-norm branch has the norm's scale, not
    the stream's, so :math:`g` and this weight depend on the norm."""
    alpha = check_float("alpha", alpha, low=0.0, high=1.0, low_open=True)
    g = np.asarray(gain, dtype=float)
    return alpha * g / ((1 - alpha) + alpha * g)


def effective_residual(cfg: SynthConfig, *, d: int = 32, n: int = 64, batch: int = 64, anisotropy: float = 0.5,
                       seed: int = 0, n_draws: int = 8, max_layers: int | None = None) -> dict:
    r"""The branch gains of the decoder ``cfg`` layer by layer and what they do to collapse, on the weights
    and inputs of :func:`measure` (same ``seed``, ``n_draws``, ``max_layers``). Per draw (the replicate):
    ``gain`` and ``alpha_eff`` (:func:`effective_alpha`), each a list of ``n_layers`` estimates;
    ``mu_rel`` the decoder's relative collapse; ``mu_nominal`` that of :math:`N(\alpha)^H X^{(0)}`
    (Prop. 9.1's operator at the nominal weight), ``mu_effective`` that of
    :math:`N(\alpha_H)\cdots N(\alpha_1) X^{(0)}` with each sequence's effective weights; ``skip``
    the weight :math:`\prod_\ell (1-\alpha_\ell)` of the residual-only path (nominal:
    :math:`(1-\alpha)^H`)."""
    from .cesaro import residual_cesaro_matrix

    cfg.check()
    n_draws = check_int("n_draws", n_draws, low=1)
    check_int("batch", batch, low=n_draws)
    generator = as_torch_generator("seed", check_int("seed", seed, low=0))
    X0 = synth_inputs(batch, n, d, anisotropy, generator=seed + 1)
    draws = [init_weights(d, max(cfg.n_layers, max_layers or 0), generator=generator) for _ in range(n_draws)]
    rows = draw_slices(batch, n_draws)
    one = replace(cfg, n_layers=1)

    def rel(X):
        return (mu(X) / torch.linalg.vector_norm(X, dim=(-2, -1))).numpy()

    out = {k: [] for k in ("gain", "alpha_eff", "mu_rel", "mu_nominal", "mu_effective", "skip")}
    N_nominal = torch.as_tensor(np.linalg.matrix_power(residual_cesaro_matrix(n, cfg.alpha), cfg.n_layers))
    for W, r in zip(draws, rows):
        X, Y, gains = X0[r], X0[r], []
        with torch.no_grad():
            for layer in W[: cfg.n_layers]:
                nxt = decoder_forward(X, [layer], one)[0]
                branch = (nxt - (1 - cfg.alpha) * X) / cfg.alpha
                g = (torch.linalg.vector_norm(branch, dim=(-2, -1)) / torch.linalg.vector_norm(X, dim=(-2, -1))).numpy()
                a = effective_alpha(cfg.alpha, g)
                Y = torch.stack([torch.as_tensor(residual_cesaro_matrix(n, float(ai))) for ai in a]) @ Y
                gains.append(g)
                X = nxt
        gains = np.stack(gains, -1)  # (sequences, layers)
        alphas = effective_alpha(cfg.alpha, gains)
        for k, v in (("gain", gains), ("alpha_eff", alphas), ("mu_rel", rel(X)), ("mu_nominal", rel(N_nominal @ X0[r])),
                     ("mu_effective", rel(Y)), ("skip", np.prod(1 - alphas, -1))):
            out[k].append(v)
    res = {k: _draw_estimate(out[k]) for k in ("mu_rel", "mu_nominal", "mu_effective", "skip")}
    res.update({k: [_draw_estimate([v[:, layer] for v in out[k]]) for layer in range(cfg.n_layers)]
                for k in ("gain", "alpha_eff")})
    res["skip_samples"] = np.array([v.mean() for v in out["skip"]])
    return res


#: The responses of a designed sweep (:func:`design_responses`), each a per-draw mean: Kim et al.'s
#: score recency over visible keys, Wu et al.'s relative collapse, Brody et al.'s unselectable key
#: sets, and Chowdhury's last-token spike (the logarithm of the draw's mean last/middle) and path
#: primacy (the first input's share of the influence profile: 0 where a window keeps it out of reach).
DESIGN_RESPONSES = ("rp_visible", "mu_rel", "unselectable", "log_last_mid", "first_share")


def design_responses(grid: Sequence[Sequence], cell: Callable[..., tuple[SynthConfig, int]], *, n: int = 64,
                     batch: int = 2, jac_batch: int = 2, anisotropy: float = 0.5, seed: int = 0, n_draws: int = 8,
                     store: CheckpointStore | None = None, name: str = "design", chunk: int = 4,
                     progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    r"""A factorial design over the decoder's switches, replicated over weight draws: for each
    response of :data:`DESIGN_RESPONSES`, the per-draw cell means ``(n_draws, len(grid[0]), ...)``,
    the input of :func:`~attention_geometry.factorial.factorial_effects`.

    ``grid``: the levels of each factor; ``cell(*levels) -> (SynthConfig, d)``: the decoder and its
    width at one cell. Each draw of the weights gets ``batch`` input sequences (``jac_batch`` of them
    with exact Jacobians). The draws are measured about ``chunk`` at a time (:func:`measure` with
    ``n_draws``: one batch through all of them), each group from its own stream, seeded by ``seed``,
    the group and the width's rank: within a width every cell sees the same weights (drawn for the
    deepest cell; a shallower one uses the first layers) and inputs in draw ``i``, so that a draw is a
    block; draws of different groups or widths are independent. Each (cell, group) is one item of
    :func:`~attention_geometry.checkpoint.resumable_map` under ``name``, keyed by every setting, so
    that an interrupted run resumes."""
    import itertools

    n_draws = check_int("n_draws", n_draws, low=2)
    seed = check_int("seed", seed, low=0)
    check_int("batch", batch, low=check_int("jac_batch", jac_batch, low=1))
    configs = [cell(*c) for c in itertools.product(*grid)]
    for cfg, d in configs:
        cfg.check()
        check_int("d", d, low=2)
    max_layers = max(cfg.n_layers for cfg, _ in configs)
    widths = sorted({d for _, d in configs})
    groups = draw_slices(n_draws, -(-n_draws // check_int("chunk", chunk, low=2)))  # each of 2 draws or more

    def one(item: tuple[int, int]) -> np.ndarray:
        (cfg, d), g = configs[item[0]], item[1]
        k = groups[g].stop - groups[g].start
        stream = int(np.random.SeedSequence([seed, g, widths.index(d)]).generate_state(1)[0])
        m = measure(cfg, d=d, n=n, batch=batch * k, jac_batch=jac_batch * k, anisotropy=anisotropy,
                    seed=stream, n_draws=k, max_layers=max_layers)
        return np.array([m[r].draw_means for r in DESIGN_RESPONSES]).T  # (k, responses)

    key = {"cells": [repr(c) for c in configs], "n": n, "batch": batch, "jac_batch": jac_batch,
           "anisotropy": anisotropy, "seed": seed, "n_draws": n_draws, "chunk": chunk}
    items = [(c, g) for c in range(len(configs)) for g in range(len(groups))]
    done = resumable_map(one, items, store=store, name=name, key=key, progress=progress)
    per_cell = np.stack([np.concatenate(done[c * len(groups):(c + 1) * len(groups)]) for c in range(len(configs))], 1)
    shape = (n_draws, *(len(levels) for levels in grid))
    return {r: per_cell[:, :, j].reshape(shape) for j, r in enumerate(DESIGN_RESPONSES)}
