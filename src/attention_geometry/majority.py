r"""The majority task and the one-layer transformer of Brody et al.'s code (chapter 2).

Everything here follows ``majority/majority_exp.py`` of the original
repository (tech-srl/layer_norm_expressivity_role), with the settings of its
``run_with_projection.bash`` / ``run_without_projection.bash`` as the defaults
of :class:`MajoritySetup`; where this module differs, the docstring says so.

**Task** (:func:`partition_majority_data`, the original's ``gen_X``). Integer
partitions of the length :math:`n` into at most :math:`C` parts are enumerated
depth first, each part at least as large as the one before it and the choices
at every level shuffled; a partition is kept when its last (largest) part leads
the one before it by at least ``min_margin``. Each kept partition gives
``per_partition`` sequences: a random permutation of the classes assigns class
:math:`\pi_j` to part :math:`j`. Enumeration stops as soon as the sequences
number more than ``n_sequences`` (100,010 for 100,000). The target at *every*
position is the majority class. The sequences are split 80 / 20 into training
and test sets, stratified by label (:func:`stratified_split`).

**Model** (:func:`majority_forward`; PyTorch's ``TransformerEncoderLayer`` with
``norm_first=True``, one head, ``dim_feedforward = d``, no dropout, epsilon 0,
no positional encoding, tied embeddings :math:`E \in \mathbb R^{C\times d}`):

.. math::

    x_i &= E_{t_i}, \qquad n_i = N(x_i), \\
    s_{ij} &= (W_Q n_i) \cdot (W_K n_j) / \sqrt{d}
          = (W_K^\top W_Q n_i) \cdot n_j / \sqrt d, \\
    h_i &= x_i + W_O \textstyle\sum_j \mathrm{softmax}_j(s_{ij})\, W_V n_j + b_O, \\
    g_i &= h_i + W_2\,\mathrm{ReLU}(W_1\,\mathrm{LN}_{\gamma,\beta}(h_i) + b_1) + b_2, \qquad
    \mathrm{logits}_i = E\, g_i .

The attention has no input bias (the original deletes ``in_proj_bias``); the
LayerNorm before the feed-forward layer keeps its gain :math:`\gamma` and bias
:math:`\beta`; there is no norm before the read-out. Only the norm :math:`N`
in front of attention changes, without parameters in every variant
(:data:`NORM_VARIANTS`, :func:`attention_norm`):

- ``"layernorm"``: :math:`N(x) = \sqrt d\, Px/\|Px\|`, projection and scaling
  (the original's ``WITH_PROJ``);
- ``"rmsnorm"``: :math:`N(x) = \sqrt d\, x/\|x\|`, the same scaling without the
  projection: the fair control (not in the original);
- ``"original_code"``: :math:`N(x) = x/(\sqrt d\, \|x\|)`, the original's
  ``WITHOUT_PROJ`` (``normalize(x) / dim**0.5``): it divides by :math:`\sqrt d`
  where ``"rmsnorm"`` multiplies, so its attention logits are :math:`d^2` and its
  values :math:`d` times smaller.

:math:`u_i = W_K^\top W_Q n_i` is the *effective query* (eq.
``eq-ua-effective-query`` of the book): the scores of position :math:`i` are
:math:`u_i \cdot n_j / \sqrt d`. After LayerNorm every :math:`n_j \perp
\mathbf 1`, so :math:`u_i \parallel \mathbf 1` attends uniformly.

**Counts instead of tokens.** Without positional encoding a sequence matters
only through its class counts, and all positions of one class compute the same
output; :func:`majority_forward_counts` evaluates the model on count vectors with
``C`` queries and keys instead of ``n`` (the same function; the tests check it
against the token-level :func:`majority_forward`).

**Training** (:func:`train_majority`): Adam, the learning rate decaying linearly
from ``lr`` to 0 over ``lr_decay_epochs`` epochs (the original's
``get_linear_schedule_with_warmup(opt, 0, ceil(n_train / batch) * 10000)``),
mini-batches of a fresh permutation of the training set every epoch (the last
one smaller), and a seed stops when its test accuracy reaches
``stop_at_accuracy`` (the original stops at 1.0). All seeds train at once on a
leading axis ``S`` (Adam is elementwise and the total loss is the sum of the
per-seed losses, so this is exactly ``S`` separate trainings).

Shapes: ``S`` seeds, ``N`` sequences, ``n`` positions, ``d`` width, ``C`` classes.
"""

import functools
import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Mapping, NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ._checks import check_choice, check_float, check_int, fail, shape_of, torch_threads
from ._parallel import map_processes, progress_bar
from .checkpoint import CheckpointStore
from .layernorm import normalise

__all__ = [
    "NORM_VARIANTS",
    "MajoritySetup",
    "MajorityRun",
    "majority_labels",
    "majority_counts",
    "majority_margin",
    "partition_majority_data",
    "possible_smallest_parts",
    "counts_to_tokens",
    "stratified_split",
    "majority_dataset",
    "attention_norm",
    "init_majority_params",
    "majority_forward",
    "majority_forward_counts",
    "majority_loss",
    "effective_queries",
    "angle_to_ones",
    "majority_lr",
    "train_majority",
    "train_majority_per_seed",
    "train_majority_groups",
    "run_differences",
    "majority_setup",
    "differences_in_words",
    "ORIGINAL_SEEDS",
    "ORIGINAL_GEOMETRY",
    "geometry_differences",
    "steps_to_reach",
    "confound_share",
    "share_words",
    "uniform_query_check",
    "setup_differences",
    "run_summary",
    "angle_verdict",
    "random_angle_to_ones",
]

