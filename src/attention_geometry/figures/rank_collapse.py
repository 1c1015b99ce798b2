"""Figures of chapter 4 (rank collapse under masks): one function per figure."""

from .theme import set_theme  # noqa: F401  (the shared theme; chapters call it once)
from .theme import new_figure as _new_figure

import warnings

import numpy as np
import seaborn as sns

__all__ = [
    "plot_masks",
    "plot_mu_bands",
    "plot_bound",
    "plot_precision",
]


def plot_masks(masks: dict, radii: dict):
    """Heat maps of masks ``{label: (N, N) bool}`` with their radius (``None``: no centre) in the title."""
    fig = _new_figure(figsize=(2.6 * len(masks), 3.2), layout="constrained")
    axes = fig.subplots(1, len(masks))
    for ax, (label, m) in zip(np.atleast_1d(axes), masks.items()):
        ax.imshow(m, cmap="Blues", vmin=0, vmax=1.3, interpolation="nearest")
        r = radii[label]
        ax.set(title=f"{label}\n" + (f"radius r = {r}" if r is not None else "no centre"),
               xlabel="key j", ylabel="query i", xticks=[], yticks=[])
    fig.suptitle("Masks: row i marks the keys token i attends to")
    return fig


def _bands(ax, depth, curves, styles=None):
    for (label, v), c in zip(curves.items(), sns.color_palette(n_colors=len(curves))):
        with warnings.catch_warnings():  # a layer where every run overflowed is a gap, not news
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, med, hi = np.nanquantile(v, [0.1, 0.5, 0.9], axis=1)
        ax.plot(depth, med, color=c, label=label, **(styles or {}).get(label, {}))
        ax.fill_between(depth, lo, hi, color=c, alpha=0.2, lw=0)


def plot_mu_bands(depth, curves: dict, title: str, ylabel=r"$\mu(X^{(\ell)}) / \|X^{(\ell)}\|_F$", ncols=1):
    """Median and 10-90 % band over trajectories. ``curves[label] = (T + 1, n)`` arrays."""
    fig = _new_figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.subplots()
    _bands(ax, depth, curves)
    ax.set(yscale="log", xlabel=r"layer $\ell$", ylabel=ylabel, title=title)
    ax.legend(fontsize="small", ncol=ncols)
    return fig


def plot_bound(depth, measured: dict, bound: dict):
    r"""The collapse theorem's bound (dashed) against :math:`\mu(Z^{(t)})` (solid), per mask.

    ``measured[label]``, ``bound[label]``: ``(T + 1, n)`` arrays; medians over trajectories.
    """
    fig = _new_figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.subplots()
    for (label, v), c in zip(measured.items(), sns.color_palette(n_colors=len(measured))):
        ax.plot(depth, np.nanmedian(v, axis=1), color=c, label=f"{label}: measured")
        ax.plot(depth, np.nanmedian(bound[label], axis=1), color=c, ls="--", label=f"{label}: bound")
    ax.set(yscale="log", xlabel=r"layer $\ell$", ylabel=r"$\mu(Z^{(\ell)})$, $Z^{(\ell)} = A^{(\ell-1)}\cdots A^{(0)}X^{(0)}$",
           title="The theorem's bound with each run's own $\\delta$")
    ax.legend(fontsize="x-small", ncol=2)
    return fig


def plot_precision(depth, panels: dict):
    """A grid of panels ``{(row title, column title): {label: (T + 1, n)}}``, log scale, shared legend.

    Used for absolute and relative :math:`\\mu` in float32 and float64.
    """
    rows = list(dict.fromkeys(r for r, _ in panels))
    cols = list(dict.fromkeys(c for _, c in panels))
    fig = _new_figure(figsize=(5.2 * len(cols), 3.4 * len(rows)), layout="constrained")
    axes = np.atleast_2d(fig.subplots(len(rows), len(cols), sharex=True))
    for (r, c), curves in panels.items():
        ax = axes[rows.index(r), cols.index(c)]
        _bands(ax, depth, curves)
        ax.set(yscale="log", title=f"{r}, {c}", xlabel=r"layer $\ell$" if r == rows[-1] else None)
    axes[0, 0].legend(fontsize="x-small")
    return fig
