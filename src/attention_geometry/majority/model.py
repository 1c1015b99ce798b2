r"""The model of the majority task: the norm in front of attention and the one-layer
transformer, on token sequences (the reference) and on count vectors (what training uses).

``S`` seeds on a leading axis, ``N`` sequences, ``n`` positions, ``d`` width, ``C`` classes.
"""

import math
from typing import NamedTuple, Sequence

import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F

from .._checks import as_torch_generator, check_choice, check_int, fail, shape_of
from ..layernorm import normalise

NORM_VARIANTS = ("layernorm", "rmsnorm", "original_code")


def _check_variant(norm):
    return check_choice("norm", norm, NORM_VARIANTS)


def attention_norm(x: torch.Tensor, norm: str) -> torch.Tensor:
    """The norm in front of attention, epsilon 0 as in the original. ``x: (..., d)`` -> ``(..., d)``.

    ``"layernorm"``: norm sqrt(d), orthogonal to 1; ``"rmsnorm"``: norm sqrt(d);
    ``"original_code"``: norm 1/sqrt(d) (see the module docstring); all through
    :func:`~attention_geometry.layernorm.normalise`.
    """
    _check_variant(norm)
    if norm == "original_code":  # the original code's normalize(x) / dim**0.5
        return normalise(x, "rmsnorm", radius=1.0 / math.sqrt(x.shape[-1]))
    return normalise(x, norm)


def _ln_affine(x, gamma, beta):
    # the feed-forward LayerNorm (epsilon 0) with its gain and bias, per seed: gamma, beta (S, d)
    shape = (gamma.shape[0],) + (1,) * (x.ndim - 2) + (gamma.shape[-1],)
    return normalise(x, "layernorm") * gamma.view(shape) + beta.view(shape)


def _uniform(shape, bound, g):
    return (torch.rand(shape, generator=g) * 2 - 1) * bound


def init_majority_params(n_classes: int, d: int,
                         generators: Sequence[torch.Generator | int]) -> dict[str, torch.Tensor]:
    """Initial parameters of ``S = len(generators)`` models, stacked on axis 0, as PyTorch
    initialises the original's modules.

    ``E: (S, C, d)`` ~ N(0, 1) (``nn.Embedding``); ``W_Q, W_K, W_V: (S, d, d)``
    from one Xavier-uniform ``(3d, d)`` matrix (``in_proj_weight``);
    ``W_O: (S, d, d)`` ~ U(±1/sqrt d), ``b_O`` = 0; ``W_1, W_2: (S, d, d)`` and
    ``b_1, b_2: (S, d)`` ~ U(±1/sqrt d) (``nn.Linear``); the feed-forward
    LayerNorm's ``gamma`` = 1, ``beta`` = 0. Each model draws from its own generator.
    """
    check_int("n_classes", n_classes, low=2)
    check_int("d", d, low=2)
    if len(generators) == 0:
        raise fail("generators", generators, "at least one torch.Generator", "is empty")
    per_seed = []
    for g in (as_torch_generator("generators[i]", g) for g in generators):
        p = {"E": torch.randn(n_classes, d, generator=g)}
        in_proj = _uniform((3 * d, d), math.sqrt(6.0 / (4 * d)), g)
        p["W_Q"], p["W_K"], p["W_V"] = in_proj.chunk(3)
        p["W_O"], p["b_O"] = _uniform((d, d), 1 / math.sqrt(d), g), torch.zeros(d)
        p["W_1"], p["b_1"] = _uniform((d, d), 1 / math.sqrt(d), g), _uniform((d,), 1 / math.sqrt(d), g)
        p["W_2"], p["b_2"] = _uniform((d, d), 1 / math.sqrt(d), g), _uniform((d,), 1 / math.sqrt(d), g)
        p["gamma"], p["beta"] = torch.ones(d), torch.zeros(d)
        per_seed.append(p)
    return {k: torch.stack([p[k] for p in per_seed]).contiguous().requires_grad_() for k in per_seed[0]}


def _linear(x, w, b=None):
    """``x W^T (+ b)`` per seed: ``x: (S, ..., k)``, ``w: (S, m, k)``, ``b: (S, m)`` -> ``(S, ..., m)``."""
    S = x.shape[0]
    flat = x.reshape(S, -1, x.shape[-1])
    y = torch.bmm(flat, w.transpose(-1, -2)) if b is None else torch.baddbmm(b[:, None], flat, w.transpose(-1, -2))
    return y.view(*x.shape[:-1], w.shape[1])


