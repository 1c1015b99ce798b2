"""Figures of chapter 4 (rank collapse under masks): one function per figure."""

from .theme import set_theme  # noqa: F401  (the shared theme; chapters call it once)
from .theme import new_figure as _new_figure

import numpy as np
import seaborn as sns

__all__ = [
    "plot_masks",
    "plot_mu_bands",
    "plot_rate_vs_radius",
]


def plot_masks(masks: dict, radii: dict):
    """Heat maps of masks ``{label: (N, N) bool}`` with their radius in the title."""
    fig = _new_figure(figsize=(3.0 * len(masks), 3.2), layout="constrained")
    axes = fig.subplots(1, len(masks))
    for ax, (label, m) in zip(np.atleast_1d(axes), masks.items()):
        ax.imshow(m, cmap="Blues", vmin=0, vmax=1.3, interpolation="nearest")
        ax.set(title=f"{label}\nradius r = {radii[label]}", xlabel="key j", ylabel="query i",
               xticks=[], yticks=[])
    fig.suptitle("Masks: row i marks the keys token i attends to")
    return fig


def plot_mu_bands(depth, curves: dict, title: str, ylabel=r"$\mu(X^{(t)}) / \mu(X^{(0)})$", ncols=1):
    """Median and 10-90 % band over trajectories. ``curves[label] = (T + 1, n)`` arrays."""
    fig = _new_figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.subplots()
    for (label, v), c in zip(curves.items(), sns.color_palette(n_colors=len(curves))):
        lo, med, hi = np.nanquantile(v, [0.1, 0.5, 0.9], axis=1)
        ax.plot(depth, med, color=c, label=label)
        ax.fill_between(depth, lo, hi, color=c, alpha=0.2, lw=0)
    ax.set(yscale="log", xlabel="layer t", ylabel=ylabel, title=title)
    ax.legend(fontsize="small", ncol=ncols)
    return fig


def plot_rate_vs_radius(table):
    """Fitted rate (median, 10-90 % bars) against the radius r, one marker per mask family.

    ``table``: DataFrame with columns family, r, rate_med, rate_lo, rate_hi.
    """
    fig = _new_figure(figsize=(6.8, 4.2), layout="constrained")
    ax = fig.subplots()
    for (fam, g), c, mk in zip(table.groupby("family", sort=False), sns.color_palette(), "osD^v"):
        g = g.sort_values("r")
        ax.errorbar(g["r"], g["rate_med"], yerr=[g["rate_med"] - g["rate_lo"], g["rate_hi"] - g["rate_med"]],
                    fmt=mk + "-", color=c, capsize=3, label=fam)
    ax.set(xscale="log", yscale="log", xlabel="graph radius r",
           ylabel="fitted collapse rate per layer",
           title="Fitted collapse rate against the mask radius")
    ax.legend(fontsize="small")
    return fig
