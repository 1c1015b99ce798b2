"""Figures of chapter 3 (selectability): one function per figure."""

from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it)
from .theme import new_figure as _new_figure

import numpy as np
import seaborn as sns

__all__ = [
    "plot_selectability_heatmaps",
    "plot_gaussian_growth",
    "plot_tiny_training",
    "plot_along_training",
    "plot_layer_table",
    "plot_pretrained_selectability",
    "plot_multihead_example",
]


def plot_selectability_heatmaps(ns, ds, grid_plain, grid_ln, n_sets, contour=None):
    """Heat maps over key count ``ns: (a,)`` and dimension ``ds: (b,)`` (the paper's Fig. 1c-d).

    ``grid_plain``, ``grid_ln``: dicts with ``"any"`` and ``"mean"`` arrays
    ``(a, b)`` from :func:`attention_geometry.selectability.selectability_grid`.
    Three panels: sets with an unselectable key (no LN, with LN), and the mean
    fraction of unselectable keys (no LN). ``contour``: optional ``(n_star, low,
    high)`` arrays ``(b,)``, the 50 % contour drawn on the first panel.
    """
    fig = _new_figure(figsize=(14.0, 4.6), layout="constrained")
    axes = fig.subplots(1, 3)
    panels = [
        (grid_plain["any"], "Gaussian keys: sets with $\\geq 1$ unselectable key"),
        (grid_ln["any"], "After LayerNorm: sets with $\\geq 1$ unselectable key"),
        (grid_plain["mean"], "Gaussian keys: mean fraction of unselectable keys"),
    ]
    extent = (ds[0] - 0.5, ds[-1] + 0.5, ns[0] - 0.5, ns[-1] + 0.5)
    for ax, (data, title) in zip(axes, panels):
        im = ax.imshow(data, origin="lower", aspect="auto", extent=extent, vmin=0, vmax=1, cmap="viridis",
                       interpolation="nearest")
        ax.set(xlabel="key dimension $d$", ylabel="number of keys $n$", title=title)
        ax.title.set_fontsize("small")
        ax.grid(False)
    if contour is not None:
        n_star, low, high = contour
        axes[0].plot(ds, n_star, "w-", lw=1.5, label="50 % contour $n^*(d)$")
        axes[0].fill_between(ds, low, np.where(np.isnan(high), ns[-1], high), color="white", alpha=0.3, lw=0)
        axes[0].legend(fontsize="x-small", loc="upper right")
    cb = fig.colorbar(im, ax=axes, shrink=0.9)
    cb.set_label(f"fraction (of {n_sets} sets per cell / of keys)")
    return fig


def plot_gaussian_growth(ns, percent, ranges=None):
    """The % of unselectable keys of Gaussian sets against their size.

    ``ns: (k,)`` set sizes; ``percent``: dict label -> ``(mean (k,), se (k,))``;
    ``ranges``: optional dict label -> ``(low, high)`` of key counts to shade
    (the ranges of the paper's tables)."""
    fig = _new_figure(figsize=(7.5, 4.3), layout="constrained")
    ax = fig.subplots()
    for label, (mean, se) in percent.items():
        ax.errorbar(ns, mean, yerr=2 * np.asarray(se), marker="o", capsize=3, label=label)
    for i, (label, (lo, hi)) in enumerate((ranges or {}).items()):
        ax.axvspan(lo, hi, color=sns.color_palette()[4 + i], alpha=0.15, label=label)
    ax.set(xscale="log", xlabel="number of keys $n$", ylabel="% unselectable keys (± 2 s.e.)",
           title="Gaussian keys: the unselectable fraction grows with $n$")
    ax.legend(fontsize="small")
    return fig


