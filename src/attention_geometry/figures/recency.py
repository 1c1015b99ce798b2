"""Figures of the recency chapter (chapter 6): one function per figure.

Every function takes arrays computed by :mod:`attention_geometry.recency.simulation`,
:mod:`attention_geometry.recency.theory` and
:mod:`attention_geometry.recency.extensions` in the chapter and returns a
``matplotlib.figure.Figure`` (:func:`~attention_geometry.figures.theme.new_figure`)
without showing it, on the book's shared theme. Score matrices are
``(layer, n, n)`` with query ``i`` down and key ``j`` across, 1-based in labels.
Error bars are ``± 2`` standard errors.
"""

import matplotlib as mpl
import numpy as np
import seaborn as sns

from .theme import new_figure, set_theme

__all__ = [
    "set_theme",
    "SCALES",
    "heatmap_limits",
    "plot_score_heatmaps",
    "plot_key_profiles",
    "plot_rp_layers",
    "plot_rp_dims",
    "plot_missing_factor",
    "plot_extensions",
    "plot_nope",
]

#: Colour scales of the heat maps: ``"paper"`` the authors' (per panel, upper limit
#: at the second-largest distinct value, larger entries white), ``"panel"`` one
#: scale per panel over the off-diagonal entries, ``"row"`` one scale per row.
SCALES = ("paper", "panel", "row")


def _causal(S, diagonal=True):
    """Copy of ``S: (..., n, n)`` with the future (and, if not ``diagonal``, the diagonal) NaN."""
    S = np.array(S, dtype=float)
    n = S.shape[-1]
    rows, cols = np.triu_indices(n, 0 if not diagonal else 1)
    S[..., rows, cols] = np.nan
    return S


def heatmap_limits(panel, scale="paper", rtol=1e-5):
    """``(vmin, vmax)`` of one panel ``(n, n)`` (mean scores) under colour scale ``scale``.

    ``"paper"``: the rule of the authors' plotting code (their later repository
    version, ``_plot_heatmap``): the upper limit is the second-largest distinct
    value of the panel, so that a diagonal of equal entries (:math:`\\sqrt d` with
    LayerNorm) lies above it and is drawn white. Their float32 means of equal
    entries coincide; ours are float64 means of float32 scores, so "distinct"
    means more than a relative ``rtol`` apart. ``"panel"``: the off-diagonal
    causal entries' range.
    """
    if scale == "paper":
        vals = np.sort(_causal(panel)[np.isfinite(_causal(panel))])[::-1]
        below = vals[vals < vals[0] - rtol * abs(vals[0])]
        return float(vals[-1]), float(below[0] if below.size else vals[0])
    off = _causal(panel, diagonal=False)
    return float(np.nanmin(off)), float(np.nanmax(off))


