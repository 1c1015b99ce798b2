"""Figures of the chapter "The Cesàro calculus": one function per figure.

Each takes arrays computed by :mod:`attention_geometry.cesaro` in the chapter and
returns a ``matplotlib.figure.Figure``.
"""

import numpy as np
import seaborn as sns

from .theme import new_figure
from .theme import set_theme  # noqa: F401  (the chapter calls set_theme once)

__all__ = [
    "plot_alternating_error",
    "plot_cancellation",
    "plot_profiles",
    "plot_limit_discrepancy",
    "plot_alpha_regimes",
]


def plot_alternating_error(Ls, Hs, errors: dict):
    """Heat maps of log10 relative error of the float64 alternating sum.

    ``Ls: (nL,)``, ``Hs: (nH,)``; ``errors[alpha] = (nH, nL)`` array (``inf`` =
    overflow to ``inf``/``nan``).
    """
    fig = new_figure(figsize=(5.2 * len(errors), 4.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(errors)))
    for ax, (alpha, err) in zip(axes, errors.items()):
        with np.errstate(divide="ignore"):
            log_err = np.log10(np.maximum(err, 1e-17))
        shown = np.where(np.isfinite(log_err), np.minimum(log_err, 30), 30)
        annot = np.where(np.isfinite(log_err), np.vectorize(lambda v: f"{v:.0f}")(np.where(np.isfinite(log_err), log_err, 0)), "ovf")
        sns.heatmap(shown, ax=ax, cmap="rocket_r", vmin=-16, vmax=30, annot=annot, fmt="",
                    annot_kws={"fontsize": 7}, xticklabels=Ls, yticklabels=Hs,
                    cbar_kws={"label": "log10 max relative error (capped at 30)"})
        ax.invert_yaxis()
        ax.set(xlabel="sequence length $L$", ylabel="depth $H$",
               title=rf"float64 alternating sum, $\alpha$ = {alpha:g}")
    return fig


def plot_cancellation(x, log10_max_term, log10_result, L, H, alpha):
    """Largest term of the alternating sum against the result, per position.

    ``x: (L,)`` positions ``j/L``; ``log10_max_term``, ``log10_result``: ``(L,)``.
    """
    fig = new_figure(figsize=(6.8, 4.2), layout="constrained")
    ax = fig.subplots()
    ax.plot(x, log10_max_term, label=r"largest term $\max_m |t_{jm}|$")
    ax.plot(x, log10_result, label=r"result $(N^H)_{L,j}$")
    ax.axhline(np.log10(np.finfo(np.float64).max), color="grey", ls="--", lw=1,
               label="float64 overflow (1.8e308)")
    ax.fill_between(x, log10_result, log10_max_term, color="C3", alpha=0.12,
                    label="decimal digits lost to cancellation")
    ax.set(xlabel="position $x = j/L$", ylabel="log10 of magnitude",
           title=rf"Alternating sum, $L$ = {L}, $H$ = {H}, $\alpha$ = {alpha:g}")
    ax.legend(fontsize="small")
    return fig


def plot_profiles(L, H, curves: dict, limits: dict):
    """The last row of ``N^H`` for several alpha against position ``x = j/L``.

    ``curves[alpha] = (L,)`` log10 p_j; ``limits[alpha] = (L,)`` log10 of the
    continuous limit's cell masses (dotted). Left: log10 p_j; right: relative
    to the middle entry, log10 p_j / p_mid, clipped to +-8 decades.
    """
    fig = new_figure(figsize=(11.5, 4.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    x = np.arange(1, L + 1) / L
    mid = (L + 1) // 2 - 1
    colours = sns.color_palette("viridis", n_colors=len(curves))
    for (alpha, y), c in zip(curves.items(), colours):
        for ax, shift in [(left, 0.0), (right, y[mid])]:
            ax.plot(x[:-1], y[:-1] - shift, color=c, lw=1.4,
                    label=rf"$\alpha$ = {alpha:g}" if ax is left else None)
            ax.plot(x[-1], y[-1] - shift, "o", color=c, ms=5)
            if alpha in limits:
                ax.plot(x[:-1], limits[alpha][:-1] - shift, color=c, lw=1, ls=":")
    left.set(xlabel="position $x = j/L$", ylabel=r"$\log_{10} (N^H)_{L,j}$",
             title=f"Last row of $N^H$, $L$ = {L}, $H$ = {H} (dots: last token)")
    right.set(xlabel="position $x = j/L$", ylim=(-8, 8),
              ylabel=r"$\log_{10} (N^H)_{L,j} / (N^H)_{L,\lceil L/2\rceil}$",
              title="Relative to the middle entry (dotted: continuous limit)")
    right.axhline(0, color="black", lw=0.8)
    left.legend(fontsize="x-small", ncol=2)
    return fig


def plot_limit_discrepancy(Ls, ratios: dict):
    """Discrete over continuous-limit cell mass against ``L``, one panel per alpha.

    ``Ls: (n,)``; ``ratios[alpha][(H, label)] = (n,)`` ratios p_j/m_j.
    """
    fig = new_figure(figsize=(5.0 * len(ratios), 4.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(ratios), sharey=True))
    for ax, (alpha, by) in zip(axes, ratios.items()):
        Hs = sorted({H for H, _ in by})
        colours = dict(zip(Hs, sns.color_palette(n_colors=len(Hs))))
        styles = {}
        for (H, label), r in by.items():
            ls = styles.setdefault(label, ["-", "--", ":", "-."][len(styles) % 4])
            ax.plot(Ls, r, ls=ls, marker="o", ms=3, color=colours[H], label=f"$H$ = {H}, {label}")
        ax.axhline(1, color="black", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="sequence length $L$",
               title=rf"Discrete over continuous limit, $\alpha$ = {alpha:g}")
    axes[0].set(ylabel=r"$(N^H)_{L,j}$ / continuous-limit mass of cell $j$")
    axes[-1].legend(fontsize="x-small", ncol=2)
    return fig


def plot_alpha_regimes(alpha, log10_last_over_middle, log10_middle_times_fact, alpha_u, alpha_d, H, L):
    """Against alpha: the last token over the middle, and the middle density
    times (H-1)!, with the two thresholds marked. All inputs ``(n,)`` or scalars."""
    fig = new_figure(figsize=(7.2, 4.4), layout="constrained")
    ax = fig.subplots()
    ax.plot(alpha, log10_last_over_middle, label=r"$\log_{10}\, p_L / p_{\mathrm{mid}}$ (recency spike)")
    ax.plot(alpha, log10_middle_times_fact,
            label=r"$\log_{10}\, L\,p_{\mathrm{mid}} \cdot (H-1)!$ (dead zone)")
    ax.axhline(0, color="C0", lw=0.8, ls=":")
    ax.axhline(1, color="C1", lw=0.8, ls=":")
    ax.axvspan(0, alpha_u, color="C0", alpha=0.1, label=rf"last token above middle: $\alpha < {alpha_u:.3f}$")
    ax.axvspan(alpha_d, 1, color="C1", alpha=0.15,
               label=rf"middle within 10/(H-1)!: $\alpha > {alpha_d:.3f}$")
    ax.set(xlabel=r"residual mixing $\alpha$", ylabel="log10",
           title=f"Which claim holds where ($L$ = {L}, $H$ = {H})", ylim=(-40, 30))
    ax.legend(fontsize="x-small", loc="lower left")
    return fig