NORM_VARIANTS = ("layernorm", "rmsnorm", "original_code")


def _check_variant(norm):
    return check_choice("norm", norm, NORM_VARIANTS)


# --------------------------------------------------------------------- data


def majority_counts(tokens: torch.Tensor, n_classes: int) -> torch.Tensor:
    """How often each class occurs. ``tokens: (..., n)`` -> ``counts: (..., C)`` (int64)."""
    check_int("n_classes", n_classes, low=2)
    return F.one_hot(tokens, n_classes).sum(-2)


def majority_labels(tokens: torch.Tensor, n_classes: int) -> torch.Tensor:
    """The majority class of each sequence. ``tokens: (..., n)`` -> ``(...,)``; ties go to the smallest index."""
    return majority_counts(tokens, n_classes).argmax(-1)


def majority_margin(counts) -> torch.Tensor:
    """Majority count minus runner-up count. ``counts: (..., C)`` -> ``(...,)``."""
    top2 = torch.as_tensor(counts).topk(2, dim=-1).values
    return top2[..., 0] - top2[..., 1]


def _partitions(n: int, smallest: int, slices: int, rng: np.random.Generator):
    """The original's ``partition(n, max_i, slices)``: parts ``>= smallest``, each at
    least the previous one, at most ``slices`` parts (the last takes what is left),
    the choice of each part shuffled. The original recurses through nested
    generators (a partition passes up through every level); this walks the same
    tree with a stack, drawing the same shuffles in the same order."""
    if n == 0:
        yield []
        return
    if slices == 1:
        yield [n]
        return

    def choices(left, low):  # a node's shuffled parts, drawn when the walk first reaches it
        firsts = np.arange(low, left + 1)
        rng.shuffle(firsts)
        return iter(firsts.tolist())

    prefix, stack = [], [(n, slices, choices(n, smallest))]
    while stack:
        left, parts, it = stack[-1]
        i = next(it, None)
        if i is None:
            stack.pop()
            if prefix:
                prefix.pop()
        elif i == left:
            yield [*prefix, i]
        elif parts == 2:
            yield [*prefix, i, left - i]
        else:
            prefix.append(i)
            stack.append((left - i, parts - 1, choices(left - i, i)))


def partition_majority_data(length: int, n_classes: int, n_sequences: int, min_margin: int,
                            rng: np.random.Generator, per_partition: int = 10):
    """The original's ``gen_X`` + ``gen_data``, as counts: ``(counts (N, C) int64, labels (N,) int64)``.

    Partitions of ``length`` (see the module docstring) whose largest part leads
    the next by at least ``min_margin``; ``per_partition`` sequences each, until
    they number more than ``n_sequences`` (or the partitions run out).
    """
    check_int("length", length, low=2, high=10_000)
    check_int("n_classes", n_classes, low=2, high=10_000)
    check_int("n_sequences", n_sequences, low=1)
    check_int("min_margin", min_margin, low=1, high=length)
    check_int("per_partition", per_partition, low=1)
    if not isinstance(rng, np.random.Generator):
        raise fail("rng", rng, "a numpy.random.Generator", "has the wrong type")
    classes = np.tile(np.arange(n_classes), (per_partition, 1))  # permuted() copies: one tile serves all
    perms, parts = [], []
    for part in _partitions(length, 1, min(length, n_classes), rng):
        if len(part) == 1 or part[-1] - part[-2] < min_margin:
            continue
        perms.append(rng.permuted(classes, axis=1)[:, : len(part)])
        parts.append(part)
        if len(parts) * per_partition > n_sequences:
            break
    if not parts:
        raise fail("min_margin", min_margin, f"a margin that some partition of {length} reaches",
                   "leaves no sequence")
    counts = np.zeros((len(parts) * per_partition, n_classes), dtype=np.int64)
    rows = np.arange(per_partition)[:, None]
    for r, (perm, part) in enumerate(zip(perms, parts)):  # part j of the partition goes to class perm[:, j]
        counts[r * per_partition + rows, perm] = part
    labels = np.concatenate([perm[:, -1] for perm in perms])
    return torch.from_numpy(counts), torch.from_numpy(labels)