def plot_score_heatmaps(rows, title, layers=None, scale="paper", rp=None):
    r"""Mean attention scores, one row of panels per model, one column per layer.

    ``rows``: list of ``(label, scores)`` with ``scores: (layer, n, n)``; ``scale``
    one of :data:`SCALES` (:func:`heatmap_limits`); with ``"paper"`` the diagonal is
    data (entries above the limit white), otherwise it is grey and off the scale.
    ``rp``: optional ``(len(rows), layer)`` recency probabilities written in each panel,
    as the authors' later figures do. The future is blank.
    """
    layers = list(layers or range(1, rows[0][1].shape[0] + 1))
    n = rows[0][1].shape[-1]
    fig = new_figure(figsize=(2.35 * len(layers) + 0.8, 2.15 * len(rows) + 0.6), layout="constrained")
    axes = fig.subplots(len(rows), len(layers), squeeze=False)
    cmap = mpl.colormaps["rocket"].with_extremes(over="white")
    grey = np.where(np.eye(n, dtype=bool), 1.0, np.nan)
    for r, (label, scores) in enumerate(rows):
        row_lim = (np.nanmin(_causal(scores[[l - 1 for l in layers]], False)),
                   np.nanmax(_causal(scores[[l - 1 for l in layers]], False)))
        for c, layer in enumerate(layers):
            ax = axes[r, c]
            lo, hi = row_lim if scale == "row" else heatmap_limits(scores[layer - 1], scale)
            shown = _causal(scores[layer - 1], diagonal=scale == "paper")
            im = ax.imshow(shown, cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")
            if scale != "paper":
                ax.imshow(grey, cmap=mpl.colors.ListedColormap(["0.75"]), interpolation="nearest")
            if scale != "row" or c == len(layers) - 1:
                fig.colorbar(im, ax=ax if scale != "row" else axes[r, :].tolist(), shrink=0.85, pad=0.02)
            if rp is not None:
                ax.text(0.96, 0.04, f"RP={rp[r][layer - 1]:.4f}", transform=ax.transAxes, ha="right",
                        va="bottom", fontsize="x-small", bbox={"boxstyle": "round,pad=0.15", "fc": "white",
                                                               "alpha": 0.8})
            ax.set_xticks([0, n - 1], [1, n])
            ax.set_yticks([0, n - 1], [1, n])
            ax.grid(False)
            if r == 0:
                ax.set_title(f"layer {layer}")
            if c == 0:
                ax.set_ylabel(f"{label}\nquery $i$")
            if r == len(rows) - 1:
                ax.set_xlabel("key $j$")
    fig.suptitle(title)
    return fig


def plot_key_profiles(keys, alphas, ours, paper, mc, d, gammas=(0.0, 1.0)):
    r""":math:`h(j)/h(1)` against key :math:`j`: closed forms and Monte Carlo, one panel per :math:`\gamma`.

    ``keys: (m,)`` 1-based; ``ours[(alpha, gamma)]`` and ``paper[(alpha, gamma)]``:
    ``(m,)`` closed forms (this book's, the paper's Eq. 41), both as ratios to key 1;
    ``mc[(alpha, gamma)]``: ``(mean: (m,), se: (m,))`` ratios :math:`\bar S_{nj}/\bar S_{n1}` of
    the last query, or ``None`` where Monte Carlo cannot resolve them.
    """
    fig = new_figure(figsize=(11.0, 4.3), layout="constrained")
    axes = fig.subplots(1, len(gammas), sharey=True)
    colours = dict(zip(alphas, sns.color_palette("viridis", n_colors=len(alphas))))
    for ax, gamma in zip(axes, gammas):
        for alpha in alphas:
            c = colours[alpha]
            ax.plot(keys, ours[(alpha, gamma)], "-", color=c, lw=1.8, label=rf"$c$ = {alpha:g}")
            if gamma != 0:
                ax.plot(keys, paper[(alpha, gamma)], "--", color=c, lw=1.2)
            if mc.get((alpha, gamma)) is not None:
                m, se = mc[(alpha, gamma)]
                ax.errorbar(keys, m, yerr=2 * se, fmt="o", ms=4, color=c, capsize=2, lw=1)
        ax.set(xlabel="key $j$", title=rf"$\omega$ = {gamma:g}" + (" (no residual)" if gamma == 0 else
                                                                   " (residual)"))
        ax.set_xticks(keys)
    axes[0].set_ylabel(r"$\kappa(j)/\kappa(1) = S^{(2)}_{ij}/S^{(2)}_{i1}$")
    handles, _ = axes[0].get_legend_handles_labels()
    extra = [mpl.lines.Line2D([], [], color="black", lw=1.8, label="this book (closed form)"),
             mpl.lines.Line2D([], [], color="black", lw=1.2, ls="--", label="paper, Eq. 41"),
             mpl.lines.Line2D([], [], color="black", marker="o", ls="", label="Monte Carlo ± 2 SE")]
    axes[-1].legend(handles=handles + extra, fontsize="small", loc="upper left")
    fig.suptitle(rf"Second-layer key profile $\kappa(j)/\kappa(1)$, $d$ = {d}: recency when the curve rises")
    return fig


def _rp_axes(ax, ylabel=True):
    ax.axhline(0.5, color="black", lw=0.8, ls=":")
    if ylabel:
        ax.set_ylabel(r"recency probability $P(S_{ik} > S_{ij}\mid i>k>j)$")


def plot_rp_layers(layers, alphas, rp, se, d, gammas=(0.0, 1.0)):
    r"""RP against layer, one line per :math:`\alpha`, one panel per :math:`\gamma`.

    ``rp[gamma], se[gamma]``: ``(len(alphas), len(layers))``.
    """
    fig = new_figure(figsize=(11.0, 4.2), layout="constrained")
    axes = fig.subplots(1, len(gammas), sharey=True)
    colours = sns.color_palette("viridis", n_colors=len(alphas))
    for ax, gamma in zip(axes, gammas):
        for a, alpha in enumerate(alphas):
            ax.errorbar(layers, rp[gamma][a], yerr=2 * se[gamma][a], fmt="o-", ms=4, capsize=2,
                        color=colours[a], label=rf"$c$ = {alpha:g}")
        _rp_axes(ax, ylabel=ax is axes[0])
        ax.set(xlabel="layer", title=rf"$\gamma$ = {gamma:g}, $d$ = {d}")
        ax.set_xticks(layers)
    axes[0].legend(fontsize="small", title="token correlation")
    fig.suptitle("Recency probability over depth (0.5 = no preference)")
    return fig


def plot_rp_dims(dims, alphas, rp, se, layers, gammas=(0.0, 1.0)):
    r"""RP against the width :math:`d`, one line per :math:`\alpha`; rows of panels are
    ``layers``, columns are :math:`\gamma`.

    ``rp[(gamma, layer)], se[(gamma, layer)]``: ``(len(alphas), len(dims))``.
    """
    fig = new_figure(figsize=(11.0, 2.9 * len(layers) + 0.4), layout="constrained")
    axes = fig.subplots(len(layers), len(gammas), sharey=True, squeeze=False)
    colours = sns.color_palette("viridis", n_colors=len(alphas))
    for r, layer in enumerate(layers):
        for ax, gamma in zip(axes[r], gammas):
            for a, alpha in enumerate(alphas):
                ax.errorbar(dims, rp[(gamma, layer)][a], yerr=2 * se[(gamma, layer)][a], fmt="o-",
                            ms=4, capsize=2, color=colours[a], label=rf"$c$ = {alpha:g}")
            _rp_axes(ax, ylabel=gamma == gammas[0] and r == len(layers) // 2)
            ax.set(xscale="log", title=rf"$\gamma$ = {gamma:g}, layer {layer}")
            ax.set_xticks(dims, [str(x) for x in dims])
            ax.minorticks_off()
            if r == len(layers) - 1:
                ax.set_xlabel("width $d$")
    axes[0, 0].legend(fontsize="small", title="token correlation")
    fig.suptitle("Recency probability against the width $d$, every layer")
    return fig


def plot_missing_factor(curves, limits):
    r"""The layer-2 contrast over the paper's closed form, against the width :math:`d`.

    ``curves[label] = (dims: (k,), measured: (k,), se: (k,), adjusted: (k,))``: the
    Monte Carlo contrast (control variates) and the adjusted closed form, both divided
    by the paper's closed form; ``limits[label]``: the limit of the ratio. Left: the
    ratios with the limits (dotted); right: Monte Carlo over the adjusted form, which
    tends to 1.
    """
    fig = new_figure(figsize=(11.5, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = dict(zip(curves, sns.color_palette(n_colors=len(curves))))
    for label, (dims, measured, se, adjusted) in curves.items():
        c = colours[label]
        left.errorbar(dims, measured, yerr=2 * se, fmt="o", ms=5, capsize=2, color=c,
                      label=f"{label}: Monte Carlo / paper")
        left.plot(dims, adjusted, "-", color=c, lw=1.5, label=f"{label}: adjusted / paper")
        left.axhline(limits[label], color=c, ls=":", lw=1.2)
        right.errorbar(dims, measured / adjusted, yerr=2 * se / adjusted, fmt="o-", ms=5, capsize=2, color=c,
                       label=label)
    left.axhline(1.0, color="black", lw=0.8)
    left.set(xscale="log", xlabel="width $d$", ylabel="contrast / paper's closed form",
             title="Monte Carlo over the paper's form (dotted: its limit)")
    right.axhline(1.0, color="black", lw=0.8)
    right.set(xscale="log", xlabel="width $d$", ylabel="Monte Carlo / adjusted closed form",
              title="Monte Carlo over the adjusted closed form")
    for ax in (left, right):
        ax.legend(fontsize="x-small")
    return fig


def plot_extensions(layers, results):
    r"""Recency probability over depth for each addition to the paper's layer.

    ``results[label] = (with_ln, without_ln)``, each a sequence of Estimates (one per
    layer): solid with LayerNorm, dashed without.
    """
    fig = new_figure(figsize=(8.5, 4.4), layout="constrained")
    ax = fig.subplots()
    colours = dict(zip(results, sns.color_palette(n_colors=len(results))))
    shift = np.linspace(-0.12, 0.12, len(results))
    for (label, (ln, none)), dx in zip(results.items(), shift):
        c = colours[label]
        for ests, ls, suffix in ((ln, "-", ""), (none, "--", " (no LN)")):
            ax.errorbar(np.asarray(layers) + dx, [e.value for e in ests], yerr=[2 * e.se for e in ests],
                        fmt="o" + ls, ms=4, capsize=2, color=c, label=label + suffix if ls == "-" else None)
    _rp_axes(ax)
    ax.plot([], [], "k--", label="the same without LayerNorm")
    ax.set(xlabel="layer", title="One addition at a time (error bars: spread over weight draws)")
    ax.set_xticks(layers)
    ax.legend(fontsize="x-small")
    return fig


def plot_nope(losses, layers, before, after):
    r"""The NoPE decoder: training loss (left; ``losses (n_steps,)`` or one row per training
    seed) and each layer's recency probability before and after training (right).
    ``before``, ``after``: sequences of Estimates, one per layer."""
    fig = new_figure(figsize=(10.5, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2)
    losses = np.atleast_2d(losses)
    steps = np.arange(1, losses.shape[1] + 1)
    for row in losses:
        left.plot(steps, row, lw=0.6, alpha=0.35, color="C0")
    mean = losses.mean(0)
    if len(mean) >= 20:
        w = max(len(mean) // 20, 1)
        left.plot(steps[w - 1:], np.convolve(mean, np.ones(w) / w, mode="valid"), lw=1.8, color="C1",
                  label="mean over seeds" if len(losses) > 1 else "running mean")
        left.legend(fontsize="small")
    left.set(xlabel="step", ylabel="cross-entropy (nats per byte)", title="Training", yscale="log")
    for ests, label, m in ((before, "at initialisation", "s"), (after, "trained", "o")):
        right.errorbar(layers, [e.value for e in ests], yerr=[2 * e.se for e in ests], fmt=m + "-", ms=5,
                       capsize=2, label=label)
    _rp_axes(right)
    right.set(xlabel="layer", title="Recency of the attention scores")
    right.set_xticks(layers)
    right.legend(fontsize="small")
    return fig