def _feed_forward(params, h):
    z = F.relu(_linear(_ln_affine(h, params["gamma"], params["beta"]), params["W_1"], params["b_1"]))
    return h + _linear(z, params["W_2"], params["b_2"])


class MajorityForward(NamedTuple):
    logits: torch.Tensor  # (S, N, n, C)
    attention: torch.Tensor  # (S, N, n, n), rows sum to 1
    normed: torch.Tensor  # (S, N, n, d), the attention's input N(x)


def majority_forward(params: dict, tokens: torch.Tensor, norm: str) -> MajorityForward:
    """Forward pass of ``S`` models on their own token sequences ``tokens: (S, N, n)`` (the reference)."""
    _check_variant(norm)
    E = params["E"]
    S, C, d = E.shape
    if tokens.ndim != 3 or tokens.shape[0] != S:
        raise fail("tokens", shape_of(tokens, "a tensor"), f"(S={S}, N, n)", "has the wrong shape")
    x = _linear(F.one_hot(tokens, C).to(E.dtype), E.transpose(-1, -2))  # (S, N, n, d)
    nx = attention_norm(x, norm)
    q = _linear(nx, params["W_Q"] / math.sqrt(d))
    k, v = _linear(nx, params["W_K"]), _linear(nx, params["W_V"])
    att = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
    h = x + _linear(att @ v, params["W_O"], params["b_O"])
    return MajorityForward(_linear(_feed_forward(params, h), E), att, nx)


class CountsForward(NamedTuple):
    logits: torch.Tensor  # (S, N, C, C): logits at a position holding class a (axis 2)
    scores: torch.Tensor  # (S, C, C): s_ab, shared by all sequences
    normed: torch.Tensor  # (S, C, d): N(E_c), the attention's input for each class


def _attention_parts(params, norm):
    """Per seed: the normed embeddings ``(S, C, d)``, the scores ``s_ab`` ``(S, C, C)``, the
    row-shifted ``exp(s_ab)`` and ``W_O W_V N(E_b)`` ``(S, C, d)``."""
    E = params["E"]
    d = E.shape[-1]
    nx = attention_norm(E, norm)  # (S, C, d)
    s = _linear(nx, params["W_Q"] / math.sqrt(d)) @ _linear(nx, params["W_K"]).transpose(-1, -2)
    w = torch.exp(s - s.amax(-1, keepdim=True))
    return nx, s, w, _linear(_linear(nx, params["W_V"]), params["W_O"])


def _attention_output(m, w, value, pairs=None):
    """``sum_b A_ab W_O W_V N(E_b)`` for every sequence and query class, ``(S, N, C, d)``;
    with ``pairs: (S, P)`` (flat indices ``n * C + a``) only for those, ``(S, P, d)``.

    A ratio of two products of the counts ``m: (S, N, C)``, so the ``(N, C, C)``
    attention is never formed."""
    S, N, C = m.shape
    d = value.shape[-1]
    num = m @ (w[..., None] * value[:, None]).transpose(1, 2).reshape(S, C, C * d)  # (S, N, C*d)
    den = m @ w.transpose(-1, -2)  # (S, N, C)
    if pairs is None:
        return num.view(S, N, C, d) / den[..., None]
    num = num.view(S, N * C, d).gather(1, pairs[..., None].expand(-1, -1, d))
    return num / den.view(S, N * C).gather(1, pairs)[..., None]


def _present_pairs(m):
    """The (sequence, class) pairs with a non-zero count, as flat indices ``(S, P)``
    (padded with index 0), and their counts ``(S, P)`` (0 for the padding)."""
    S = m.shape[0]
    present = (m > 0).reshape(S, -1)
    n_present = present.sum(1)
    P = int(n_present.max())
    pos = torch.where(present, present.cumsum(1) - 1, P)
    flat = torch.arange(present.shape[1]).expand(S, -1)
    pairs = torch.zeros(S, P + 1, dtype=torch.long).scatter_(1, pos, flat)[:, :P]
    weight = m.reshape(S, -1).gather(1, pairs) * (torch.arange(P) < n_present[:, None])
    return pairs, weight


