"""Figures of chapter 9 (synthesis): one function per figure, on the shared theme."""

import numpy as np
import seaborn as sns

from .theme import new_figure as _new_figure
from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it once)

__all__ = ["plot_variants", "plot_position_axis", "plot_scale_entropy", "plot_cesaro_collapse",
           "plot_one_operator", "plot_design_lines"]

#: The four quantities, one per paper, as the chapter names them.
QUANTITIES = {
    "rp_visible": "recency probability, visible keys (Kim)",
    "mu_rel": r"relative collapse $\mu(X_L)/\|X_L\|_F$ (Wu)",
    "unselectable": "sets with an unselectable key (Brody)",
    "last_mid": "last / middle influence (Chowdhury)",
}


def plot_variants(results: dict, quantities: dict = QUANTITIES):
    """One panel per quantity: each variant's value with its 95 % interval (``results[name][key]``
    an :class:`~attention_geometry.stats.Estimate`); the baseline's value dotted."""
    names = list(results)
    fig = _new_figure(figsize=(12, 0.45 * len(names) + 1.6), layout="constrained")
    axes = fig.subplots(1, len(quantities), sharey=True)
    y = np.arange(len(names))
    for ax, (key, label), colour in zip(axes, quantities.items(), sns.color_palette(n_colors=len(quantities))):
        est = [results[n][key] for n in names]
        vals = np.array([e.value for e in est])
        lo_hi = np.array([e.interval() for e in est])
        err = np.abs(np.stack([vals - lo_hi[:, 0], lo_hi[:, 1] - vals]))
        ax.errorbar(vals, y, xerr=err, fmt="o", color=colour, capsize=3)
        ax.axvline(vals[0], color="grey", ls=":", lw=1)
        if key == "last_mid":
            ax.set_xscale("log")
        ax.set_title(label, fontsize=9)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    return fig


def plot_position_axis(results: dict, names: list[str]):
    """Four effects on one position axis for the variants ``names``: the Jacobian influence of each
    input on the last output, the last query's centred score by key position, each token's distance
    to the mean token, and how often each key is unselectable."""
    panels = [("profile", r"influence $\|\partial y_n/\partial x_j\|_F^2$ (share)", "log"),
              ("score_profile", r"last query's score $S_{n,j}$ (centred)", "linear"),
              ("spread_profile", r"$\|x_j - \bar x\|$ / rms, last layer", "linear"),
              ("unselectable_profile", "key $j$ unselectable (fraction of sets)", "linear")]
    fig = _new_figure(figsize=(11, 8.5), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True).ravel()
    colours = dict(zip(names, sns.color_palette(n_colors=len(names))))
    for ax, (key, label, scale) in zip(axes, panels):
        for name in names:
            v = np.asarray(results[name][key], dtype=float)
            j = np.arange(1, len(v) + 1)
            ok = np.isfinite(v) & ((v > 0) if scale == "log" else True)
            ax.plot(j[ok], v[ok], marker=".", ms=3, lw=1, color=colours[name], label=name)
        ax.set_yscale(scale)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("position $j$")
    axes[0].legend(fontsize=7)
    return fig


def plot_scale_entropy(scales, curves: dict, score_sd: dict):
    """Left: the last layer's attention entropy (1 = uniform) against the weight scale, one line per
    norm; right: the first layer's score spread against the same scale."""
    fig = _new_figure(figsize=(10, 3.8), layout="constrained")
    ax0, ax1 = fig.subplots(1, 2)
    for (name, est), colour in zip(curves.items(), sns.color_palette(n_colors=len(curves))):
        v = np.array([e.value for e in est])
        se = np.array([e.se for e in est])
        ax0.errorbar(scales, v, yerr=1.96 * se, marker="o", capsize=3, color=colour, label=name)
        s = np.array([e.value for e in score_sd[name]])
        ax1.plot(scales, s, marker="o", color=colour, label=name)
    for ax in (ax0, ax1):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("weight scale (entries of variance scale$^2/d$)")
    ax0.set_ylabel("normalised attention entropy")
    ax1.set_ylabel("score standard deviation, layer 1")
    ax1.set_yscale("log")
    ax0.legend(fontsize=8)
    return fig


