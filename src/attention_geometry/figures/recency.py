"""Figures of the recency chapter (chapter 6): one function per figure.

Every function takes arrays computed by :mod:`attention_geometry.recency` and
:mod:`attention_geometry.recency_theory` in the chapter and returns a
``matplotlib.figure.Figure`` without showing it, on the book's shared theme
(:func:`attention_geometry.figures.set_theme`). Score matrices are
``(layer, n, n)`` with query ``i`` down and key ``j`` across, 1-based in labels.
"""

import matplotlib as mpl
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from .theme import set_theme

__all__ = [
    "set_theme",
    "plot_score_heatmaps",
    "plot_key_profiles",
    "plot_rp_layers",
    "plot_rp_dims",
    "plot_regime",
]


def _causal_offdiag(S):
    """Copy of ``S: (..., n, n)`` with the diagonal and the future (upper triangle) set to NaN."""
    S = np.array(S, dtype=float)
    n = S.shape[-1]
    S[..., np.triu_indices(n)[0], np.triu_indices(n)[1]] = np.nan
    return S


def plot_score_heatmaps(rows, title, layers=None):
    r"""Mean attention scores, one row of panels per model, one column per layer.

    ``rows``: list of ``(label, scores)`` with ``scores: (layer, n, n)``. Off-diagonal
    causal entries are coloured on one scale per row (colour bar at the right); the
    diagonal, much larger with LayerNorm (:math:`\sqrt d`), is drawn in grey; the
    future is blank.
    """
    n_layers = rows[0][1].shape[0] if layers is None else len(layers)
    layers = range(1, n_layers + 1) if layers is None else layers
    n = rows[0][1].shape[-1]
    fig = Figure(figsize=(2.1 * n_layers + 1.2, 2.05 * len(rows) + 0.6), layout="constrained")
    axes = fig.subplots(len(rows), n_layers, squeeze=False)
    cmap = mpl.colormaps["viridis"]
    grey = np.where(np.eye(n, dtype=bool), 1.0, np.nan)
    for r, (label, scores) in enumerate(rows):
        off = _causal_offdiag(scores)
        lo, hi = np.nanmin(off[[l - 1 for l in layers]]), np.nanmax(off[[l - 1 for l in layers]])
        for c, layer in enumerate(layers):
            ax = axes[r, c]
            im = ax.imshow(off[layer - 1], cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")
            ax.imshow(grey, cmap=mpl.colors.ListedColormap(["0.75"]), interpolation="nearest")
            ax.set_xticks([0, n - 1], [1, n])
            ax.set_yticks([0, n - 1], [1, n])
            ax.grid(False)
            if r == 0:
                ax.set_title(f"layer {layer}")
            if c == 0:
                ax.set_ylabel(f"{label}\nquery $i$")
            if r == len(rows) - 1:
                ax.set_xlabel("key $j$")
        fig.colorbar(im, ax=axes[r, :].tolist(), shrink=0.9, pad=0.01, label="mean $S_{ij}$")
    fig.suptitle(title)
    return fig


def plot_key_profiles(keys, alphas, ours, paper, mc, d, gammas=(0.0, 1.0)):
    r""":math:`h(j)/h(1)` against key :math:`j`: closed forms and Monte Carlo, one panel per :math:`\gamma`.

    ``keys: (m,)`` 1-based; ``ours[(alpha, gamma)]`` and ``paper[(alpha, gamma)]``:
    ``(m,)`` closed forms (this book's, the paper's Eq. 41); ``mc[(alpha, gamma)]``:
    ``(mean: (m,), se: (m,))`` ratios :math:`\bar S_{nj}/\bar S_{n1}` of the last query, or
    ``None`` where Monte Carlo cannot resolve them.
    """
    fig = Figure(figsize=(11.0, 4.3), layout="constrained")
    axes = fig.subplots(1, len(gammas), sharey=True)
    colours = dict(zip(alphas, sns.color_palette("viridis", n_colors=len(alphas))))
    for ax, gamma in zip(axes, gammas):
        for alpha in alphas:
            c = colours[alpha]
            ax.plot(keys, ours[(alpha, gamma)], "-", color=c, lw=1.8, label=rf"$\alpha$ = {alpha:g}")
            if gamma != 0:
                ax.plot(keys, paper[(alpha, gamma)], "--", color=c, lw=1.2)
            if mc.get((alpha, gamma)) is not None:
                m, se = mc[(alpha, gamma)]
                ax.errorbar(keys, m, yerr=2 * se, fmt="o", ms=4, color=c, capsize=2, lw=1)
        ax.set(xlabel="key $j$", title=rf"$\gamma$ = {gamma:g}" + (" (no residual)" if gamma == 0 else
                                                                   " (residual)"))
        ax.set_xticks(keys)
    axes[0].set_ylabel(r"$h(j)/h(1) = S^{(2)}_{ij}/S^{(2)}_{i1}$")
    handles, labels = axes[0].get_legend_handles_labels()
    extra = [mpl.lines.Line2D([], [], color="black", lw=1.8, label="this book (closed form)"),
             mpl.lines.Line2D([], [], color="black", lw=1.2, ls="--", label="paper, Eq. 41"),
             mpl.lines.Line2D([], [], color="black", marker="o", ls="", label="Monte Carlo ± 2 SE")]
    axes[-1].legend(handles=handles + extra, fontsize="small", loc="upper left")
    fig.suptitle(rf"Second-layer key profile, $d$ = {d}: recency when the curve rises")
    return fig


def _rp_axes(ax, ylabel=True):
    ax.axhline(0.5, color="black", lw=0.8, ls=":")
    if ylabel:
        ax.set_ylabel(r"recency probability $P(S_{ik} > S_{ij}\mid i>k>j)$")


def plot_rp_layers(layers, alphas, rp, se, d, gammas=(0.0, 1.0)):
    r"""RP against layer, one line per :math:`\alpha`, one panel per :math:`\gamma`.

    ``rp[gamma], se[gamma]``: ``(len(alphas), len(layers))``; bars are ± 2 SE.
    """
    fig = Figure(figsize=(11.0, 4.2), layout="constrained")
    axes = fig.subplots(1, len(gammas), sharey=True)
    colours = sns.color_palette("viridis", n_colors=len(alphas))
    for ax, gamma in zip(axes, gammas):
        for a, alpha in enumerate(alphas):
            ax.errorbar(layers, rp[gamma][a], yerr=2 * se[gamma][a], fmt="o-", ms=4, capsize=2,
                        color=colours[a], label=rf"$\alpha$ = {alpha:g}")
        _rp_axes(ax, ylabel=ax is axes[0])
        ax.set(xlabel="layer", title=rf"$\gamma$ = {gamma:g}, $d$ = {d}")
        ax.set_xticks(layers)
    axes[0].legend(fontsize="small", title="anisotropy")
    fig.suptitle("Recency probability over depth (0.5 = no preference)")
    return fig


def plot_rp_dims(dims, alphas, rp, se, layers, gammas=(0.0, 1.0)):
    r"""RP against the width :math:`d`, one line per :math:`\alpha`; rows of panels are
    ``layers``, columns are :math:`\gamma`.

    ``rp[(gamma, layer)], se[(gamma, layer)]``: ``(len(alphas), len(dims))``; bars are ± 2 SE.
    """
    fig = Figure(figsize=(11.0, 3.6 * len(layers) + 0.4), layout="constrained")
    axes = fig.subplots(len(layers), len(gammas), sharey=True, squeeze=False)
    colours = sns.color_palette("viridis", n_colors=len(alphas))
    for r, layer in enumerate(layers):
        for ax, gamma in zip(axes[r], gammas):
            for a, alpha in enumerate(alphas):
                ax.errorbar(dims, rp[(gamma, layer)][a], yerr=2 * se[(gamma, layer)][a], fmt="o-",
                            ms=4, capsize=2, color=colours[a], label=rf"$\alpha$ = {alpha:g}")
            _rp_axes(ax, ylabel=gamma == gammas[0])
            ax.set(xscale="log", title=rf"$\gamma$ = {gamma:g}, layer {layer}")
            ax.set_xticks(dims, [str(x) for x in dims])
            ax.minorticks_off()
            if r == len(layers) - 1:
                ax.set_xlabel("width $d$")
    axes[0, 0].legend(fontsize="small", title="anisotropy")
    fig.suptitle("Recency probability against the width $d$")
    return fig


def plot_regime(dims, curves, n_samples):
    r"""Where Monte Carlo can see the theorem: the layer-2 recency contrast against :math:`d`.

    ``curves[label] = (closed: (k,), mc: (k,), se: (k,))`` for the contrast
    :math:`S^{(2)}_{n,n-1} - S^{(2)}_{n,1}`: closed form, Monte Carlo mean and its
    standard error at ``n_samples`` sequences. Left: magnitudes on a log scale (the
    closed form falls below the standard error where Monte Carlo cannot resolve it).
    Right: the Monte Carlo contrast in standard errors, with ± 2.
    """
    fig = Figure(figsize=(11.5, 4.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = dict(zip(curves, sns.color_palette(n_colors=len(curves))))
    for label, (closed, mc, se) in curves.items():
        c = colours[label]
        left.plot(dims, closed, "-", color=c, lw=1.8, label=f"{label}: closed form")
        left.plot(dims, se, ":", color=c, lw=1.5, label=f"{label}: Monte Carlo SE")
        pos = mc > 0
        left.plot(np.asarray(dims)[pos], mc[pos], "o", color=c, ms=5, label=f"{label}: Monte Carlo (if > 0)")
        right.plot(dims, mc / se, "o-", color=c, ms=5, label=f"{label}: Monte Carlo / SE")
        right.plot(dims, closed / se, "--", color=c, lw=1.2, label=f"{label}: closed form / SE")
    left.set(xscale="log", yscale="log", xlabel="width $d$",
             ylabel=r"$S^{(2)}_{n,n-1} - S^{(2)}_{n,1}$",
             title=f"Effect against noise ({n_samples:,} sequences)")
    left.legend(fontsize="x-small")
    right.axhspan(-2, 2, color="0.85", zorder=0, label="|z| < 2: not resolved")
    right.set(xscale="log", yscale="symlog", xlabel="width $d$", ylabel="contrast / standard error",
              title="Signal-to-noise of the recency contrast")
    right.legend(fontsize="x-small")
    for ax in (left, right):
        ax.set_xticks(dims, [str(x) for x in dims])
        ax.minorticks_off()
    return fig
