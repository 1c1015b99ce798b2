"""Figures of the chapter "Jacobians of real decoders": one function per figure.

Each takes arrays computed by the library in the chapter and returns a
``matplotlib.figure.Figure`` made with :func:`.theme.new_figure`.
"""

import numpy as np
import seaborn as sns

from .theme import new_figure, set_theme  # noqa: F401  (the chapter calls set_theme once)

__all__ = [
    "plot_estimator_variance",
    "plot_expected_vs_monte_carlo",
    "plot_profile_bands",
    "plot_paper_shape_fits",
    "plot_positions",
    "plot_prediction",
    "plot_pathways",
    "plot_heads",
    "plot_pretrained",
    "plot_training",
]


def _x(n):
    return np.arange(1, n + 1) / n


def plot_estimator_variance(exact_rho2, cases: dict):
    """Predicted against measured variance of the estimate of rho(j)^2.

    ``exact_rho2: (L,)``; ``cases[label] = (predicted: (L,), measured: (L,))``.
    Left: both against position (log scale); right: measured against predicted.
    """
    fig = new_figure(figsize=(11.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    x = _x(len(exact_rho2))
    colours = sns.color_palette(n_colors=len(cases))
    for (label, (pred, meas)), c in zip(cases.items(), colours):
        left.plot(x, pred / exact_rho2**2, color=c, lw=1.5, label=f"{label}: derived")
        left.plot(x, meas / exact_rho2**2, "o", color=c, ms=3, mfc="white", label=f"{label}: measured")
        right.loglog(pred / exact_rho2**2, meas / exact_rho2**2, "o", color=c, ms=3, label=label)
    lim = right.get_xlim()
    right.plot(lim, lim, color="black", lw=1, ls="--", label="equality")
    left.set(yscale="log", xlabel="position $x = j/L$",
             ylabel=r"relative variance Var$[\hat\rho^2_j] / \rho(j)^4$",
             title="Variance of the estimator against position")
    right.set(xlabel="derived relative variance", ylabel="measured relative variance",
              title="Measured against derived (one point per position)")
    left.legend(fontsize="x-small", ncols=2)
    right.legend(fontsize="small")
    return fig


def plot_expected_vs_monte_carlo(mc_mean, mc_se, derived, paper_fit, truths: dict, fits: dict):
    """Left: the derived expectation against Monte Carlo (±2 SE) and the best paper-form
    fit, small size, all ``(L,)``. Right: at the paper's size, the derived profile
    ``truths[g]: (L,)`` (solid) against the best ``g^H N^H`` fit ``fits[g]`` (dashed)."""
    fig = new_figure(figsize=(11.5, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    j = np.arange(1, len(mc_mean) + 1)
    left.errorbar(j, mc_mean, yerr=2 * mc_se, fmt="o", ms=4, capsize=3, label="Monte Carlo (±2 SE)")
    left.plot(j, derived, "-", lw=1.5, label=r"derived: $d\sum_m e_m\,(M^m)_{L,j}^2$")
    left.plot(j, paper_fit, "--", lw=1.2, label=r"best fit $g\,(N^H)_{L,j}$, squared")
    left.set(yscale="log", xlabel="position $j$", ylabel=r"$\mathbb{E}\,\|J_j\|_F^2$",
             title="Linear decoder, uniform attention")
    left.legend(fontsize="small")
    colours = sns.color_palette("viridis", n_colors=len(truths))
    for (g, truth), c in zip(truths.items(), colours):
        x = _x(len(truth))
        right.plot(x, truth / truth[-1], color=c, lw=1.4, label=f"derived, g = {g:.3g}")
        right.plot(x, fits[g] / fits[g][-1], color=c, lw=1.1, ls="--")
    right.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)/\rho(L)$",
              title="Paper's size: derived (solid) vs best $g^H N^H$ (dashed)")
    right.legend(fontsize="x-small")
    return fig


def plot_profile_bands(panels: dict, title: str):
    """Average profiles with p16-p84 bands and the two fitted models, log scale.

    ``panels[label] = dict(rho=(L,), band=((L,), (L,)), cesaro=(L,), derived=(L,))``.
    """
    n = len(panels)
    cols = min(n, 3)
    rows = -(-n // cols)
    fig = new_figure(figsize=(5.2 * cols, 3.9 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, (label, p) in zip(axes, panels.items()):
        x = _x(len(p["rho"]))
        ax.fill_between(x, *p["band"], color="C0", alpha=0.2, lw=0, label="p16-p84 over sequences")
        ax.plot(x, p["rho"], color="C0", lw=1.3, label="average")
        ax.plot(x, p["cesaro"], color="C3", lw=1.1, ls="--", label=r"paper's $g\,(N^H)_{L,j}$")
        ax.plot(x, p["derived"], color="C2", lw=1.8, ls=":", label="derived, per-layer gains")
        ax.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)$", title=label)
        ax.legend(fontsize="x-small")
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.suptitle(title)
    return fig


def plot_pathways(widths, fractions: dict, scores: dict):
    """Score pathway against width: ``fractions[mode] = (value: (m,), se: (m,))`` of
    log10 ||J_score|| / ||J_full||, ``scores[mode] = (m,)`` measured score SD."""
    fig = new_figure(figsize=(11.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    for mode, (v, se) in fractions.items():
        left.errorbar(widths, 10 ** np.asarray(v), yerr=np.log(10) * 10 ** np.asarray(v) * 2 * np.asarray(se),
                      marker="o", capsize=3, label=mode)
    for mode, sd in scores.items():
        right.plot(widths, sd, marker="o", label=mode)
    left.set(xscale="log", yscale="log", xlabel="width $d$",
             ylabel=r"$\|J_{\mathrm{score}}\|_F / \|J\|_F$ (±2 SE)", title="Score pathway against width")
    right.set(xscale="log", yscale="log", xlabel="width $d$", ylabel="score standard deviation",
              title=r"Scores at initialisation: $\sigma_0^2 d$")
    left.legend(fontsize="small")
    right.legend(fontsize="small")
    return fig


def plot_heads(heads, series: dict):
    """Relative spread across initialisations against the number of heads at fixed width, one
    line per initialiser scale, ``series[label] = (spread, se)``, each with the paper's
    ``1/sqrt(heads)`` drawn through its first point."""
    fig = new_figure(figsize=(6.0, 4.2), layout="constrained")
    ax = fig.subplots()
    heads = np.asarray(heads, dtype=float)
    for (label, (spread, se)), c in zip(series.items(), sns.color_palette(n_colors=len(series))):
        ax.errorbar(heads, spread, yerr=2 * np.asarray(se), marker="o", capsize=3, color=c, label=f"{label} (±2 SE)")
        ax.plot(heads, spread[0] * np.sqrt(heads[0] / heads), ls="--", color=c, alpha=0.6, lw=1)
    ax.plot([], [], ls="--", color="grey", label=r"$\propto 1/\sqrt{h}$ through the first point")
    ax.set(xscale="log", yscale="log", xlabel="heads $h$ (fixed width)",
           ylabel=r"relative SD of $\rho(j)^2$ across initialisations", title="Concentration against heads")
    ax.legend(fontsize="small")
    return fig


def plot_pretrained(curves: dict, boundaries, chunk_len, folded: dict):
    """Left: average profiles with p16-p84 bands, ``curves[label] = (rho, (lo, hi))``,
    chunk boundaries dotted; right: profiles within chunks ``folded[label] = (L_chunk,)``,
    each divided by its median."""
    fig = new_figure(figsize=(11.5, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = sns.color_palette(n_colors=len(curves))
    for (label, (rho, band)), c in zip(curves.items(), colours):
        x = np.arange(len(rho))
        left.fill_between(x, *band, color=c, alpha=0.15, lw=0)
        left.plot(x, rho, color=c, lw=1.2, label=label)
    for b in boundaries:
        left.axvline(b, color="grey", lw=0.7, ls=":")
    left.set(yscale="log", xlabel="position (0-based)", ylabel=r"$\rho(j)$",
             title=f"Profiles (bands p16-p84); dotted: chunk starts every {chunk_len}")
    left.legend(fontsize="x-small")
    for (label, f), c in zip(folded.items(), colours[-len(folded):]):
        right.plot(np.arange(len(f)), f / np.median(f), color=c, marker="o", ms=2, lw=1, label=label)
    right.set(yscale="log", xlabel="offset within a chunk", ylabel="relative to the chunk's median",
              title="Within chunks (averaged over chunks and sequences)")
    right.legend(fontsize="x-small")
    return fig


def plot_training(steps, profiles: np.ndarray, losses):
    """The paper's Fig. 3 in small: ``profiles: (m, L)`` average profile at ``steps: (m,)``,
    raw (left) and anchored at the last position (middle); training loss (right)."""
    fig = new_figure(figsize=(13.0, 4.0), layout="constrained")
    left, mid, right = fig.subplots(1, 3)
    colours = sns.color_palette("viridis", n_colors=len(steps))
    x = _x(profiles.shape[1])
    for s, p, c in zip(steps, profiles, colours):
        left.plot(x, p, color=c, lw=1.2, label=f"step {s}")
        mid.plot(x, p / p[-1], color=c, lw=1.2, label=f"step {s}")
    left.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)$", title="Raw")
    mid.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)/\rho(L)$", title="Anchored at the last position")
    right.plot(np.arange(1, len(losses) + 1), losses, lw=1)
    right.set(xlabel="step", ylabel="training loss (nats)", title="Next-token loss")
    left.legend(fontsize="x-small")
    return fig


def plot_paper_shape_fits(curves: dict):
    """At the paper's shapes, from a stored run's fitted parameters: ``curves[label] = dict(derived=(L,),
    paper=(L,), w=float, w_rest=float)``, the derived profile at the fitted per-layer gains and the
    best paper-form fit to it. Left: both, divided by their geometric mean (log scale); right: their
    cumulative distributions on the positions, whose mean gap is W."""
    fig = new_figure(figsize=(11.5, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    if not curves:
        left.text(0.5, 0.5, "no stored run at the paper's shapes", ha="center", va="center")
    for (label, c), colour in zip(curves.items(), sns.color_palette(n_colors=len(curves))):
        x = _x(len(c["derived"]))
        for key, ls, what in (("derived", "-", "derived, fitted gains"), ("paper", "--", r"best $g\,(N^H)_{L,j}$")):
            y = c[key] / np.exp(np.mean(np.log(c[key])))
            left.plot(x, y, color=colour, ls=ls, lw=1.3, label=f"{label}: {what}")
            right.plot(x, np.cumsum(c[key]) / c[key].sum(), color=colour, ls=ls, lw=1.3,
                       label=f"{label}: {what}" + (f" (W = {c['w']:.3f}; without j = L: {c['w_rest']:.3f})"
                                                   if key == "paper" else ""))
    left.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)$ / geometric mean",
             title="Profiles at the paper's shapes")
    right.set(xlabel="position $x = j/L$", ylabel="cumulative share of the profile's mass",
              title="The distance W: the mass each puts on the last position")
    left.legend(fontsize="x-small")
    right.legend(fontsize="x-small", loc="upper left")
    return fig


def plot_positions(arrays: dict, labels: dict, title: str):
    r"""Each decoder's average profile with and without its positional information, from the
    per-probe arrays ``arrays[f"{prefix}-on"]``, ``arrays[f"{prefix}-off"]``: ``(draws, sequences,
    probes, L)`` estimates of :math:`\rho(j)^2` with the same inputs and probes. ``labels``: prefix
    -> panel title. Top: both averages (log scale); bottom: their ratio, on over off, with the
    band of two standard errors over the weight draws (the pairing cancels what the two share)."""
    fig = new_figure(figsize=(5.6 * max(len(labels), 1), 6.2), layout="constrained")
    axes = np.asarray(fig.subplots(2, max(len(labels), 1), squeeze=False, sharex="col"))
    for col, (prefix, label) in enumerate(labels.items()):
        top, bottom = axes[0, col], axes[1, col]
        on, off = (np.asarray(arrays[f"{prefix}-{s}"], dtype=float) for s in ("on", "off"))
        x = _x(on.shape[-1])
        for a, colour, what in ((on, "C0", "with positions"), (off, "C1", "without")):
            top.plot(x, np.sqrt(a.mean(axis=(0, 1, 2))), color=colour, lw=1.2, label=what)
        top.set(yscale="log", ylabel=r"$\rho(j)$", title=label)
        top.legend(fontsize="x-small")
        per_draw = np.log10(on.mean(axis=(1, 2)) / off.mean(axis=(1, 2))) / 2  # log10 of rho on / rho off
        mid = per_draw.mean(0)
        se = per_draw.std(0, ddof=1) / np.sqrt(len(per_draw)) if len(per_draw) > 1 else np.zeros_like(mid)
        bottom.fill_between(x, mid - 2 * se, mid + 2 * se, color="C2", alpha=0.25, lw=0,
                            label="± 2 SE over the weight draws")
        bottom.plot(x, mid, color="C2", lw=1.0, label=r"$\log_{10}$ on / off")
        bottom.axhline(0.0, color="0.4", lw=0.8)
        bottom.set(xlabel="position $x = j/L$", ylabel=r"$\log_{10}\,\rho_\mathrm{on}/\rho_\mathrm{off}$")
        bottom.legend(fontsize="x-small")
    fig.suptitle(title)
    return fig


def plot_prediction(curves: dict, gains: dict):
    """Measured against predicted profiles and the predicted gains. ``curves[label] = dict(measured=(L,),
    predicted=(L,))``, each divided by its geometric mean (log scale); ``gains[label] = (attention: (H,),
    mlp: (H,))``, each layer's gain averaged over positions."""
    fig = new_figure(figsize=(11.5, 4.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    for (label, c), colour in zip(curves.items(), sns.color_palette(n_colors=len(curves))):
        x = _x(len(c["measured"]))
        left.plot(x, c["measured"] / np.exp(np.mean(np.log(c["measured"]))), color=colour, lw=1.3,
                  label=f"{label}: measured")
        left.plot(x, c["predicted"] / np.exp(np.mean(np.log(c["predicted"]))), color=colour, lw=1.3, ls="--",
                  label=f"{label}: predicted, no fit")
        attn, mlp = gains[label]
        layers = np.arange(1, len(attn) + 1)
        right.plot(layers, attn, "o-", color=colour, ms=3, label=f"{label}: attention")
        right.plot(layers, mlp, "s:", color=colour, ms=3, label=f"{label}: MLP")
    left.set(yscale="log", xlabel="position $x = j/L$", ylabel=r"$\rho(j)$ / geometric mean",
             title="Measured and predicted profiles")
    right.set(yscale="log", xlabel="layer $\\ell$", ylabel=r"gain $g/r_{\ell}^2$ (mean over positions)",
              title="Each branch's gain, from the forward pass")
    left.legend(fontsize="x-small")
    right.legend(fontsize="x-small")
    return fig
