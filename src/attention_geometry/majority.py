r"""The majority task and a one-layer, one-head transformer trained on it.

**Task.** A sequence :math:`t_1, \dots, t_n` of tokens from :math:`C` classes,
drawn uniformly and independently, then adjusted so that the majority class
leads the runner-up by at least ``min_margin`` occurrences (see
:func:`majority_data`); the target at *every* position is the majority class
:math:`\arg\max_c \#\{i : t_i = c\}`.

**Model.** A pre-norm transformer with one layer and one head, no positional
encoding, bidirectional attention and tied embeddings
(:math:`E \in \mathbb R^{C \times d}` embeds the tokens and reads out the
logits):

.. math::

    x_i &= E_{t_i}, \qquad n_i = N(x_i), \\
    s_{ij} &= (W_Q n_i) \cdot (W_K n_j) / \sqrt{d}
          = (W_K^\top W_Q n_i) \cdot n_j / \sqrt d, \\
    h_i &= x_i + W_O \textstyle\sum_j \mathrm{softmax}_j(s_{ij})\, W_V n_j, \\
    g_i &= h_i + \mathrm{MLP}(\mathrm{LN}(h_i)), \qquad
    \mathrm{logits}_i = E\, \mathrm{LN}(g_i).

Only the norm :math:`N` in front of attention varies (the MLP's and the final
norm are LayerNorm in every variant, so that the comparison isolates what the
attention sees); no norm has learned gain or bias:

- ``"layernorm"``: :math:`N(x) = \sqrt d\, Px/\|Px\|` with
  :math:`P = I - \mathbf 1\mathbf 1^\top/d` -- projection and scaling;
- ``"rmsnorm"``: :math:`N(x) = \sqrt d\, x/\|x\|` -- scaling to the same
  norm without projection (the fair control);
- ``"original_code"``: :math:`N(x) = x/(\sqrt d\, \|x\|)` -- divides by
  :math:`\sqrt d` where ``"rmsnorm"`` multiplies, so every attention logit
  is :math:`d^2` times smaller than with ``"rmsnorm"``.

:math:`u_i = W_K^\top W_Q n_i` is the *effective query*: the scores of
position :math:`i` are :math:`u_i \cdot n_j / \sqrt d`. After LayerNorm every
:math:`n_j \perp \mathbf 1`, so :math:`u_i \parallel \mathbf 1` attends
uniformly.

**Counts instead of tokens.** Without positional encoding a sequence
matters only through its class counts, and all positions of one class compute
the same output; :func:`majority_forward_counts` evaluates the model on count
vectors with ``C`` queries and keys instead of ``n`` (exactly the same
function; :func:`majority_forward` is the plain token-level reference).

**Seeds in parallel.** All parameters carry a leading seed axis ``S``; one
forward pass trains ``S`` independent models (each seed has its own data and
initialisation). Adam is elementwise and the total loss is the sum of the
per-seed losses, so this is exactly ``S`` separate trainings, only faster.
Shapes: ``S`` seeds, ``N`` sequences, ``n`` positions, ``d`` width, ``C``
classes.
"""

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ._checks import check_choice, check_int, fail, torch_threads
from .layernorm import normalise

__all__ = [
    "NORM_VARIANTS",
    "MajorityRun",
    "majority_labels",
    "majority_counts",
    "majority_margin",
    "majority_data",
    "attention_norm",
    "init_majority_params",
    "majority_forward",
    "majority_forward_counts",
    "effective_queries",
    "angle_to_ones",
    "train_majority",
    "train_majority_per_seed",
    "steps_to_reach",
]

NORM_VARIANTS = ("layernorm", "rmsnorm", "original_code")
_EPS = 1e-6


def _check_int(name, value, low, high=None):
    return check_int(name, value, low=low, high=high)


def _check_variant(norm):
    return check_choice("norm", norm, NORM_VARIANTS)


# --------------------------------------------------------------------- data