def possible_smallest_parts(length: int, n_classes: int, min_margin: int) -> int:
    """How many values the smallest part of a kept partition can take (what a full
    enumeration by ``partition_majority_data`` would visit): a smallest part ``s``
    is kept in ``[s, length - s]`` when ``length - 2 s >= min_margin``, and a
    partition with smallest part ``s`` has at least two parts of at least ``s``
    and a largest at least ``min_margin`` above the next, so ``2 s + min_margin <=
    length`` is also necessary: ``s = 1 .. (length - min_margin) // 2``."""
    check_int("length", length, low=2, high=10_000)
    check_int("n_classes", n_classes, low=2, high=10_000)
    check_int("min_margin", min_margin, low=1, high=length)
    return max(0, (length - min_margin) // 2)


def counts_to_tokens(counts) -> torch.Tensor:
    """Token sequences with the given counts, each class in one block (the original's
    layout; order does not matter without positions). ``(N, C)`` -> ``(N, n)``."""
    counts = torch.as_tensor(counts)
    classes = torch.arange(counts.shape[-1])
    return torch.stack([classes.repeat_interleave(c) for c in counts])


def stratified_split(labels, train_fraction: float, rng: np.random.Generator):
    """Indices ``(train, test)`` with ``floor(train_fraction * N)`` training items
    and each label's share the same (to one item) in both parts (what
    ``train_test_split(..., stratify=y)`` does): items are ordered by label, at
    random within a label, and the test set takes an evenly spaced selection."""
    labels = np.asarray(labels)
    check_float("train_fraction", train_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    n = len(labels)
    n_test = n - int(math.floor(train_fraction * n))
    order = np.lexsort((rng.random(n), labels))
    pos = np.arange(n)
    is_test = (pos + 1) * n_test // n > pos * n_test // n
    test = order[is_test]
    train = order[~is_test]
    return np.sort(rng.permutation(train)), np.sort(test)


# -------------------------------------------------------------------- model


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


def init_majority_params(n_classes: int, d: int, generators: Sequence[torch.Generator]) -> dict[str, torch.Tensor]:
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
    for g in generators:
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


# ----------------------------------------------------------------- training


@dataclass(frozen=True)
class MajoritySetup:
    """One training set-up; the defaults are the original's (``run_with_projection.bash``)."""

    n_classes: int = 20  # --num_classes
    length: int = 50  # --seq_len
    d: int = 8  # --hidden_dim
    min_margin: int = 6  # --data_min_delta
    n_sequences: int = 100_000  # --num_samples (10,001 partitions x 10 = 100,010 are drawn)
    train_fraction: float = 0.8  # train_test_split(train_size=0.8, stratify=y)
    batch: int = 6000  # --batch_size: 14 mini-batches per epoch of 80,008 sequences
    steps: int = 14_000  # --epochs 1000 x 14 mini-batches
    lr: float = 1e-3  # --lr, Adam
    lr_decay_epochs: int = 10_000  # the schedule reaches 0 after ceil(n_train / batch) * 10000 steps; 0: constant
    eval_every: int = 140  # steps between two points of the curves (10 epochs; the original: every epoch)
    eval_sequences: int = 0  # test sequences behind the curves (0: all); the final numbers use all of them
    stop_at_accuracy: float = 1.0  # a seed stops when its test accuracy reaches this (the original: 1.0)
    checkpoint_every: int = 500  # steps between two checkpoints (with a store)

    def __post_init__(self):
        for name, low in [("n_classes", 2), ("length", 2), ("d", 2), ("min_margin", 1), ("n_sequences", 1),
                          ("batch", 1), ("steps", 1), ("lr_decay_epochs", 0), ("eval_every", 1), ("eval_sequences", 0),
                          ("checkpoint_every", 1)]:
            check_int(name, getattr(self, name), low=low)
        check_int("min_margin", self.min_margin, low=1, high=self.length)
        check_float("train_fraction", self.train_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
        check_float("lr", self.lr, low=0.0, low_open=True)
        check_float("stop_at_accuracy", self.stop_at_accuracy, low=0.0, high=1.0, low_open=True)


@dataclass(frozen=True)
class MajorityRun:
    """Curves of ``S`` seeds, recorded at ``steps: (T,)``; every curve is ``(S, T)``.

    ``loss``: training cross-entropy per position, averaged over the steps since
    the previous record (the original's epoch-averaged training loss, Fig. 2a);
    ``test_loss``, ``test_accuracy``: on the test set, over all positions;
    ``angle``: mean over test positions of the angle (degrees) between the
    effective query and the line through 1 (the original's ``test_angle_mean``,
    Fig. 2b); ``entropy``: mean attention entropy divided by log n (1 = uniform);
    ``score_scale``: mean over test positions of the largest score magnitude the
    effective query can give any key of the variant, ``||u|| ||n|| / sqrt(d)``
    (``||Pu||`` under LayerNorm). ``lr: (T,)`` the learning rate at each record;
    ``stopped: (S,)`` the step at which a seed stopped (-1: never);
    ``keys, queries: (S, C, d)`` the normed class embeddings and their effective
    queries at the end (the original's Fig. 1a-b data). ``n_train``, ``n_test``:
    the sizes of the split. ``final``: the test metrics at the end on the whole
    test set, ``{"test_loss", "test_accuracy", "angle", "entropy", "score_scale"}``
    each ``(S,)`` (the curves may use a part of it: ``eval_sequences``).
    """

    norm: str
    seeds: tuple
    setup: MajoritySetup
    steps: np.ndarray
    lr: np.ndarray
    loss: np.ndarray
    test_loss: np.ndarray
    test_accuracy: np.ndarray
    angle: np.ndarray
    entropy: np.ndarray
    score_scale: np.ndarray
    stopped: np.ndarray
    keys: np.ndarray
    queries: np.ndarray
    n_train: int
    n_test: int
    final: dict

    def at(self, curve: str, step: int) -> np.ndarray:
        """``curve`` at the last record at or before ``step``: ``(S,)``."""
        i = int(np.searchsorted(self.steps, step, side="right")) - 1
        if i < 0:
            raise fail("step", step, f"a step >= {self.steps[0]}", "is before the first record")
        return getattr(self, curve)[:, i]


_CURVES = ("loss", "test_loss", "test_accuracy", "angle", "entropy", "score_scale")


def majority_lr(step: int, setup: MajoritySetup, steps_per_epoch: int) -> float:
    """The learning rate at ``step``: linear decay from ``lr`` to 0 over
    ``lr_decay_epochs * steps_per_epoch`` steps (constant if ``lr_decay_epochs = 0``)."""
    if setup.lr_decay_epochs == 0:
        return setup.lr
    total = setup.lr_decay_epochs * steps_per_epoch
    return setup.lr * max(0.0, (total - step) / total)


def _positions_mean(values, counts):
    # values (S, N, C) per query class, counts (S, N, C) -> mean over all positions, (S,)
    w = counts.to(values.dtype)
    return (values * w).sum((-1, -2)) / w.sum((-1, -2))


def _counts_loss(out, counts, labels):
    # per-seed mean cross-entropy over positions (S,): a class-a position has weight m_a
    S, N, C, _ = out.logits.shape
    target = labels[:, :, None].expand(S, N, C)
    ce = F.cross_entropy(out.logits.reshape(-1, C), target.reshape(-1), reduction="none").view(S, N, C)
    return _positions_mean(ce, counts)


def majority_dataset(seed: int, setup: MajoritySetup):
    """One seed's data as :func:`train_majority` uses it: ``(train_counts (N, C),
    train_labels (N,), test_counts (M, C), test_labels (M,))``, drawn with
    ``numpy.random.default_rng(seed)`` (cached)."""
    return _seed_data(seed, setup.length, setup.n_classes, setup.n_sequences, setup.min_margin, setup.train_fraction)


@functools.lru_cache(maxsize=64)
def _seed_data(seed, length, n_classes, n_sequences, min_margin, train_fraction):
    """One seed's data: counts and labels of the training and the test set (numpy RNG of the seed).

    Cached: the three norm variants train on the same data."""
    rng = np.random.default_rng(seed)
    counts, labels = partition_majority_data(length, n_classes, n_sequences, min_margin, rng)
    train, test = stratified_split(labels.numpy(), train_fraction, rng)
    return counts[train], labels[train], counts[test], labels[test]


class _Data(NamedTuple):
    train_counts: torch.Tensor  # (S, N_train, C) float32
    train_labels: torch.Tensor  # (S, N_train)
    test_counts: torch.Tensor
    test_labels: torch.Tensor


def _all_data(seeds, setup):
    parts = [majority_dataset(s, setup) for s in seeds]
    train_counts, train_labels, test_counts, test_labels = (torch.stack([p[i] for p in parts]) for i in range(4))
    return _Data(train_counts.float(), train_labels, test_counts.float(), test_labels)


@torch.no_grad()
def _evaluate(params, data, norm, length, limit=0, chunk=5000):
    """Test metrics per seed, each ``(S,)``: loss, accuracy, angle, entropy, score scale;
    computed on the (sequence, class) pairs that occur, weighted by their counts, over
    the first ``limit`` test sequences (0: all)."""
    counts, labels = data.test_counts, data.test_labels
    if limit:
        counts, labels = counts[:, :limit], labels[:, :limit]
    S, n_total, C = counts.shape
    nx, s, w, value = _attention_parts(params, norm)
    sums = {k: torch.zeros(S) for k in ("test_loss", "test_accuracy", "entropy")}
    for lo in range(0, n_total, chunk):
        m, y = counts[:, lo:lo + chunk], labels[:, lo:lo + chunk]
        pairs, weight = _present_pairs(m)
        cls, seq = pairs % C, pairs // C
        h = _attention_output(m, w, value, pairs) + params["E"].gather(1, cls[..., None].expand(-1, -1, nx.shape[-1]))
        logits = _linear(_feed_forward(params, h + params["b_O"][:, None]), params["E"])  # (S, P, C)
        target = y.gather(1, seq)
        ce = F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), reduction="none").view(S, -1)
        sums["test_loss"] += (ce * weight).sum(1)
        sums["test_accuracy"] += ((logits.argmax(-1) == target) * weight).sum(1)
        mk = m.gather(1, seq[..., None].expand(-1, -1, C))  # (S, P, C): the counts the pair's query sees
        a = w.gather(1, cls[..., None].expand(-1, -1, C)) * mk
        a = a / a.sum(-1, keepdim=True)  # class a's total attention on each class b
        ent = -(a * torch.log(a.clamp_min(1e-30) / mk.clamp_min(1.0))).sum(-1) / math.log(length)
        sums["entropy"] += (ent * weight).sum(1)
    positions = counts.sum((1, 2))
    out = {k: (v / positions).numpy().astype(float) for k, v in sums.items()}
    u = effective_queries(params, nx)  # (S, C, d)
    reach = u - u.mean(-1, keepdim=True) if norm == "layernorm" else u  # what the keys can see of u
    per_class = {"angle": angle_to_ones(u), "score_scale": reach.norm(dim=-1) * nx.norm(dim=-1) / math.sqrt(u.shape[-1])}
    class_share = counts.sum(1) / positions[:, None]  # (S, C): positions holding each class
    for key, value in per_class.items():
        out[key] = (value * class_share).sum(-1).numpy().astype(float)
    return out


def train_majority(
    norm: str,
    seeds: Sequence[int],
    setup: MajoritySetup = MajoritySetup(),
    *,
    store: CheckpointStore | None = None,
    progress: bool = False,
    threads: int = 1,
) -> MajorityRun:
    """Train one model per seed (all seeds at once) as the original does; see the module docstring.

    Seed ``s`` draws its data from ``numpy.random.default_rng(s)`` and its
    initial weights and epoch permutations from ``torch.Generator().manual_seed(s)``,
    so the same seed gives the same data and initial weights under every norm
    variant. Curves are recorded at step 0, every ``eval_every`` steps and at the
    end. With a ``store`` the whole training state (parameters, Adam, generators,
    step, curves) is saved every ``checkpoint_every`` steps under a key holding
    the variant, the seeds and the set-up, and a rerun resumes from it.

    ``threads``: PyTorch intra-op threads during the call (restored after).
    """
    _check_variant(norm)
    if len(seeds) == 0:
        raise fail("seeds", seeds, "a non-empty list of integers", "is empty")
    seeds = [check_int("seed", s, low=0, high=2**63 - 1) for s in seeds]
    if not isinstance(setup, MajoritySetup):
        raise fail("setup", setup, "a MajoritySetup", "has the wrong type")
    with torch_threads(threads):
        return _Trainer(norm, seeds, setup, store or CheckpointStore(None), progress).run()


class _Trainer:
    """The training loop of :func:`train_majority`, with its checkpointable state."""

    def __init__(self, norm, seeds, setup, store, progress):
        self.norm, self.seeds, self.setup, self.store, self.progress = norm, seeds, setup, store, progress
        self.key = {"what": "majority", "norm": norm, "seeds": list(seeds), **asdict(setup)}
        self.key.pop("steps")  # a run stopped at step k is the start of any longer run
        self.key.pop("eval_every"), self.key.pop("checkpoint_every")
        self.data = _all_data(seeds, setup)
        self.n_train = self.data.train_counts.shape[1]
        self.per_epoch = math.ceil(self.n_train / min(setup.batch, self.n_train))

    def _fresh(self):
        gens = [torch.Generator().manual_seed(s) for s in self.seeds]
        self.params = init_majority_params(self.setup.n_classes, self.setup.d, gens)
        self.gens, self.step, self.perm, self.frozen = gens, 0, None, torch.zeros(len(self.seeds), dtype=torch.bool)
        self.record = {k: [] for k in ("steps", "lr", *_CURVES)}
        self.running, self.n_running, self.stopped = 0.0, 0, np.full(len(self.seeds), -1)

    def _state(self):
        return {"params": {k: v.detach().clone() for k, v in self.params.items()}, "opt": self.opt.state_dict(),
                "gens": [g.get_state() for g in self.gens], "step": self.step,
                "perm": None if self.perm is None else self.perm.to(torch.int32),  # half the file; indices < 2^31
                "frozen": self.frozen.clone(), "record": self.record, "running": self.running,
                "n_running": self.n_running, "stopped": self.stopped.copy()}

    def _restore(self, state):
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v)
        self.opt.load_state_dict(state["opt"])
        for g, s in zip(self.gens, state["gens"]):
            g.set_state(s)
        for k in ("step", "frozen", "record", "running", "n_running", "stopped"):
            setattr(self, k, state[k])
        self.perm = None if state["perm"] is None else state["perm"].long()  # int64 in older checkpoints

    def _batch(self):
        """The next mini-batch of every seed: the epoch's permutation, in order."""
        b = min(self.setup.batch, self.n_train)
        within = self.step % self.per_epoch
        if within == 0 or self.perm is None:
            self.perm = torch.stack([torch.randperm(self.n_train, generator=g) for g in self.gens])
        idx = self.perm[:, within * b:(within + 1) * b]
        counts = self.data.train_counts.gather(1, idx[..., None].expand(-1, -1, self.setup.n_classes))
        return counts, self.data.train_labels.gather(1, idx)

    def _record(self, lr):
        metrics = _evaluate(self.params, self.data, self.norm, self.setup.length, self.setup.eval_sequences)
        self.record["steps"].append(self.step)
        self.record["lr"].append(lr)
        self.record["loss"].append((self.running / max(self.n_running, 1)).numpy().astype(float)
                                   if self.n_running else np.full(len(self.seeds), np.nan))
        self.running, self.n_running = 0.0, 0
        for k, v in metrics.items():
            self.record[k].append(v)
        hit = (metrics["test_accuracy"] >= self.setup.stop_at_accuracy) & ~self.frozen.numpy()
        self.stopped[hit] = self.step
        self.frozen |= torch.from_numpy(hit)

    def run(self) -> MajorityRun:
        self._fresh()
        self.opt = torch.optim.Adam(self.params.values(), lr=self.setup.lr)
        saved = self.store.load("majority", self.key)
        if saved is not None and saved["step"] > self.setup.steps:  # a longer run's checkpoint: leave it alone
            self.store = CheckpointStore(None)
        elif saved is not None:
            self._restore(saved)
        bar = progress_bar(self.progress, self.setup.steps, self.step, f"majority, {self.norm}")
        if self.step == 0 and not self.record["steps"]:
            self._record(majority_lr(0, self.setup, self.per_epoch))
        while self.step < self.setup.steps:
            self._train_step()
            bar.update(1)
            if self.step % self.setup.eval_every == 0 or self.step == self.setup.steps:
                self._record(majority_lr(self.step, self.setup, self.per_epoch))
            if self.step % self.setup.checkpoint_every == 0 or self.step == self.setup.steps:
                self.store.save("majority", self.key, self._state())
        bar.close()
        return self._result()

    def _train_step(self):
        lr = majority_lr(self.step, self.setup, self.per_epoch)
        for group in self.opt.param_groups:
            group["lr"] = lr
        counts, labels = self._batch()
        loss = majority_loss(self.params, counts, labels, self.norm)
        self.running, self.n_running = self.running + loss.detach(), self.n_running + 1
        snapshot = {k: v.detach()[self.frozen].clone() for k, v in self.params.items()} if self.frozen.any() else None
        self.opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        self.opt.step()
        if snapshot is not None:  # stopped seeds keep their weights
            with torch.no_grad():
                for k, v in self.params.items():
                    v[self.frozen] = snapshot[k]
        self.step += 1

    def _result(self) -> MajorityRun:
        arrays = {k: np.asarray(v, dtype=float) for k, v in self.record.items()}
        final = _evaluate(self.params, self.data, self.norm, self.setup.length)
        with torch.no_grad():
            keys = attention_norm(self.params["E"], self.norm)
            queries = effective_queries(self.params, keys) / math.sqrt(self.setup.d)  # the original's qQK
        return MajorityRun(
            norm=self.norm, seeds=tuple(self.seeds), setup=self.setup, steps=arrays["steps"].astype(int),
            lr=arrays["lr"], **{k: arrays[k].T.copy() for k in _CURVES}, stopped=self.stopped.copy(),
            keys=keys.numpy().astype(float), queries=queries.numpy().astype(float),
            n_train=self.n_train, n_test=int(self.data.test_counts.shape[1]),
            final={k: v.copy() for k, v in final.items()},
        )


