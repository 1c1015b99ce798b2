r"""Attention masks as directed graphs (chapter 4 of the book).

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

The assumptions of the collapse theorem: every token has a self-loop
(``M[i, i]``) and :math:`G` is quasi-strongly connected.
:func:`check_mask` raises a ``ValueError`` naming what is wrong otherwise.
"""

from dataclasses import dataclass

import numpy as np

__all__ = [
    "complete_mask",
    "causal_mask",
    "sliding_window_mask",
    "one_sided_window_mask",
    "make_mask",
    "check_mask",
    "distances",
    "MaskGraph",
    "mask_graph",
    "sliding_window_radius",
    "one_sided_window_radius",
]


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"sequence length N = {n!r} must be an integer >= 1")
    return int(n)


def _check_w(w) -> int:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1:
        raise ValueError(f"window width w = {w!r} must be an integer >= 1")
    return int(w)


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


def make_mask(kind: str, n: int, w: int | None = None) -> np.ndarray:
    """A mask by name: ``complete``, ``causal``, ``window`` (needs ``w``), ``one_sided``."""
    if kind == "complete":
        return complete_mask(n)
    if kind == "causal":
        return causal_mask(n)
    if kind in ("window", "one_sided"):
        if w is None:
            raise ValueError(f"mask kind {kind!r} needs a window width w")
        return sliding_window_mask(n, w) if kind == "window" else one_sided_window_mask(n, w)
    raise ValueError(
        f"mask kind = {kind!r} is unknown; allowed: 'complete', 'causal', 'window', 'one_sided'"
    )


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
        raise ValueError(f"{name} must be boolean, got dtype {m.dtype}")
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 1:
        raise ValueError(f"{name} must have shape (N, N) with N >= 1, got shape {m.shape}")
    return m


def distances(mask) -> np.ndarray:
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


def mask_graph(mask) -> MaskGraph:
    """Self-loops, strong / quasi-strong connectivity, centres and radius of ``mask: (N, N)``."""
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


def check_mask(mask, name: str = "mask") -> np.ndarray:
    """Validate the collapse theorem's assumptions; return the mask as a bool array.

    Raises ``ValueError`` for a wrong shape, a non-boolean dtype, a token without
    a self-loop, or a graph that is not quasi-strongly connected (no token
    reaches every other: the message names an unreachable token).
    """
    m = _as_mask(mask, name)
    missing = np.flatnonzero(~np.diag(m))
    if missing.size:
        raise ValueError(
            f"{name}: token(s) {missing[:8].tolist()} have no self-loop (mask[i, i] is False)"
        )
    d = distances(m)
    if not (d >= 0).all(axis=1).any():
        # the token reached from the fewest sources is the clearest witness
        worst = int(np.argmin((d >= 0).sum(axis=0)))
        raise ValueError(
            f"{name} is not quasi-strongly connected: no token reaches every token "
            f"(e.g. token {worst} is reachable from only {(d[:, worst] >= 0).sum()} token(s))"
        )
    return m
