"""Figures of chapter 5 (LayerNorm equilibria): one function per figure.

The collapse curves use :func:`.rank_collapse.plot_mu_bands`, shared with chapter 4.
"""

import numpy as np
import seaborn as sns

from .rank_collapse import plot_mu_bands  # noqa: F401  (re-exported: chapter 5 draws mu bands too)
from .theme import new_figure as _new_figure
from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it once)

__all__ = ["plot_mu_bands", "plot_phase_portrait", "plot_token_geometry"]


def plot_phase_portrait(theta_eq, stable, circle_theta, residual, grid, label_img, labels):
    """The causal N = 2, d = 2 counterexample, two panels.

    Left: the token-2 circle map with token 1 at its attractor, ``residual`` =
    wrapped ``g(theta2) - theta2`` over ``circle_theta`` (zeros are equilibria,
    positive means the flow moves counter-clockwise). Right: basins on the torus,
    ``label_img: (n, n)`` integer labels over ``grid`` with names ``labels``;
    equilibria ``theta_eq: (k, 2)``, filled if ``stable``.
    """
    fig = _new_figure(figsize=(11.5, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.plot(circle_theta, residual, color="black")
    left.axhline(0, color="grey", lw=0.8)
    left.fill_between(circle_theta, residual, 0, where=residual > 0, color="C0", alpha=0.2,
                      label="moves counter-clockwise")
    left.fill_between(circle_theta, residual, 0, where=residual < 0, color="C3", alpha=0.2,
                      label="moves clockwise")
    left.set(xlabel=r"token 2 angle $\theta_2$ (token 1 at $e_1$)",
             ylabel=r"step $g(\theta_2) - \theta_2$ (wrapped)",
             title="Token 2 on the circle, token 1 at its attractor")
    left.legend(fontsize="small")
    cmap = sns.color_palette("pastel", n_colors=len(labels))
    from matplotlib.colors import ListedColormap
    ext = [grid[0], grid[-1], grid[0], grid[-1]]
    right.imshow(label_img.T, origin="lower", extent=ext, cmap=ListedColormap(cmap),
                 vmin=-0.5, vmax=len(labels) - 0.5, interpolation="nearest", aspect="auto")
    for k, name in enumerate(labels):
        right.plot([], [], "s", color=cmap[k], label=name)
    right.scatter(theta_eq[stable, 0], theta_eq[stable, 1], s=60, color="black", label="stable equilibrium")
    right.scatter(theta_eq[~stable, 0], theta_eq[~stable, 1], s=60, facecolor="white",
                  edgecolor="black", label="unstable equilibrium")
    right.set(xlabel=r"initial $\theta_1$", ylabel=r"initial $\theta_2$",
              title="Basins: where each initial pair ends")
    right.legend(fontsize="x-small", loc="upper left", framealpha=0.9)
    return fig


def plot_token_geometry(layers, stats: dict):
    """Per-layer token geometry; ``stats[model][key] = (L,)`` for keys
    full_rank, sigma_min, mean_abs_cos, rel_mu."""
    keys = [("full_rank", "fraction of samples at full rank"),
            ("sigma_min", r"smallest singular value (unit tokens)"),
            ("mean_abs_cos", r"mean $|\cos|$ between tokens"),
            ("rel_mu", r"$\mu(X)/\|X\|_F$")]
    fig = _new_figure(figsize=(11.5, 7.0), layout="constrained")
    axes = fig.subplots(2, 2).ravel()
    for ax, (k, lab) in zip(axes, keys):
        for model, s in stats.items():
            ax.plot(layers, s[k], "o-", ms=3, label=model)
        ax.set(xlabel="layer (0 = token embeddings)", ylabel=lab)
        if k == "sigma_min":
            ax.set_yscale("log")
    axes[0].legend(fontsize="small")
    fig.suptitle("Token geometry across the layers of SmolLM2-135M on real text")
    return fig