def _stack_runs(runs: Sequence[MajorityRun]) -> MajorityRun:
    """One run of all seeds from runs of the same variant and set-up on disjoint seeds."""
    stack = {k: np.concatenate([getattr(r, k) for r in runs]) for k in (*_CURVES, "stopped", "keys", "queries")}
    final = {k: np.concatenate([r.final[k] for r in runs]) for k in runs[0].final}
    return replace(runs[0], seeds=tuple(s for r in runs for s in r.seeds), final=final, **stack)


def train_majority_per_seed(norm: str, seeds: Sequence[int], setup: MajoritySetup = MajoritySetup(),
                            **kwargs) -> MajorityRun:
    """Reference: the same training, one seed at a time (a plain loop).

    Gives the same curves as :func:`train_majority` up to float rounding; the
    benchmark times the two against each other.
    """
    return _stack_runs([train_majority(norm, [s], setup, **kwargs) for s in seeds])


def train_majority_groups(norms: Sequence[str], seeds: Sequence[int], setup: MajoritySetup = MajoritySetup(), *,
                          group_size: int = 5, store: CheckpointStore | None = None, progress: bool = False,
                          threads: int = 1, workers: int = 1) -> dict[str, MajorityRun]:
    """:func:`train_majority` for every variant in ``norms``, the seeds in groups of
    ``group_size`` (groups outer, variants inner), each group checkpointed under
    its own key. The same result as one call per variant, up to float rounding;
    a long run then completes group by group, and the first groups are reusable
    by a run with fewer seeds. Returns ``{norm: MajorityRun}``.

    ``workers > 1`` trains that many (group, variant) units at once, each in its
    own process with ``threads`` threads: the same numbers as one after the other
    (every unit is a separate training), in less wall time on several cores.
    """
    check_int("group_size", group_size, low=1)
    check_int("workers", workers, low=1)
    for norm in norms:
        _check_variant(norm)
    groups = [list(seeds[i:i + group_size]) for i in range(0, len(seeds), group_size)]
    units = [(norm, group, setup, store, progress, threads) for group in groups for norm in norms]
    done = map_processes(_train_unit, units, workers, progress=progress, desc="majority")
    parts = {norm: [run for (n, *_), run in zip(units, done) if n == norm] for norm in norms}
    return {norm: _stack_runs(runs) for norm, runs in parts.items()}


