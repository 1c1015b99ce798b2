"""Figures of chapter 2 (uniform attention and the majority task): one function per figure."""

from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it)
from .theme import new_figure as _new_figure

import numpy as np
import seaborn as sns

__all__ = ["plot_majority_curves", "plot_uniform_query_check"]

_LABELS = {
    "layernorm": r"LayerNorm (projection + scaling, norm $\sqrt{d}$)",
    "rmsnorm": r"scaling only, norm $\sqrt{d}$ (fair control)",
    "original_code": r"scaling only, norm $1/\sqrt{d}$ (original code)",
}

_PANELS = [
    ("test_loss", "test cross-entropy", "Loss (held-out sequences)", "log"),
    ("test_accuracy", "test accuracy (per position)", "Accuracy", "linear"),
    ("angle", r"angle to $\mathbf{1}$ (degrees)", r"Angle between $W_K^\top W_Q x$ and $\mathbf{1}$", "linear"),
    ("score_scale", "largest possible |score|", "Score scale of the effective query", "log"),
]


def plot_majority_curves(runs, loss_threshold=None):
    """Training curves of every norm variant, mean over seeds with the min-max band.

    ``runs``: dict variant name -> :class:`~attention_geometry.majority.MajorityRun`
    (arrays ``(S, T)`` at ``steps: (T,)``). Four panels: test loss (with a
    dashed line at ``loss_threshold`` if given), test accuracy, the angle of
    the effective query to the line through 1, and its score scale.
    """
    fig = _new_figure(figsize=(11.5, 8.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True).ravel()
    colours = dict(zip(runs, sns.color_palette(n_colors=len(runs))))
    for ax, (key, ylabel, title, yscale) in zip(axes, _PANELS):
        for name, run in runs.items():
            values = getattr(run, key)
            mean = values.mean(0)
            ax.plot(run.steps, mean, color=colours[name], lw=1.8,
                    label=f"{_LABELS.get(name, name)}, {values.shape[0]} seeds")
            ax.fill_between(run.steps, values.min(0), values.max(0), color=colours[name], alpha=0.2, lw=0)
        if key == "test_loss" and loss_threshold is not None:
            ax.axhline(loss_threshold, color="black", ls="--", lw=1, label=f"threshold {loss_threshold:g}")
        ax.set(yscale=yscale, ylabel=ylabel, title=title)
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