def majority_labels(tokens: torch.Tensor, n_classes: int) -> torch.Tensor:
    """The majority class of each sequence. ``tokens: (..., n)`` -> ``(...,)``.

    Ties go to the smallest class index (``majority_data`` never produces ties).
    """
    _check_int("n_classes", n_classes, 2)
    counts = F.one_hot(tokens, n_classes).sum(-2)
    return counts.argmax(-1)


def majority_counts(tokens: torch.Tensor, n_classes: int) -> torch.Tensor:
    """How often each class occurs. ``tokens: (..., n)`` -> ``counts: (..., C)`` (int64)."""
    _check_int("n_classes", n_classes, 2)
    return F.one_hot(tokens, n_classes).sum(-2)


def majority_margin(counts: torch.Tensor) -> torch.Tensor:
    """Majority count minus runner-up count. ``counts: (..., C)`` -> ``(...,)``."""
    top2 = counts.topk(2, dim=-1).values
    return top2[..., 0] - top2[..., 1]


def majority_data(
    n_classes: int, length: int, n_sequences: int, generator: torch.Generator, min_margin: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random sequences whose majority class leads the runner-up by ``min_margin``.

    Returns ``tokens: (n_sequences, length)`` (int64 in ``[0, n_classes)``) and
    ``labels: (n_sequences,)``. Tokens are drawn uniformly; then, in every
    sequence whose margin falls short, randomly chosen tokens of the other
    classes are turned into the leading class (ties for the lead broken at
    random) until the margin is reached. Each replacement raises the leader's
    count by one and lowers no other count by less than zero, so the margin
    grows by at least one per replacement.
    """
    _check_int("n_classes", n_classes, 2, 10_000)
    _check_int("length", length, 1, 100_000)
    _check_int("n_sequences", n_sequences, 1)
    _check_int("min_margin", min_margin, 1, length)
    tokens = torch.randint(n_classes, (n_sequences, length), generator=generator)
    counts = majority_counts(tokens, n_classes)
    jitter = torch.rand(counts.shape, generator=generator) * 0.5  # random tie-break
    lead = (counts + jitter).argmax(-1)
    lead_count = counts.gather(-1, lead[:, None])[:, 0]
    others = counts.scatter(-1, lead[:, None], -1).max(-1).values
    needed = (min_margin - (lead_count - others)).clamp_min(0)
    keys = torch.rand(tokens.shape, generator=generator)
    keys[tokens == lead[:, None]] = 2.0  # never replace the leader's own tokens
    rank = keys.argsort(-1).argsort(-1)
    tokens = torch.where(rank < needed[:, None], lead[:, None], tokens)
    return tokens, lead


# -------------------------------------------------------------------- model


def attention_norm(x: torch.Tensor, norm: str) -> torch.Tensor:
    """The norm in front of attention. ``x: (..., d)`` -> ``(..., d)``.

    ``"layernorm"``: norm sqrt(d), orthogonal to 1; ``"rmsnorm"``: norm
    sqrt(d); ``"original_code"``: norm 1/sqrt(d) (see the module docstring):
    :func:`~attention_geometry.layernorm.normalise` with epsilon 1e-6, as in
    PyTorch's fused kernels.
    """
    _check_variant(norm)
    if norm == "original_code":  # the original code's normalize(x) / dim**0.5
        return normalise(x, "rmsnorm", eps=_EPS, radius=1.0 / math.sqrt(x.shape[-1]))
    return normalise(x, norm, eps=_EPS)


def _layernorm(x):
    return normalise(x, "layernorm", eps=_EPS)


def init_majority_params(
    n_classes: int, d: int, generators: Sequence[torch.Generator]
) -> dict[str, torch.Tensor]:
    """Initial parameters of ``S = len(generators)`` models, stacked on axis 0.

    ``E: (S, C, d)``, ``W_Q, W_K, W_V, W_O: (S, d, d)``, ``W_1: (S, 4d, d)``,
    ``b_1: (S, 4d)``, ``W_2: (S, d, 4d)``, ``b_2: (S, d)``. Gaussian with
    standard deviation 1/sqrt(fan_in); biases zero. Each model draws from its
    own generator, so a model's weights do not depend on the other seeds.
    """
    _check_int("n_classes", n_classes, 2)
    _check_int("d", d, 2)
    if len(generators) == 0:
        raise ValueError("generators is empty; allowed: at least one torch.Generator")
    shapes = {"E": (n_classes, d), "W_Q": (d, d), "W_K": (d, d), "W_V": (d, d),
              "W_O": (d, d), "W_1": (4 * d, d), "W_2": (d, 4 * d)}
    fan_in = {"E": d, "W_1": d, "W_2": 4 * d}
    per_seed = []
    for g in generators:
        p = {k: torch.randn(s, generator=g) / math.sqrt(fan_in.get(k, d)) for k, s in shapes.items()}
        p["b_1"], p["b_2"] = torch.zeros(4 * d), torch.zeros(d)
        per_seed.append(p)
    return {k: torch.stack([p[k] for p in per_seed]).requires_grad_() for k in per_seed[0]}


class MajorityForward(NamedTuple):
    logits: torch.Tensor  # (S, N, n, C)
    attention: torch.Tensor  # (S, N, n, n), rows sum to 1
    normed: torch.Tensor  # (S, N, n, d), the attention's input N(x)


def _linear(x, w, b=None):
    """x W^T (+ b) per seed: ``x: (S, N, n, b)``, ``w: (S, a, b)`` -> ``(S, N, n, a)``.

    One batched matmul per seed over all N n positions (a broadcast matmul
    would run N tiny ones).
    """
    S, N, n, _ = x.shape
    flat = x.reshape(S, N * n, -1)
    y = torch.bmm(flat, w.transpose(-1, -2)) if b is None else torch.baddbmm(b[:, None], flat, w.transpose(-1, -2))
    return y.view(S, N, n, -1)


def majority_forward(params: dict, tokens: torch.Tensor, norm: str) -> MajorityForward:
    """Forward pass of ``S`` models on their own data. ``tokens: (S, N, n)``."""
    _check_variant(norm)
    E = params["E"]
    S, C, d = E.shape
    if tokens.ndim != 3 or tokens.shape[0] != S:
        raise ValueError(f"tokens has shape {tuple(tokens.shape)}; allowed: (S={S}, N, n)")
    # one-hot @ E rather than indexing: its backward is a matmul, not a scatter
    x = _linear(F.one_hot(tokens, C).to(E.dtype), E.transpose(-1, -2))  # (S, N, n, d)
    nx = attention_norm(x, norm)
    q = _linear(nx, params["W_Q"] / math.sqrt(d))  # the 1/sqrt(d) of the scores, applied once
    k, v = _linear(nx, params["W_K"]), _linear(nx, params["W_V"])
    att = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
    h = x + _linear(att @ v, params["W_O"])
    z = F.gelu(_linear(_layernorm(h), params["W_1"], params["b_1"]))
    g = h + _linear(z, params["W_2"], params["b_2"])
    logits = _linear(_layernorm(g), E)
    return MajorityForward(logits, att, nx)


class CountsForward(NamedTuple):
    logits: torch.Tensor  # (S, N, C, C): logits at a position holding class a (axis 2)
    attention: torch.Tensor  # (S, N, C, C): attention of class a on all positions of class b
    normed: torch.Tensor  # (S, C, d): N(E_c), the attention's input for each class


def majority_forward_counts(params: dict, counts: torch.Tensor, norm: str) -> CountsForward:
    r"""The same model as :func:`majority_forward`, on count vectors. ``counts: (S, N, C)``.

    Without positional encoding the model is permutation-equivariant: every
    position holding class :math:`a` computes the same output, and a sequence
    matters only through its counts :math:`m_b`. The scores
    :math:`s_{ab} = (W_Q N(E_a)) \cdot (W_K N(E_b))/\sqrt d` are shared by all
    sequences, and the attention of a class-:math:`a` position on the
    :math:`m_b` positions of class :math:`b` is, in total,

    .. math:: A_{ab} = m_b e^{s_{ab}} / \textstyle\sum_c m_c e^{s_{ac}} .

    So ``C`` queries and ``C`` keys replace ``n`` of each, exactly (up to
    rounding). Rows for classes absent from a sequence are computed but carry
    weight zero in every average.
    """
    _check_variant(norm)
    E = params["E"]
    S, C, d = E.shape
    if counts.ndim != 3 or counts.shape[0] != S or counts.shape[2] != C:
        raise ValueError(f"counts has shape {tuple(counts.shape)}; allowed: (S={S}, N, C={C})")
    nx = attention_norm(E, norm)  # (S, C, d)
    q = nx @ (params["W_Q"] / math.sqrt(d)).transpose(-1, -2)
    k, v = nx @ params["W_K"].transpose(-1, -2), nx @ params["W_V"].transpose(-1, -2)
    s = q @ k.transpose(-1, -2)  # (S, C, C)
    w = torch.exp(s - s.amax(-1, keepdim=True))[:, None] * counts[:, :, None, :].to(E.dtype)
    att = w / w.sum(-1, keepdim=True)  # (S, N, C, C)
    N = counts.shape[1]
    h = E[:, None] + (att.reshape(S, N * C, C) @ (v @ params["W_O"].transpose(-1, -2))).view(S, N, C, d)
    z = F.gelu(_linear(_layernorm(h), params["W_1"], params["b_1"]))
    g = h + _linear(z, params["W_2"], params["b_2"])
    logits = _linear(_layernorm(g), E)
    return CountsForward(logits, att, nx)


def effective_queries(params: dict, normed: torch.Tensor) -> torch.Tensor:
    """u = W_K^T W_Q n for every input. ``normed: (S, ..., d)`` -> same shape.

    The scores of a query input ``n`` are ``u . n_j / sqrt(d)``.
    """
    M = params["W_K"].transpose(-1, -2) @ params["W_Q"]  # (S, d, d)
    S, d = normed.shape[0], normed.shape[-1]
    return (normed.reshape(S, -1, d) @ M.transpose(-1, -2)).view(normed.shape)


def angle_to_ones(u: torch.Tensor) -> torch.Tensor:
    """Angle in degrees between each ``u: (..., d)`` and the line through 1, in [0, 90].

    A query along -1 attends uniformly as well as one along +1, hence the line.
    """
    d = u.shape[-1]
    cos = u.sum(-1).abs() / (u.norm(dim=-1) * math.sqrt(d)).clamp_min(1e-30)
    return torch.rad2deg(torch.arccos(cos.clamp(0.0, 1.0)))


# ----------------------------------------------------------------- training


@dataclass(frozen=True)
class MajorityRun:
    """Curves of ``S`` seeds, recorded at ``steps: (T,)``; every other array is ``(S, T)``.

    ``loss``: training cross-entropy per position, averaged over the steps since
    the previous record (at step 0: the first batch); ``test_loss``,
    ``test_accuracy``: on held-out sequences, over all positions; ``angle``: mean
    over test positions of the angle (degrees) between the effective query and
    the line through 1; ``entropy``: mean attention entropy divided by log n
    (1 = uniform); ``score_scale``: mean over test positions of the largest
    score magnitude the effective query ``u`` can give any key the variant
    produces, ``||u|| ||n|| / sqrt(d)`` (``||Pu|| ||n|| / sqrt(d)`` under
    LayerNorm, whose keys are orthogonal to 1); 0 means uniform attention
    whatever the direction of ``u``.
    """

    norm: str
    seeds: tuple
    steps: np.ndarray
    loss: np.ndarray
    test_loss: np.ndarray
    test_accuracy: np.ndarray
    angle: np.ndarray
    entropy: np.ndarray
    score_scale: np.ndarray


_CURVES = ("loss", "test_loss", "test_accuracy", "angle", "entropy", "score_scale")


def _weighted(values, counts):
    # values (S, N, C) per query class, counts (S, N, C) -> mean over positions, (S,)
    w = counts.to(values.dtype)
    return (values * w).sum(-1).div(w.sum(-1)).mean(-1)


def _counts_loss(out, counts, labels):
    # logits (S, N, C, C) at each query class, labels (S, N) -> per-seed loss (S,)
    S, N, C, _ = out.logits.shape
    target = labels[:, :, None].expand(S, N, C)
    ce = F.cross_entropy(out.logits.reshape(-1, C), target.reshape(-1), reduction="none")
    return _weighted(ce.view(S, N, C), counts)


def _draw(gens, n_classes, length, n, min_margin):
    data = [majority_data(n_classes, length, n, g, min_margin) for g in gens]
    counts = torch.stack([majority_counts(t, n_classes) for t, _ in data])
    return counts, torch.stack([y for _, y in data])


def _validate(norm, seeds, n_classes, length, d, min_margin, batch, n_train, n_test, steps, lr, eval_every):
    _check_variant(norm)
    if len(seeds) == 0:
        raise ValueError("seeds is empty; allowed: a non-empty list of integers")
    for s in seeds:
        _check_int("seed", s, 0, 2**63 - 1)
    _check_int("n_classes", n_classes, 2, 10_000)
    _check_int("length", length, 2, 100_000)
    _check_int("d", d, 2, 4096)
    _check_int("min_margin", min_margin, 1, length)
    if batch is None and n_train is None:
        raise ValueError("batch = None and n_train = None; allowed: at least one of them an integer")
    if batch is not None:
        _check_int("batch", batch, 1)
    if n_train is not None:
        _check_int("n_train", n_train, 1)
    _check_int("n_test", n_test, 1)
    _check_int("steps", steps, 1)
    _check_int("eval_every", eval_every, 1)
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr = {lr!r} is out of range; allowed: a finite number > 0")


def train_majority(
    norm: str,
    seeds: Sequence[int],
    *,
    n_classes: int = 20,
    length: int = 50,
    d: int = 8,
    min_margin: int = 1,
    n_train: int | None = 20_000,
    batch: int | None = 256,
    n_test: int = 1000,
    steps: int = 2000,
    lr: float = 1e-3,
    eval_every: int = 50,
    progress: bool = False,
    threads: int = 1,
) -> MajorityRun:
    """Train one model per seed (all seeds at once) with Adam.

    Data: a fixed training set of ``n_train`` sequences per seed, drawn once;
    every step uses ``batch`` of them drawn at random with replacement, or all
    of them if ``batch`` is None (full batch). With ``n_train=None`` every step
    draws ``batch`` fresh sequences instead. Seed ``s`` draws, from
    ``torch.Generator().manual_seed(s)``, the test set, then the initial
    weights, then the training data, so the same seed gives the same data and
    weights under every norm variant. Curves are recorded at step 0, every
    ``eval_every`` steps and at the end.

    ``threads``: PyTorch intra-op threads during the call (restored after). The
    model is tiny; one thread is fastest on a busy 2-core machine, where
    threads waiting for each other cost far more than they gain.
    """
    _validate(norm, seeds, n_classes, length, d, min_margin, batch, n_train, n_test, steps, lr, eval_every)
    with torch_threads(threads):
        return _train(norm, seeds, n_classes, length, d, min_margin, batch, n_train, n_test, steps, lr,
                      eval_every, progress)


def _train(norm, seeds, n_classes, length, d, min_margin, batch, n_train, n_test, steps, lr, eval_every,
           progress):
    gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
    test = _draw(gens, n_classes, length, n_test, min_margin)
    params = init_majority_params(n_classes, d, gens)
    fixed = None if n_train is None else _draw(gens, n_classes, length, n_train, min_margin)
    opt = torch.optim.Adam(params.values(), lr=lr)
    record = {k: [] for k in ("steps", *_CURVES)}
    iterator = range(steps + 1)
    if progress:
        from tqdm import tqdm

        iterator = tqdm(iterator, desc=f"majority, {norm}", mininterval=1.0)
    running, n_running = 0.0, 0
    for step in iterator:
        if fixed is None:
            counts, labels = _draw(gens, n_classes, length, batch, min_margin)
        elif batch is None:
            counts, labels = fixed
        else:
            idx = torch.stack([torch.randint(n_train, (batch,), generator=g) for g in gens])
            counts, labels = fixed[0].gather(1, idx[..., None].expand(-1, -1, n_classes)), fixed[1].gather(1, idx)
        loss = _counts_loss(majority_forward_counts(params, counts, norm), counts, labels)
        running, n_running = running + loss.detach(), n_running + 1
        if step % eval_every == 0 or step == steps:
            record["steps"].append(step)
            record["loss"].append((running / n_running).numpy().copy())
            running, n_running = 0.0, 0
            _evaluate(params, *test, norm, length, record)
        if step < steps:
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            opt.step()
    arrays = {k: np.asarray(v, dtype=float if k != "steps" else int) for k, v in record.items()}
    return MajorityRun(
        norm=norm, seeds=tuple(int(s) for s in seeds), steps=arrays["steps"],
        **{k: arrays[k].T.copy() for k in _CURVES},
    )


@torch.no_grad()
def _evaluate(params, counts, labels, norm, length, record):
    out = majority_forward_counts(params, counts, norm)
    record["test_loss"].append(_counts_loss(out, counts, labels).numpy())
    correct = (out.logits.argmax(-1) == labels[:, :, None]).float()
    record["test_accuracy"].append(_weighted(correct, counts).numpy())
    u = effective_queries(params, out.normed)  # (S, C, d)
    d = u.shape[-1]
    reach = u - u.mean(-1, keepdim=True) if norm == "layernorm" else u  # keys see only this part
    scale = reach.norm(dim=-1) * out.normed.norm(dim=-1) / math.sqrt(d)
    per_class = {"angle": angle_to_ones(u), "score_scale": scale}
    for key, value in per_class.items():
        record[key].append(_weighted(value[:, None].expand(counts.shape), counts).numpy())
    a, m = out.attention, counts[:, :, None, :].to(out.attention.dtype)
    # a class-b position receives a_b / m_b; m_b = 0 implies a_b = 0
    ent = -(a * torch.log(a.clamp_min(1e-30) / m.clamp_min(1.0))).sum(-1) / math.log(length)
    record["entropy"].append(_weighted(ent, counts).numpy())


def train_majority_per_seed(norm: str, seeds: Sequence[int], **kwargs) -> MajorityRun:
    """Reference: the same training, one seed at a time (a plain loop).

    Gives the same curves as :func:`train_majority` up to float rounding; the
    benchmark times the two against each other.
    """
    runs = [train_majority(norm, [s], **kwargs) for s in seeds]
    return MajorityRun(
        norm=norm, seeds=tuple(int(s) for s in seeds), steps=runs[0].steps,
        **{k: np.concatenate([getattr(r, k) for r in runs]) for k in _CURVES},
    )


def steps_to_reach(steps: np.ndarray, curve: np.ndarray, threshold: float) -> np.ndarray:
    """First recorded step at which ``curve <= threshold``, per seed; NaN if never.

    ``steps: (T,)``, ``curve: (S, T)`` -> ``(S,)`` float.
    """
    curve = np.asarray(curve, dtype=float)
    if curve.ndim != 2 or curve.shape[1] != len(steps):
        raise ValueError(f"curve has shape {curve.shape}; allowed: (S, T={len(steps)})")
    hit = curve <= threshold
    first = np.where(hit.any(1), hit.argmax(1), -1)
    return np.where(first >= 0, np.asarray(steps, dtype=float)[first], np.nan)
