"""The summary figure of a parameter sweep (see :mod:`attention_geometry.book.sweep`)."""

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from .theme import new_figure, set_theme

__all__ = ["sweep_summary_figure"]


def sweep_summary_figure(table, varying: list[str], title: str = "", max_panels: int = 4) -> Figure:
    """One panel per glued scalar (those that vary most, at most ``max_panels``),
    plotted against the first varying parameter, one line per value of the second.

    ``table`` is the tidy table of :func:`~attention_geometry.book.sweep.run_sweep`.
    The figure is not registered with pyplot: nothing is left open after saving it.
    """
    set_theme()
    done = table[(table["status"] == "done") & table["key"].notna()].copy()
    done["value"] = done["value"].astype(float)
    spread = done.groupby("key")["value"].agg(lambda v: np.nanstd(v) / (np.nanmean(np.abs(v)) + 1e-300))
    keys = list(spread.sort_values(ascending=False).index[:max_panels]) or list(done["key"].unique()[:1])
    fig = new_figure(figsize=(4.2 * max(len(keys), 1), 3.6))
    axes = fig.subplots(1, max(len(keys), 1), squeeze=False)
    x = varying[0] if varying else "run"
    hue = varying[1] if len(varying) > 1 else None
    for ax, key in zip(axes[0], keys):
        part = done[done["key"] == key]
        sns.lineplot(data=part, x=x, y="value", hue=hue, marker="o", ax=ax,
                     palette="viridis" if hue else None, legend="full" if hue else False)
        ax.set_title(key, fontsize=10)
        ax.set_xlabel(x)
        ax.set_ylabel("glued value")
    failed = int((table.drop_duplicates("run")["status"] == "failed").sum())
    fig.suptitle(f"{title}  ({failed} failed run{'s' if failed != 1 else ''})" if title else "")
    fig.tight_layout()
    return fig