def _train_unit(unit) -> MajorityRun:
    norm, group, setup, store, progress, threads = unit  # a worker's bar goes to its own stderr
    return train_majority(norm, group, setup, store=store, progress=progress, threads=threads)


def steps_to_reach(steps: np.ndarray, curve: np.ndarray, threshold: float) -> np.ndarray:
    """First recorded step at which ``curve <= threshold``, per seed; NaN if never.

    ``steps: (T,)``, ``curve: (S, T)`` -> ``(S,)`` float.
    """
    curve = np.asarray(curve, dtype=float)
    if curve.ndim != 2 or curve.shape[1] != len(steps):
        raise fail("curve", shape_of(curve), f"(S, T={len(steps)})", "has the wrong shape")
    hit = curve <= threshold
    first = np.where(hit.any(1), hit.argmax(1), -1)
    return np.where(first >= 0, np.asarray(steps, dtype=float)[first], np.nan)


# ------------------------------------------------------------- the confound


def confound_share(with_ln, fair, original, rng: np.random.Generator, n_boot: int = 4000, level: float = 0.95):
    r"""The share of the gap between LayerNorm and the original code's variant that the
    fair control closes: :math:`(\bar f - \bar o) / (\bar \ell - \bar o)`, with a
    percentile bootstrap interval over seeds (the three arrays ``(S,)`` are
    paired by seed). Returns ``(share, low, high)``; NaN where the gap is 0.

    1 means the fair control does as well as LayerNorm (the whole gap is the
    confound of the original's smaller norm); 0 means it does no better than
    the original's variant (the whole gap is the projection).
    """
    arrays = np.stack([np.asarray(a, dtype=float) for a in (with_ln, fair, original)], axis=1)  # (S, 3)

    def share(rows):
        ln, f, o = rows.mean(0)
        return (f - o) / (ln - o) if ln != o else np.nan

    from .stats import bootstrap_interval

    lo, hi = bootstrap_interval(share, arrays, n_boot=n_boot, level=level, rng=rng)
    return float(share(arrays)), lo, hi


