"""Figures of the chapter "Jacobians of real decoders": one function per figure.

Each takes arrays computed by :mod:`attention_geometry.jacobians` in the chapter
and returns a ``matplotlib.figure.Figure``.
"""

from .theme import set_theme  # noqa: F401  (the chapter calls set_theme once)

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

__all__ = ["plot_estimator_variance", "plot_profiles_vs_theory", "plot_pretrained_vs_init"]


def plot_estimator_variance(exact_rho2, cases: dict):
    """Predicted against measured variance of the estimate of rho(j)^2.

    ``exact_rho2: (L,)``; ``cases[label] = (predicted: (L,), measured: (L,))``.
    Left: both against position (log scale); right: measured against predicted.
    """
    fig = Figure(figsize=(11.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    L = len(exact_rho2)
    x = np.arange(1, L + 1) / L
    colours = sns.color_palette(n_colors=len(cases))
    for (label, (pred, meas)), c in zip(cases.items(), colours):
        left.plot(x, pred / exact_rho2**2, color=c, lw=1.5, label=f"{label}: derived")
        left.plot(x, meas / exact_rho2**2, "o", color=c, ms=3, mfc="white", label=f"{label}: measured")
        right.loglog(pred / exact_rho2**2, meas / exact_rho2**2, "o", color=c, ms=3, label=label)
    lim = right.get_xlim()
    right.plot(lim, lim, color="black", lw=1, ls="--", label="equality")
    left.set(yscale="log", xlabel="position $x = j/L$",
             ylabel=r"relative variance Var$[\hat\rho^2_j] / \rho_j^4$",
             title="Variance of the estimator against position")
    right.set(xlabel="derived relative variance", ylabel="measured relative variance",
              title="Measured against derived (one point per position)")
    left.legend(fontsize="x-small", ncols=2)
    right.legend(fontsize="small")
    return fig


def plot_profiles_vs_theory(panels: dict, H: int):
    """Measured profiles on a log scale with the fitted Cesàro theory.

    ``panels[(row_label, col_label)] = {curve_label: (rho: (L,), theory: (L,) or None)}``;
    rows are, e.g., initialisation scales, columns architectures.
    """
    rows = list(dict.fromkeys(r for r, _ in panels))
    cols = list(dict.fromkeys(c for _, c in panels))
    fig = Figure(figsize=(5.6 * len(cols), 3.8 * len(rows)), layout="constrained")
    axes = np.atleast_2d(fig.subplots(len(rows), len(cols), squeeze=False))
    colours = sns.color_palette()
    for (r, c), curves in panels.items():
        ax = axes[rows.index(r), cols.index(c)]
        for i, (label, (rho, theory)) in enumerate(curves.items()):
            x = np.arange(1, len(rho) + 1) / len(rho)
            ax.plot(x, rho, color=colours[i], lw=1.3, label=f"{label}: measured")
            if theory is not None:
                ax.plot(x, theory, color=colours[i], lw=1.3, ls="--", label=f"{label}: Cesàro fit")
        ax.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)$",
               title=f"{c}, {r}")
        ax.legend(fontsize="x-small")
    fig.suptitle(rf"Jacobian profiles at initialisation ($H$ = {H}), log scale")
    return fig


def plot_pretrained_vs_init(curves: dict, title: str):
    """The pretrained decoder's profile next to its random-init twin.

    ``curves[label] = (rho: (L,), band: (L,) or None, theory: (L,) or None)``;
    ``band`` is a standard error drawn as +-2 SE around ``rho``. Left: raw, log
    scale; right: each profile divided by its value at the last position.
    """
    fig = Figure(figsize=(11.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = sns.color_palette()
    for i, (label, (rho, band, theory)) in enumerate(curves.items()):
        x = np.arange(1, len(rho) + 1) / len(rho)
        for ax, scale in [(left, 1.0), (right, 1.0 / rho[-1])]:
            ax.plot(x, rho * scale, color=colours[i], lw=1.2, label=label)
            if band is not None:
                ax.fill_between(x, np.maximum(rho - 2 * band, rho * 1e-3) * scale, (rho + 2 * band) * scale,
                                color=colours[i], alpha=0.2, lw=0)
            if theory is not None:
                ax.plot(x, theory * scale, color=colours[i], lw=1.2, ls="--", label=f"{label}: Cesàro fit")
    left.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)$", title="Raw (band: ±2 SE)")
    right.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j) / \rho(L)$",
              title="Anchored at the last position")
    left.legend(fontsize="small")
    fig.suptitle(title)
    return fig
