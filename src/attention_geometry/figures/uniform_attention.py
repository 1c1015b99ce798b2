"""Figures of chapter 2 (uniform attention and the majority task): one function per figure."""

from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it)
from .theme import new_figure as _new_figure

import numpy as np
import seaborn as sns

__all__ = ["plot_majority_curves", "plot_uniform_query_check", "plot_key_query_geometry", "plot_width_sweep"]

_LABELS = {
    "layernorm": r"LayerNorm (projection + scaling, norm $\sqrt{d}$)",
    "rmsnorm": r"scaling only, norm $\sqrt{d}$ (fair control)",
    "original_code": r"scaling only, norm $1/\sqrt{d}$ (original code)",
}

_PANELS = [
    ("loss", "training cross-entropy", "Training loss (the quantity of Fig. 2a)", "log"),
    ("test_accuracy", "test accuracy (per position)", "Accuracy on the test set", "linear"),
    ("angle", r"angle to $\mathbf{1}$ (degrees)", r"Angle of $W_K^\top W_Q x$ to $\mathbf{1}$ (Fig. 2b)", "linear"),
    ("score_scale", "largest possible |score|", "Score scale of the effective query", "log"),
]


def plot_majority_curves(runs, paper_angles=None):
    """Training curves of every norm variant: mean over seeds with the min-max band.

    ``runs``: dict variant name -> :class:`~attention_geometry.majority.MajorityRun`
    (curves ``(S, T)`` at ``steps: (T,)``). Four panels: training loss, test
    accuracy, the angle of the effective query to the line through 1, and its
    score scale. ``paper_angles``: optional ``{variant: (step, degrees)}``, values
    read from the paper's Fig. 2b, drawn as crosses.
    """
    fig = _new_figure(figsize=(11.5, 8.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True).ravel()
    colours = dict(zip(runs, sns.color_palette(n_colors=len(runs))))
    for ax, (key, ylabel, title, yscale) in zip(axes, _PANELS):
        for name, run in runs.items():
            values = getattr(run, key)
            ok = np.isfinite(values).all(0)
            ax.plot(run.steps[ok], values[:, ok].mean(0), color=colours[name], lw=1.8,
                    label=f"{_LABELS.get(name, name)}, {values.shape[0]} seeds")
            ax.fill_between(run.steps[ok], values[:, ok].min(0), values[:, ok].max(0), color=colours[name],
                            alpha=0.2, lw=0)
        ax.set(yscale=yscale, ylabel=ylabel, title=title)
    for name, (step, degrees) in (paper_angles or {}).items():
        axes[2].plot([step], [degrees], "X", ms=10, color=colours.get(name, "black"), mec="black",
                     label=f"paper, Fig. 2b: {degrees:g}° ({name})")
    if paper_angles:
        axes[2].legend(fontsize="x-small")
    for ax in axes[2:]:
        ax.set_xlabel("training step")
    axes[0].legend(fontsize="small")
    fig.suptitle("The majority task: mean over seeds (line) and min-max across seeds (band)")
    return fig


def plot_uniform_query_check(spread_ln, spread_scale, shift_change, cs):
    """The proposition, numerically: score spreads of a query along 1, and of shifted queries.

    ``spread_ln, spread_scale: (k,)`` the spread (max - min) of the scores that
    the query ``c 1`` gives LayerNorm keys and scaled-only keys, for the
    multiples ``cs: (k,)``; ``shift_change: (k,)`` the largest change of any
    score when ``c 1`` is added to random queries (LayerNorm keys).
    """
    fig = _new_figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.subplots()
    floor = 1e-17  # exact zeros at the bottom of the log axis
    ax.plot(cs, np.maximum(spread_scale, floor), "o-", label=r"scaled keys, query $c\,\mathbf{1}$: score spread")
    ax.plot(cs, np.maximum(spread_ln, floor), "s-", label=r"LayerNorm keys, query $c\,\mathbf{1}$: score spread")
    ax.plot(cs, np.maximum(shift_change, floor), "^-",
            label=r"LayerNorm keys, largest change of $q \cdot k$ when $c\,\mathbf{1}$ is added to $q$")
    ax.set(xscale="log", yscale="log", xlabel=r"multiple $c$", ylabel="score difference",
           title=r"Queries along $\mathbf{1}$: LayerNorm keys against scaled keys (float64)")
    ax.legend(fontsize="small")
    return fig


def plot_key_query_geometry(runs):
    """The d = 3 geometry after training (the paper's Fig. 1a-b): one 3-d panel per variant.

    ``runs``: dict variant -> :class:`~attention_geometry.majority.MajorityRun` with
    ``keys, queries: (S, C, 3)``: every seed's normed class embeddings (dots) and
    effective queries (crosses, the original's ``queries @ Q.T @ K / sqrt(d)``), drawn
    as segments from the origin, with the line through 1 (dashed).
    """
    fig = _new_figure(figsize=(11.0, 5.2), layout="constrained")
    palette = sns.color_palette()
    for i, (name, run) in enumerate(runs.items()):
        ax = fig.add_subplot(1, len(runs), i + 1, projection="3d")
        keys, queries = run.keys.reshape(-1, 3), run.queries.reshape(-1, 3)
        scale = max(np.abs(keys).max(), np.abs(queries).max(), 1e-12)
        for k in keys:
            ax.plot(*np.stack([np.zeros(3), k]).T, color=palette[3], lw=0.6, alpha=0.6)
        for q in queries:
            ax.plot(*np.stack([np.zeros(3), q]).T, color="black", lw=0.6, alpha=0.6)
        ax.scatter(*keys.T, s=10, color=palette[3], label="keys (normed embeddings)")
        ax.scatter(*queries.T, s=18, marker="x", color="black", label="effective queries")
        line = np.outer([-scale, scale], np.ones(3) / np.sqrt(3))
        ax.plot(*line.T, "--", color=palette[0], lw=1.2, label=r"the line through $\mathbf{1}$")
        ax.set(xlim=(-scale, scale), ylim=(-scale, scale), zlim=(-scale, scale), xlabel="x", ylabel="y",
               zlabel="z", title=f"{_LABELS.get(name, name)}\n{run.keys.shape[0]} seeds")
        ax.title.set_fontsize("small")
        ax.set_box_aspect((1, 1, 1))
        ax.legend(fontsize="x-small", loc="upper left")
    return fig


def _mean_and_halfwidth(values):
    """Mean over seeds and the half-width of its 95 % Student-t interval."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    return v.mean(), stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)


def plot_width_sweep(ws):
    """LayerNorm and the fair control against the width d: final test accuracy and final training loss,
    mean over seeds with 95 % intervals (error bars), and LayerNorm's points shifted one width left
    (open markers), where a value path one dimension narrower would put them.

    ``ws``: the chapter's width summary, ``{"acc": {...}, "loss": {...}}``, each with per-seed values
    ``{"layernorm": {d: (S,)}, "rmsnorm": {d: (S,)}}``.
    """
    fig = _new_figure(figsize=(11.0, 4.2), layout="constrained")
    axes = fig.subplots(1, 2)
    colours = dict(zip(("layernorm", "rmsnorm"), sns.color_palette(n_colors=2)))
    for ax, (short, label) in zip(axes, (("acc", "final test accuracy"), ("loss", "final training loss"))):
        for norm in ("layernorm", "rmsnorm"):
            per = ws[short][norm]
            dims = sorted(per)
            stats = np.array([_mean_and_halfwidth(per[d]) for d in dims])
            ax.errorbar(dims, stats[:, 0], yerr=stats[:, 1], marker="o", capsize=3, color=colours[norm],
                        label=_LABELS[norm])
            if norm == "layernorm":
                ax.errorbar(np.array(dims) - 1, stats[:, 0], yerr=stats[:, 1], marker="o", mfc="white", ls=":",
                            capsize=3, color=colours[norm], alpha=0.7, label="LayerNorm, drawn at $d - 1$")
        ax.set(xscale="log", xlabel="width $d$", ylabel=label, title=label.capitalize())
        ax.set_xticks(sorted(ws[short]["rmsnorm"]), labels=[str(d) for d in sorted(ws[short]["rmsnorm"])])
        ax.minorticks_off()
    axes[1].set_yscale("log")
    axes[0].legend(fontsize="small", loc="lower right")
    fig.suptitle("The width sweep: mean over seeds with 95 % intervals")
    return fig
