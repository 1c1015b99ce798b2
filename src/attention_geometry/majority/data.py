"""The data of the majority task: partitions of the length into class counts, the
majority label, the stratified split (the original's ``gen_X``, ``gen_data`` and
``train_test_split``)."""

import math

import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F

from .._checks import as_generator, check_float, check_int, fail


def majority_counts(tokens: torch.Tensor, n_classes: int) -> torch.Tensor:
    """How often each class occurs. ``tokens: (..., n)`` -> ``counts: (..., C)`` (int64)."""
    check_int("n_classes", n_classes, low=2)
    return F.one_hot(tokens, n_classes).sum(-2)


def majority_labels(tokens: torch.Tensor, n_classes: int) -> torch.Tensor:
    """The majority class of each sequence. ``tokens: (..., n)`` -> ``(...,)``; ties go to the smallest index."""
    return majority_counts(tokens, n_classes).argmax(-1)


def majority_margin(counts: torch.Tensor | npt.ArrayLike) -> torch.Tensor:
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
                            rng: np.random.Generator | int,
                            per_partition: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
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
    rng = as_generator("rng", rng)
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


def counts_to_tokens(counts: torch.Tensor | npt.ArrayLike) -> torch.Tensor:
    """Token sequences with the given counts, each class in one block (the original's
    layout; order does not matter without positions). ``(N, C)`` -> ``(N, n)``."""
    counts = torch.as_tensor(counts)
    classes = torch.arange(counts.shape[-1])
    return torch.stack([classes.repeat_interleave(c) for c in counts])


def stratified_split(labels: npt.ArrayLike, train_fraction: float,
                     rng: np.random.Generator | int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(train, test)`` with ``floor(train_fraction * N)`` training items
    and each label's share the same (to one item) in both parts (what
    ``train_test_split(..., stratify=y)`` does): items are ordered by label, at
    random within a label, and the test set takes an evenly spaced selection."""
    labels = np.asarray(labels)
    check_float("train_fraction", train_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    n = len(labels)
    n_test = n - int(math.floor(train_fraction * n))
    rng = as_generator("rng", rng)
    order = np.lexsort((rng.random(n), labels))
    pos = np.arange(n)
    is_test = (pos + 1) * n_test // n > pos * n_test // n
    test = order[is_test]
    train = order[~is_test]
    return np.sort(rng.permutation(train)), np.sort(test)