def plot_cesaro_collapse(depths, measured: dict, predicted: dict):
    """Relative collapse of :math:`N^H X` against the depth, measured (markers) and the rate
    :math:`(1 - \\alpha/2)^H` (lines), one colour per residual weight."""
    fig = _new_figure(figsize=(6.2, 4.2), layout="constrained")
    ax = fig.subplots()
    for (alpha, v), colour in zip(measured.items(), sns.color_palette(n_colors=len(measured))):
        ax.plot(depths, v, "o", color=colour, ms=4, label=rf"$\alpha = {alpha:g}$")
        ax.plot(depths, predicted[alpha], "-", color=colour, lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("depth $H$")
    ax.set_ylabel(r"$\mu(N^H X)/\|N^H X\|_F$")
    ax.legend(fontsize=8)
    return fig


def plot_one_operator(measured: dict, scores: dict, path):
    """The tied decoder with and without a norm (``measured[norm]``: :func:`measure`'s output): left,
    the last query's centred score of key :math:`j` (markers) against the uniform-averaging limit
    ``scores[norm]`` (lines, centred); right, the influence profile's share (markers) against the
    squared last row of :math:`M^H` (``path``: the row itself), normalised to sum 1 (black line): the
    share with uniform attention and identity value maps."""
    fig = _new_figure(figsize=(10.5, 3.9), layout="constrained")
    ax0, ax1 = fig.subplots(1, 2)
    for (norm, m), colour in zip(measured.items(), sns.color_palette(n_colors=len(measured))):
        j = np.arange(1, len(m["score_profile"]) + 1)
        ax0.plot(j, m["score_profile"], "o", ms=3, color=colour, label=f"{norm}, measured")
        ax0.plot(j, scores[norm] - np.mean(scores[norm]), "-", lw=1.2, color=colour, label=f"{norm}, limit")
        ax1.plot(j, m["profile"], "o", ms=3, color=colour, label=norm)
    share = np.asarray(path, dtype=float) ** 2  # identity values, uniform attention: ||J_j||_F^2 = d (M^H)_{L,j}^2
    ax1.plot(np.arange(1, len(share) + 1), share / share.sum(), "-", color="black", lw=1,
             label=r"$(M^H)_{L,j}^2$, normalised")
    ax0.set_ylabel("last query's score (centred)")
    ax1.set_ylabel(r"share of $\|J_j\|_F^2$")
    ax1.set_yscale("log")
    for ax in (ax0, ax1):
        ax.set_xlabel("position $j$")
        ax.legend(fontsize=7)
    return fig


def plot_design_lines(lines: dict, x, labels: dict, *, xlabel: str, log_x: bool = False):
    """A designed sweep, one panel per response: ``lines[response][line]`` a list of estimates over the
    weight draws, one per value of ``x``, drawn with their 95 % intervals; the lines told apart by
    colour, and by marker and dashes where their labels share a first part (``"norm none, mask
    window"``: colour by norm, dashes by mask). ``labels``: response -> panel title."""
    fig = _new_figure(figsize=(13, 4.0), layout="constrained")
    axes = fig.subplots(1, len(lines))
    names = list(next(iter(lines.values())))
    firsts = list(dict.fromkeys(n.split(", ")[0] for n in names))
    seconds = list(dict.fromkeys(n.split(", ")[1] for n in names if ", " in n))
    colours = dict(zip(firsts, sns.color_palette(n_colors=len(firsts))))
    styles = dict(zip(seconds, [("o", "-"), ("s", "--"), ("^", ":")]))
    x = np.asarray(x, dtype=float)
    offsets = np.linspace(-0.03, 0.03, len(names)) * (np.ptp(np.log(x)) if log_x else np.ptp(x))
    for ax, (response, per_line) in zip(axes, lines.items()):
        for off, (name, ests) in zip(offsets, per_line.items()):
            first, _, second = name.partition(", ")
            marker, dashes = styles.get(second, ("o", "-"))
            vals = np.array([e.value for e in ests])
            lo_hi = np.array([e.interval() for e in ests])
            err = np.abs(np.stack([vals - lo_hi[:, 0], lo_hi[:, 1] - vals]))
            at = x * np.exp(off) if log_x else x + off  # side by side, so that the intervals do not hide each other
            ax.errorbar(at, vals, yerr=err, marker=marker, ls=dashes, ms=4, capsize=2, lw=1.2,
                        color=colours[first], label=name)
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.set_xlabel(xlabel)
        ax.set_title(labels[response], fontsize=9)
    handles, names = axes[0].get_legend_handles_labels()  # below the panels, where it hides no interval
    fig.legend(handles, names, loc="outside lower center", ncol=min(len(names), 6), fontsize=8)
    return fig