def share_words(low: float, high: float, fair_beats_layernorm: bool | None = None) -> str:
    """Words for a share known to lie in ``[low, high]`` (e.g. :func:`confound_share`'s interval).

    ``"more than entirely"`` (low > 1: the fair control even beats LayerNorm; when
    ``fair_beats_layernorm`` is given, only if it is true, i.e. the paired interval
    of LayerNorm minus the fair control lies wholly below 0, and ``"entirely"``
    otherwise: the two are then not told apart),
    ``"almost entirely"`` (low >= 0.8), ``"mostly"`` (low >= 0.5), ``"not at all"``
    (high <= 0.2), ``"partly"`` (low > 0.2, or high < 0.8), and ``"to an
    undetermined extent"`` when the interval reaches from 0.2 or below to 0.8 or
    above, or is not finite.
    """
    if not (np.isfinite(low) and np.isfinite(high)) or low > high:
        return "to an undetermined extent"
    if low > 1:
        return "entirely" if fair_beats_layernorm is not None and not fair_beats_layernorm else "more than entirely"
    if low >= 0.8:
        return "almost entirely"
    if low >= 0.5:
        return "mostly"
    if high <= 0.2:
        return "not at all"
    if low > 0.2 or high < 0.8:
        return "partly"
    return "to an undetermined extent"


