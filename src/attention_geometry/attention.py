r"""Attention masks as directed graphs, and the masked softmax (chapters 4-9).

A mask is a boolean matrix ``M: (N, N)``; **row i lists the keys token i
attends to**: ``M[i, j] = True`` means token ``i`` may read token ``j``.

Graph convention. The mask is the graph :math:`G` on the tokens with a
directed edge :math:`j \to i` whenever ``M[i, j]`` (information flows from the
key ``j`` into the query ``i``). A directed path :math:`c \to \dots \to i` of
length :math:`k` therefore exists iff :math:`(M^k)_{i c} > 0` (boolean matrix
power): after :math:`k` layers token ``i`` depends on token ``c``.

* ``dist(c, i)``: the length of the shortest path :math:`c \to i`
  (:func:`distances`, returned as ``D[c, i]``; ``-1`` when there is none).
* :math:`G` is *strongly connected* if every token reaches every token, and
  *quasi-strongly connected* if some token :math:`c` (a *centre*) reaches every
  token.
* The *radius* is :math:`r = \min_c \max_i \mathrm{dist}(c, i)` over the
  centres :math:`c`; the centres attaining it are the *central* tokens.

Examples (1-based positions in the prose, 0-based indices here): the complete
mask has radius 1 and every token is central; the causal mask (``M[i, j] = j
<= i``) has token 0 as its only centre and radius 1; the two-sided sliding
window of width ``w`` (``|i - j| <= w``) has radius
:math:`\lceil \lfloor N/2 \rfloor / w \rceil`; the one-sided (causal) window
(``0 <= i - j <= w``) has radius :math:`\lceil (N - 1)/w \rceil` from token 0.

Window convention (the book's one definition, stated in chapter 4 and used in
every chapter): a window of width ``w`` lets query ``i`` read the keys at
distance at most ``w``: ``|i - j| <= w`` for the two-sided window, ``0 <= i - j
<= w`` for the one-sided (causal) one. The one-sided window therefore holds
``w + 1`` keys, the query's own included.

The masked softmax (:func:`masked_softmax`) is the attention matrix of every
model in the book: a row-wise softmax over the keys the mask allows, exactly 0
elsewhere.

The assumptions of the collapse theorem: every token has a self-loop
(``M[i, i]``) and :math:`G` is quasi-strongly connected.
:func:`check_mask` raises a ``ValueError`` naming what is wrong otherwise.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import torch

from ._checks import check_choice, check_int, fail

__all__ = [
    "complete_mask",
    "causal_mask",
    "sliding_window_mask",
    "one_sided_window_mask",
    "block_causal_mask",
    "make_mask",
    "check_mask",
    "distances",
    "MaskGraph",
    "mask_graph",
    "sliding_window_radius",
    "one_sided_window_radius",
    "MASK_KINDS",
    "mask_tensor",
    "masked_softmax",
    "causal_softmax",
]

#: The mask families of the book, by name.
MASK_KINDS = ("complete", "causal", "window", "one_sided")


def _check_n(n) -> int:
    return check_int("N", n, low=1)


def _check_w(w) -> int:
    return check_int("w", w, low=1)


def complete_mask(n: int) -> np.ndarray:
    """Every token attends to every token. ``(n, n)`` bool."""
    n = _check_n(n)
    return np.ones((n, n), dtype=bool)


def causal_mask(n: int) -> np.ndarray:
    """Token ``i`` attends to ``j <= i``. ``(n, n)`` bool, lower triangular."""
    n = _check_n(n)
    return np.tril(np.ones((n, n), dtype=bool))


def sliding_window_mask(n: int, w: int) -> np.ndarray:
    """Two-sided window: token ``i`` attends to ``j`` with ``|i - j| <= w``."""
    n, w = _check_n(n), _check_w(w)
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :]) <= w


def one_sided_window_mask(n: int, w: int) -> np.ndarray:
    """Causal window: token ``i`` attends to ``j`` with ``0 <= i - j <= w``."""
    n, w = _check_n(n), _check_w(w)
    i = np.arange(n)
    diff = i[:, None] - i[None, :]
    return (diff >= 0) & (diff <= w)


def block_causal_mask(n: int, n_blocks: int) -> np.ndarray:
    """Causal attention inside each of ``n_blocks`` contiguous blocks, none across them.

    The mask of several documents packed into one sequence. With two or more
    blocks no token reaches every other: the graph is **not** quasi-strongly
    connected, and the collapse theorem does not apply (each block collapses
    on its own). Blocks have sizes ``n // n_blocks`` or one more.
    """
    n = _check_n(n)
    n_blocks = check_int("n_blocks", n_blocks, low=1, high=n)
    block = np.repeat(np.arange(n_blocks), np.diff(np.linspace(0, n, n_blocks + 1).round().astype(int)))
    return causal_mask(n) & (block[:, None] == block[None, :])


def make_mask(kind: str, n: int, w: int | None = None) -> np.ndarray:
    """A mask by name: ``complete``, ``causal``, ``window`` (needs ``w``), ``one_sided``."""
    check_choice("kind", kind, MASK_KINDS)
    if kind == "complete":
        return complete_mask(n)
    if kind == "causal":
        return causal_mask(n)
    if kind in ("window", "one_sided"):
        if w is None:
            raise fail("w", w, "an integer >= 1 for the window kinds")
        return sliding_window_mask(n, w) if kind == "window" else one_sided_window_mask(n, w)


def sliding_window_radius(n: int, w: int) -> int:
    r"""Radius of the two-sided window: :math:`\lceil \lfloor N/2\rfloor / w\rceil`.

    From centre ``c`` the farthest token is at distance
    :math:`\lceil \max(c, N-1-c)/w \rceil`; the middle token minimises
    :math:`\max(c, N-1-c)` to :math:`\lceil (N-1)/2 \rceil = \lfloor N/2 \rfloor`.
    """
    n, w = _check_n(n), _check_w(w)
    return -(-(n // 2) // w)


def one_sided_window_radius(n: int, w: int) -> int:
    r"""Radius of the one-sided window: :math:`\lceil (N-1)/w \rceil` (centre: token 0)."""
    n, w = _check_n(n), _check_w(w)
    return -(-(n - 1) // w)


def _as_mask(mask, name="mask") -> np.ndarray:
    if hasattr(mask, "detach"):  # torch tensor
        mask = mask.detach().cpu().numpy()
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise fail(name, f"an array of dtype {m.dtype}", "a boolean (N, N) array")
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 1:
        raise fail(name, f"an array of shape {m.shape}", "a boolean (N, N) array with N >= 1")
    return m


def distances(mask: npt.ArrayLike | torch.Tensor) -> np.ndarray:
    """Shortest path lengths ``D[c, i]`` from ``c`` to ``i`` (``-1``: unreachable).

    ``mask: (N, N)`` bool; edges ``j -> i`` where ``mask[i, j]``. Breadth-first
    search from every source at once: ``O(N^3 log)`` with boolean products, fine
    for the ``N`` of this book (a few hundred).
    """
    m = _as_mask(mask)
    n = m.shape[0]
    adj = m.T.astype(np.int32)  # adj[c, i] = 1 iff edge c -> i
    dist = np.full((n, n), -1, dtype=np.int64)
    np.fill_diagonal(dist, 0)
    frontier = np.eye(n, dtype=bool)
    reached = frontier.copy()
    k = 0
    while frontier.any():
        k += 1
        nxt = (frontier.astype(np.int32) @ adj > 0) & ~reached
        dist[nxt] = k
        reached |= nxt
        frontier = nxt
    return dist


@dataclass(frozen=True)
class MaskGraph:
    """Graph properties of a mask (see the module docstring for the conventions)."""

    n: int
    self_loops: bool
    strongly_connected: bool
    quasi_strongly_connected: bool
    centres: tuple  # tokens that reach every token
    central: tuple  # centres attaining the radius
    radius: int | None  # None when not quasi-strongly connected


def mask_graph(mask: npt.ArrayLike | torch.Tensor) -> MaskGraph:
    """Self-loops, strong / quasi-strong connectivity, centres and radius of ``mask: (N, N)``
    (definition ``rc-def-graph``)."""
    m = _as_mask(mask)
    d = distances(m)
    reach_all = (d >= 0).all(axis=1)
    centres = tuple(int(c) for c in np.flatnonzero(reach_all))
    if centres:
        ecc = d[list(centres)].max(axis=1)
        radius = int(ecc.min())
        central = tuple(c for c, e in zip(centres, ecc) if e == radius)
    else:
        radius, central = None, ()
    return MaskGraph(
        n=m.shape[0],
        self_loops=bool(np.diag(m).all()),
        strongly_connected=bool(reach_all.all()),
        quasi_strongly_connected=bool(centres),
        centres=centres,
        central=central,
        radius=radius,
    )


def check_mask(mask: npt.ArrayLike | torch.Tensor, name: str = "mask") -> np.ndarray:
    """Validate the collapse theorem's assumptions on ``mask: (N, N)``; return it as a bool array ``(N, N)``.

    Raises an ``ArgumentError`` (a ``ValueError``) for a wrong shape, a non-boolean dtype, a token without
    a self-loop, or a graph that is not quasi-strongly connected (no token
    reaches every other: the message names an unreachable token).
    """
    m = _as_mask(mask, name)
    missing = np.flatnonzero(~np.diag(m))
    if missing.size:
        raise fail(name, f"a mask whose token(s) {missing[:8].tolist()} have no self-loop",
                   "a mask with mask[i, i] True for every token i")
    d = distances(m)
    if not (d >= 0).all(axis=1).any():
        # the token reached from the fewest sources is the clearest witness
        worst = int(np.argmin((d >= 0).sum(axis=0)))
        raise fail(name, f"a mask in which token {worst} is reachable from only "
                   f"{(d[:, worst] >= 0).sum()} token(s)",
                   "a quasi-strongly connected mask (some token reaches every token)",
                   "is not quasi-strongly connected")
    return m


# --------------------------------------------------------------------------
# The masked softmax.


@lru_cache(maxsize=64)
def _mask_tensor_cached(kind: str, n: int, w: int | None, device: str) -> torch.Tensor:
    return torch.as_tensor(make_mask(kind, n, w), device=device)


def mask_tensor(kind: str, n: int, w: int | None = None, device: str | torch.device = "cpu") -> torch.Tensor:
    """:func:`make_mask` as a torch bool tensor ``(n, n)`` on ``device`` (cached: do not modify it)."""
    return _mask_tensor_cached(kind, int(n), None if w is None else int(w), str(device))


def _as_bool_tensor(mask, n: int, device) -> torch.Tensor:
    if isinstance(mask, torch.Tensor):
        if mask.dtype != torch.bool:
            raise fail("mask", f"a tensor of dtype {mask.dtype}", "a boolean (N, N) mask")
        m = mask
    else:
        m = torch.as_tensor(_as_mask(mask), device=device)
    if tuple(m.shape[-2:]) != (n, n):
        raise fail("mask", f"shape {tuple(m.shape)}", f"shape (N, N) with N = {n}, the number of keys in the scores")
    return m.to(device)


def masked_softmax(scores: torch.Tensor, mask: npt.ArrayLike | torch.Tensor, *,
                   row_max: float | torch.Tensor | None = None) -> torch.Tensor:
    r"""Row softmax of ``scores: (..., N, N)`` over the keys the mask allows; exactly 0 elsewhere.

    :math:`A_{ij} = e^{S_{ij}} / \sum_{k: M_{ik}} e^{S_{ik}}` for ``M[i, j]``, else 0.
    ``mask: (N, N)`` (or broadcastable ``(..., N, N)``) bool, numpy or torch,
    True where query ``i`` may read key ``j``. Every row must allow at least one
    key (a self-loop suffices; :func:`check_mask` checks the collapse theorem's
    assumptions). Rows sum to 1. Differentiable.

    ``row_max``: an upper bound of every score in its row, known in advance
    (a number or ``(..., N, 1)``; e.g. :math:`\sqrt d` for scores of
    LayerNorm-ed tokens, by Cauchy-Schwarz); it replaces the max pass. Rows are
    short in this book (often ten keys), and there torch's fused softmax is slow
    on a CPU, so short rows are computed directly.
    """
    m = _as_bool_tensor(mask, scores.shape[-1], scores.device)
    if row_max is None and scores.shape[-1] > _SHORT_ROW:
        return torch.softmax(scores.masked_fill(~m, float("-inf")), dim=-1)
    if row_max is None:
        row_max = torch.where(m, scores, float("-inf")).amax(-1, keepdim=True)
    E = (scores - row_max).exp() * m
    return E / E.sum(-1, keepdim=True)


#: Rows up to this many keys use the direct formula in :func:`masked_softmax`.
_SHORT_ROW = 32


def causal_softmax(scores: torch.Tensor) -> torch.Tensor:
    """:func:`masked_softmax` with the causal mask: query ``i`` reads keys ``j <= i``."""
    return masked_softmax(scores, mask_tensor("causal", scores.shape[-1], device=scores.device))