def majority_forward_counts(params: dict, counts: torch.Tensor, norm: str) -> CountsForward:
    r"""The model of :func:`majority_forward` on count vectors ``counts: (S, N, C)``.

    Every position holding class :math:`a` computes the same output; the scores
    :math:`s_{ab} = (W_Q N(E_a)) \cdot (W_K N(E_b))/\sqrt d` are shared by all
    sequences, and the attention of a class-:math:`a` position on all positions
    of class :math:`b` is, in total, :math:`A_{ab} = m_b e^{s_{ab}} / \sum_c m_c e^{s_{ac}}`.
    Logits are computed for every class :math:`a`, present in the sequence or not.
    """
    _check_variant(norm)
    E = params["E"]
    S, C, d = E.shape
    if counts.ndim != 3 or counts.shape[0] != S or counts.shape[2] != C:
        raise fail("counts", shape_of(counts, "a tensor"), f"(S={S}, N, C={C})", "has the wrong shape")
    nx, s, w, value = _attention_parts(params, norm)
    h = E[:, None] + _attention_output(counts.to(E.dtype), w, value) + params["b_O"][:, None, None]
    return CountsForward(_linear(_feed_forward(params, h), E), s, nx)


def majority_loss(params: dict, counts: torch.Tensor, labels: torch.Tensor, norm: str) -> torch.Tensor:
    """Mean cross-entropy over all positions, per seed ``(S,)``: the training loss.

    The same number as from :func:`majority_forward_counts`, but the feed-forward
    layer and the read-out run only on the (sequence, class) pairs that occur
    (on average 9 of the 20 classes in the original's data), weighted by their counts.
    """
    E = params["E"]
    S, C, d = E.shape
    m = counts.to(E.dtype)
    _, _, w, value = _attention_parts(params, norm)
    pairs, weight = _present_pairs(m)
    cls = pairs % C
    h = _attention_output(m, w, value, pairs) + E.gather(1, cls[..., None].expand(-1, -1, d)) + params["b_O"][:, None]
    logits = _linear(_feed_forward(params, h), E)  # (S, P, C)
    target = labels.gather(1, pairs // C)
    ce = F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), reduction="none").view(S, -1)
    return (ce * weight).sum(1) / m.sum((1, 2))


def value_path_outputs(params: dict, counts: torch.Tensor, norm: str) -> tuple[torch.Tensor, torch.Tensor]:
    r"""What the value path adds to the residual stream, :math:`W_O \sum_b A_{ab} W_V N(E_b)`, at every
    (sequence, class) pair that occurs in ``counts: (S, N, C)``: ``(S, P, d)``, with the pairs' counts
    ``(S, P)`` as weights (0 for padding). Under LayerNorm every :math:`N(E_b)` lies in
    :math:`\mathcal H`, so these outputs span at most :math:`d - 1` dimensions; under the other
    variants up to :math:`d`."""
    _check_variant(norm)
    m = counts.to(params["E"].dtype)
    _, _, w, value = _attention_parts(params, norm)
    pairs, weight = _present_pairs(m)
    return _attention_output(m, w, value, pairs), weight


def value_spectrum(outputs: npt.ArrayLike, weights: npt.ArrayLike) -> np.ndarray:
    """The eigenvalues, largest first, of the weighted covariance of the value-path outputs
    ``outputs: (S, P, d)`` over their pairs (``weights: (S, P)``, e.g. from ``value_path_outputs``),
    in float64: ``(S, d)``. Under LayerNorm at most ``d - 1`` of them are above rounding."""
    x = np.asarray(outputs, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if x.ndim != 3 or w.shape != x.shape[:2]:
        raise fail("weights", w.shape, f"(S, P) matching outputs {x.shape[:2]}", "has the wrong shape")
    w = w / w.sum(1, keepdims=True)
    centred = x - (w[..., None] * x).sum(1, keepdims=True)
    cov = np.einsum("sp,spi,spj->sij", w, centred, centred)
    return np.linalg.eigvalsh(cov)[:, ::-1].copy()


def effective_queries(params: dict, normed: torch.Tensor) -> torch.Tensor:
    """u = W_K^T W_Q n for every input (eq. ``eq-ua-effective-query``). ``normed: (S, ..., d)`` -> same shape.

    The scores of a query input ``n`` are ``u . n_j / sqrt(d)``.
    """
    M = params["W_K"].transpose(-1, -2) @ params["W_Q"]  # (S, d, d)
    S, d = normed.shape[0], normed.shape[-1]
    return (normed.reshape(S, -1, d) @ M.transpose(-1, -2)).view(normed.shape)


def angle_to_ones(u: torch.Tensor) -> torch.Tensor:
    """Angle in degrees between each ``u: (..., d)`` and the line through 1, in [0, 90].

    The original logs ``90 - |angle(u, 1) - 90|``, the same quantity: a query
    along -1 attends uniformly as well as one along +1.
    """
    d = u.shape[-1]
    cos = u.sum(-1).abs() / (u.norm(dim=-1) * math.sqrt(d)).clamp_min(1e-30)
    return torch.rad2deg(torch.arccos(cos.clamp(0.0, 1.0)))