# ------------------------------------------------ the proposition, numerically


def uniform_query_check(n_keys: int, d: int, cs, generator: torch.Generator, n_queries: int = 100) -> dict:
    """Proposition ``prop-ua-uniform`` in float64 on ``n_keys`` random inputs in ``d`` dimensions.

    Returns arrays over the multiples ``cs: (k,)``: ``spread_ln`` / ``spread_scaled``,
    the spread (max - min) of the scores that the query ``c 1`` gives keys after
    LayerNorm / after scaling alone (``"rmsnorm"``); ``shift``, the largest change
    of any score of ``n_queries`` random queries when ``c 1`` is added to them
    (LayerNorm keys); and ``att_dev``, the largest deviation of the attention of
    ``cs[-1] * 1`` on the LayerNorm keys from ``1 / n_keys``.
    """
    check_int("n_keys", n_keys, low=2)
    check_int("d", d, low=2)
    x = torch.randn(n_keys, d, generator=generator, dtype=torch.float64)
    keys_ln, keys_sc = attention_norm(x, "layernorm"), attention_norm(x, "rmsnorm")
    ones = torch.ones(d, dtype=torch.float64)
    queries = torch.randn(n_queries, d, generator=generator, dtype=torch.float64)
    cs = [float(c) for c in cs]

    def spread(keys, q):
        s = keys @ q
        return (s.max() - s.min()).item()

    att = torch.softmax(keys_ln @ (cs[-1] * ones) / math.sqrt(d), dim=0)
    return {
        "spread_ln": np.array([spread(keys_ln, c * ones) for c in cs]),
        "spread_scaled": np.array([spread(keys_sc, c * ones) for c in cs]),
        "shift": np.array([(queries @ keys_ln.T - (queries + c * ones) @ keys_ln.T).abs().max().item() for c in cs]),
        "att_dev": float((att - 1 / n_keys).abs().max()),
    }


