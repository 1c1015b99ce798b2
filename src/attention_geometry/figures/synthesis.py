"""Figures of chapter 9 (synthesis): the switched-component decoder and the sweep."""

from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it)

import matplotlib.pyplot as plt
import numpy as np


def variants_figure(table, profiles):
    """Left: recency probability and relative mu per variant; right: influence profiles."""
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    y = np.arange(len(table))
    ax0.barh(y - 0.2, table["rp"], height=0.4, label="recency probability (last layer)")
    ax0.barh(y + 0.2, table["mu_rel"], height=0.4, label=r"$\mu(X_L)/\|X_L\|_F$")
    ax0.axvline(0.5, color="grey", ls=":", lw=1)
    ax0.set_yticks(y, table.index)
    ax0.invert_yaxis()
    ax0.set_xlabel("value")
    ax0.set_title("Geometry of the last layer, one change at a time")
    ax0.legend(loc="lower right", fontsize=8)
    for name, p in profiles.items():
        x = np.arange(1, len(p) + 1)
        ax1.semilogy(x, p, marker=".", label=name, lw=1)
    ax1.set_xlabel("input position j")
    ax1.set_ylabel(r"share of $\|\partial y_n/\partial x_j\|_F^2$")
    ax1.set_title("Influence of each input on the last output")
    ax1.legend(fontsize=7, ncol=2)
    return fig


def sweep_figure(wide, x, hue, ylabel):
    """``wide``: DataFrame with columns ``x``, ``hue``, ``value``; one line per ``hue``."""
    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    for h, g in wide.groupby(hue):
        g = g.sort_values(x)
        ax.plot(g[x], g["value"], marker="o", label=f"{hue} = {h}")
    ax.axhline(0.5, color="grey", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title("A sweep of the recency chapter")
    ax.legend()
    return fig