def plot_tiny_training(losses, held_out):
    """Left: training loss of the tiny decoders (``losses: {norm: (steps,)}``, running
    mean). Right: held-out loss per window (``held_out: {norm: (N,)}``), one
    point per window, paired across the norms."""
    fig = _new_figure(figsize=(12.0, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    for norm, loss in losses.items():
        w = max(1, len(loss) // 50)
        smooth = np.convolve(loss, np.ones(w) / w, mode="valid")
        left.plot(np.arange(len(smooth)) + w, smooth, label=norm)
    left.set(xlabel="training step", ylabel="cross-entropy (nats per byte)",
             title="Training loss (running mean; the quantity of Fig. 4)", yscale="log")
    left.legend()
    names = list(held_out)
    a, b = (np.asarray(held_out[n]) for n in names[:2])
    right.scatter(a, b, s=12, alpha=0.6)
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    right.plot([lo, hi], [lo, hi], "k--", lw=1, label="equal loss")
    right.set(xlabel=f"held-out loss, {names[0]}", ylabel=f"held-out loss, {names[1]}",
              title="Held-out windows: one point per window")
    right.legend(fontsize="small")
    return fig


def plot_along_training(rows):
    """Left: % unselectable keys against training step (mean over key sets and layers, ± 2 s.e.: over
    the training seeds, or over the sets with one seed), one line per model and place, with the Gaussian
    level of the same sets (dashed, same colour). Right: the held-out loss at each snapshot (± 2 s.e. over
    the seeds, or over the windows with one seed). ``rows``: the long
    DataFrame of :func:`attention_geometry.book.chapters.selectability.along_rows`."""
    fig = _new_figure(figsize=(12.5, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = dict(zip(rows["what"].unique(), sns.color_palette()))
    for what, part in rows.groupby("what", sort=False):
        part = part.sort_values("step")
        left.errorbar(part["step"], part["percent"], yerr=2 * part["se"], marker="o", capsize=3, label=what,
                      color=colours[what])
        left.axhline(part["gaussian"].iloc[0], color=colours[what], ls="--", lw=1)
    for ax in (left, right):
        ax.set_xscale("symlog", linthresh=10)  # step 0 is on the axis
        ax.set_xlim(-0.5, rows["step"].max() * 1.3)
    left.set(xlabel="training step", ylabel="% unselectable keys (± 2 s.e.)",
             title="Unselectable keys along training (dashed: Gaussian, same sets)")
    left.legend(fontsize="x-small")
    for norm, part in rows.drop_duplicates(["norm", "step"]).groupby("norm", sort=False):
        part = part.sort_values("step")
        right.errorbar(part["step"], part["held"], yerr=2 * part["held_se"], marker="o", capsize=3, label=norm)
    right.set(xlabel="training step", ylabel="held-out loss (nats per byte, ± 2 s.e.)",
              title="Held-out loss at each snapshot")
    right.legend(fontsize="small")
    return fig


def plot_layer_table(table):
    """% unselectable per layer, with the paper's values and the Gaussian baseline.

    ``table``: a long DataFrame with columns ``layer``, ``what``, ``percent``,
    ``se`` and ``source`` (``"this book"``, ``"paper"`` or ``"Gaussian, same n"``)."""
    fig = _new_figure(figsize=(9.0, 4.5), layout="constrained")
    ax = fig.subplots()
    palette = dict(zip(table["what"].unique(), sns.color_palette()))
    styles = {"this book": ("o", "-"), "paper": ("X", ":"), "Gaussian, same n": ("s", "--")}
    for (what, source), part in table.groupby(["what", "source"], sort=False):
        marker, ls = styles.get(source, ("o", "-"))
        ax.errorbar(part["layer"], part["percent"], yerr=2 * part["se"].fillna(0), marker=marker, ls=ls,
                    color=palette[what], capsize=3, label=f"{what} ({source})")
    ax.set(xlabel="layer", ylabel="% unselectable keys (± 2 s.e.)", xticks=sorted(table["layer"].unique()),
           title="Keys of the tiny decoder per layer")
    ax.legend(fontsize="x-small", ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.15))
    return fig


def plot_pretrained_selectability(table):
    """% unselectable per layer of the pretrained decoder; ``table``: DataFrame
    with columns ``layer``, ``what``, ``percent``."""
    fig = _new_figure(figsize=(8.0, 4.0), layout="constrained")
    ax = fig.subplots()
    sns.lineplot(data=table, x="layer", y="percent", hue="what", style="what", markers=True, ax=ax)
    ax.set(xlabel="layer", ylabel="% unselectable keys", title="SmolLM2-135M: keys per layer")
    ax.legend(fontsize="small")
    return fig


def plot_multihead_example(normed_2d, keys, unselectable):
    """The constructed example: normed states (``normed_2d: (n, 3)``, coordinates
    in a basis of :math:`H`) on the sphere, and their keys (``keys: (n, 2)``)
    with the unselectable ones marked (``unselectable: (n,)`` bool)."""
    fig = _new_figure(figsize=(10.0, 4.6), layout="constrained")
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    ax2 = fig.add_subplot(1, 2, 2)
    c = sns.color_palette()
    t = np.linspace(0, 2 * np.pi, 200)
    r = np.linalg.norm(normed_2d[0])
    for a in np.linspace(-np.pi / 2, np.pi / 2, 7):
        ax3.plot(r * np.cos(a) * np.cos(t), r * np.cos(a) * np.sin(t), r * np.sin(a) * np.ones_like(t),
                 color="grey", lw=0.4)
    colours = [c[3] if u else c[0] for u in unselectable]
    ax3.scatter(*normed_2d.T, s=40, c=colours, edgecolor="black")
    ax3.set(xlabel="$u_1$", ylabel="$u_2$", zlabel="$u_3$",
            title="normed states on the sphere in $H$\n(red: the one whose key is unselectable)")
    ax3.set_box_aspect((1, 1, 1))
    hull = keys[~unselectable]
    order = np.argsort(np.arctan2(hull[:, 1], hull[:, 0]))
    ring = np.vstack([hull[order], hull[order][:1]])
    ax2.fill(ring[:, 0], ring[:, 1], color=c[0], alpha=0.15, label="convex hull of the other keys")
    ax2.scatter(*keys[~unselectable].T, s=50, color=c[0], edgecolor="black", label="selectable")
    ax2.scatter(*keys[unselectable].T, s=70, color=c[3], marker="X", edgecolor="black", label="unselectable")
    ax2.set(xlabel="key coordinate 1", ylabel="key coordinate 2", title="keys $W_K\\,\\mathrm{LN}(x)$", aspect="equal")
    ax2.legend(fontsize="small", loc="upper right")
    return fig