def setup_differences(setup: MajoritySetup, reference: MajoritySetup = MajoritySetup()) -> list[tuple]:
    """The fields that change the training in which ``setup`` differs from ``reference``
    (default: the original's settings): ``[(field, ours, reference), ...]``, in the
    dataclass's order (``eval_every``, ``eval_sequences`` and ``checkpoint_every``
    only change what is recorded and are left out)."""
    ours, ref = asdict(setup), asdict(reference)
    bookkeeping = ("eval_every", "eval_sequences", "checkpoint_every")  # what is recorded, not how it trains
    return [(k, ours[k], ref[k]) for k in ours if ours[k] != ref[k] and k not in bookkeeping]


#: The original's number of seeds per variant (``run_with_projection.bash``: seeds 0-9).
ORIGINAL_SEEDS = 10


def run_differences(setup: MajoritySetup, n_seeds: int, reference: MajoritySetup = MajoritySetup(),
                    original_seeds: int = ORIGINAL_SEEDS) -> list[tuple]:
    """:func:`setup_differences` plus the number of seeds (``"n_seeds"``) when it is not the original's."""
    rows = setup_differences(setup, reference)
    return rows + ([("n_seeds", n_seeds, original_seeds)] if n_seeds != original_seeds else [])


#: The original's d = 3 runs (``run_with_projection_3d.bash``): ten seeds, 10,000 steps,
#: full batches of its 6,000 sequences, learning rate 1e-3; under the chapter's parameter names.
ORIGINAL_GEOMETRY = {"geo_seeds": ORIGINAL_SEEDS, "geo_steps": 10_000, "geo_batch": 6000, "geo_lr": 0.001}


def geometry_differences(params: Mapping) -> list[tuple]:
    """The settings of the d = 3 runs (``geo_*`` in ``params``, a chapter's parameters
    or preset) that differ from the original's: ``[(name, ours, original), ...]``."""
    return [(k, params[k], v) for k, v in ORIGINAL_GEOMETRY.items() if k in params and params[k] != v]


def majority_setup(params: Mapping) -> MajoritySetup:
    """The :class:`MajoritySetup` whose fields are taken by name from ``params`` (a
    chapter's parameters or preset; other names are ignored, missing fields keep
    the original's values)."""
    names = {f.name for f in fields(MajoritySetup)}
    return MajoritySetup(**{k: v for k, v in params.items() if k in names})


def differences_in_words(rows: Sequence[tuple]) -> str:
    """``[(field, ours, original), ...]`` as "steps 1,500 (the original: 14,000), ...";
    no rows: "none: the original's settings"."""
    return ", ".join(f"{k} {ours:,} (the original: {orig:,})" for k, ours, orig in rows) if rows \
        else "none: the original's settings"


# ------------------------------------------------------------ the comparisons


def run_summary(run: MajorityRun) -> dict[str, np.ndarray]:
    """Per-seed numbers of a run, each ``(S,)``: ``"mean training loss"`` (over the
    records after step 0: the area under the curve of Fig. 2a, small when the loss
    falls early), ``"final training loss"``, ``"final test accuracy"`` and
    ``"final angle"`` (degrees, whole test set)."""
    return {
        "mean training loss": np.nanmean(run.loss[:, 1:], axis=1) if run.loss.shape[1] > 1 else run.loss[:, 0],
        "final training loss": run.loss[:, -1].copy(),
        "final test accuracy": np.asarray(run.final["test_accuracy"], dtype=float),
        "final angle": np.asarray(run.final["angle"], dtype=float),
    }


def angle_verdict(run: MajorityRun, claimed: float, claimed_step: int, atol: float = 3.0, level: float = 0.95):
    """A value the paper's Fig. 2b shows (``claimed`` degrees near ``claimed_step``) against
    the run's final angle (mean over seeds with its t interval).

    Compared with :func:`~attention_geometry.verdicts.value_verdict` (tolerance
    ``atol`` degrees for a value read from a figure) only when the run reached at
    least 80 % of ``claimed_step``; otherwise ``not tested``: the angle keeps
    changing during training, so values at different step counts are not comparable.
    """
    from .stats import mean_estimate
    from .verdicts import not_tested, value_verdict

    last = int(run.steps[-1])
    if last < 0.8 * claimed_step:
        return not_tested(f"the paper's value is at about {claimed_step:,} steps; this run stops at {last:,}")
    return value_verdict(mean_estimate(run.final["angle"]), claimed, atol=atol, level=level)


def random_angle_to_ones(d: int) -> float:
    r"""The mean angle (degrees) between a uniformly random direction in :math:`\mathbb R^d`
    and the line through :math:`\mathbf 1`: :math:`\mathbb E\,\arccos\sqrt B` with
    :math:`B = z_1^2/\lVert z\rVert^2 \sim \mathrm{Beta}(1/2, (d-1)/2)`, by quadrature.
    The yardstick for the angles of :func:`angle_to_ones`."""
    from scipy import integrate, stats

    check_int("d", d, low=2)
    beta = stats.beta(0.5, (d - 1) / 2)
    value, _ = integrate.quad(lambda b: np.degrees(np.arccos(np.sqrt(b))) * beta.pdf(b), 0, 1, limit=200)
    return float(value)
