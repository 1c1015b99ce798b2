"""Figures of chapter 1 (LayerNorm is a projection and a scaling): one function per figure."""

import numpy as np
import seaborn as sns
from matplotlib.lines import Line2D

from .theme import new_figure as _new_figure
from .theme import set_theme  # noqa: F401  (the shared theme; the chapter calls it once)

__all__ = [
    "plot_decomposition_error",
    "plot_eps_deficit",
    "plot_affine_image_3d",
    "plot_layernorm_3d",
]



def _subsample(n, k, seed=0):
    """Indices of at most ``k`` of ``n`` points, fixed for reproducible figures."""
    if n <= k:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False))


def plot_decomposition_error(check, max_points=4000):
    r"""PyTorch's LayerNorm against :math:`\sqrt d\,Px/\lVert Px\rVert`, two panels.

    ``check`` maps ``"d"``, ``"kappa"``, ``"torch64"``, ``"torch32"`` and
    ``"library32"`` to arrays ``(n,)``, one entry per input: its dimension, the
    condition number :math:`|\bar x|/\sigma`, and the largest entrywise error of
    PyTorch (float64, float32) and of the library (float32). Left: max and median
    error against ``d``; right: error against :math:`\kappa`.
    """
    fig = _new_figure(figsize=(11.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = sns.color_palette()
    series = [
        ("torch64", "PyTorch, float64", colours[0]),
        ("torch32", "PyTorch, float32", colours[1]),
        ("library32", "library, float32", colours[2]),
    ]
    dims = np.unique(check["d"])
    for key, label, colour in series[:2]:
        per_d = [check[key][check["d"] == d] for d in dims]
        left.plot(dims, [e.max() for e in per_d], "o-", color=colour, label=f"{label}: max")
        left.plot(dims, [np.median(e) for e in per_d], "s--", color=colour, mfc="white",
                  label=f"{label}: median")
    for dtype, colour in [(np.float64, colours[0]), (np.float32, colours[1])]:
        left.axhline(np.finfo(dtype).eps, color=colour, ls=":", lw=1.2)
    left.set(xscale="log", yscale="log", xlabel="dimension $d$",
             ylabel=r"$\max_i |\mathrm{LN}(x)_i - \sqrt{d}\,(Px)_i/\|Px\||$",
             title="Error against $d$ (dotted: machine epsilon)")
    left.legend(fontsize="small")

    idx = _subsample(len(check["d"]), max_points)
    floor = np.finfo(np.float64).eps / 4  # show exact zeros at the bottom of a log axis
    for key, label, colour in series:
        right.scatter(check["kappa"][idx], np.maximum(check[key][idx], floor), s=6,
                      alpha=0.5, color=colour, label=label, rasterized=True)
    right.set(xscale="log", yscale="log", xlabel=r"condition number $\kappa = |\bar x| / \sigma(x)$",
              ylabel="error of each input", title=r"Error against $\kappa$")
    right.legend(fontsize="small", markerscale=3)
    return fig


def plot_eps_deficit(points, t_grid, deficit_grid, dims, by_d, eps_values, max_points=3000):
    r"""The norm deficit of LayerNorm with :math:`\varepsilon > 0`, two panels.

    Left: measured deficit of individual inputs against :math:`t = \varepsilon/\sigma^2`
    (``points`` maps ``"t"``, ``"measured"``, ``"eps"`` to arrays ``(n,)``), with
    the closed form (``t_grid``, ``deficit_grid``) and its first-order term
    :math:`t/2`. Right: median deficit against ``d`` (``dims: (k,)``);
    ``by_d[(eps, kind)] = (measured: (k,), closed: (k,))`` with ``kind`` in
    ``{"unit variance", "unit norm"}``.
    """
    fig = _new_figure(figsize=(11.0, 4.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = dict(zip(eps_values, sns.color_palette(n_colors=len(eps_values))))
    idx = _subsample(len(points["t"]), max_points)
    t, measured, eps_of = points["t"][idx], points["measured"][idx], points["eps"][idx]
    for eps, marker in zip(eps_values, "os^v<>Dp"):
        sel = (eps_of == eps) & (measured > 0)
        left.scatter(t[sel], measured[sel], s=22, marker=marker, facecolor="none",
                     edgecolor=colours[eps], lw=0.8, alpha=0.7,
                     label=rf"measured, $\varepsilon$ = {eps:.0e}", rasterized=True)
    left.plot(t_grid, deficit_grid, color="black", lw=1.5, label="closed form")
    left.plot(t_grid, t_grid / 2, color="black", lw=1.0, ls="--",
              label=r"first order $\varepsilon/(2\sigma^2)$")
    left.set(xscale="log", yscale="log", ylim=(None, 2),
             xlabel=r"$t = \varepsilon / \sigma^2$",
             ylabel=r"deficit $1 - \|\mathrm{LN}_\varepsilon(x)\| / \sqrt{d}$",
             title="The deficit depends only on $t$")
    left.legend(fontsize="small")

    styles = {"unit variance": ("o", "-", True), "unit norm": ("s", "--", False)}
    for eps in eps_values:
        for kind, (marker, ls, filled) in styles.items():
            meas, closed = by_d[(eps, kind)]
            right.plot(dims, closed, ls=ls, color=colours[eps], lw=1.2)
            right.plot(dims, meas, marker, color=colours[eps], ms=5,
                       mfc=colours[eps] if filled else "white")
    handles = [Line2D([], [], color=colours[eps], lw=2, label=rf"$\varepsilon$ = {eps:.0e}")
               for eps in eps_values]
    handles += [Line2D([], [], color="black", ls=ls, marker=m, mfc="black" if f else "white",
                       label=kind) for kind, (m, ls, f) in styles.items()]
    right.set(xscale="log", yscale="log", ylim=(None, 2), xlabel="dimension $d$",
              ylabel="median deficit", title="Markers measured, lines closed form")
    right.legend(handles=handles, loc="center left", fontsize="small")
    return fig


def _closed(curve):
    """Append the first point so that a sampled closed curve is drawn closed."""
    return np.vstack([curve, curve[:1]])


def _equal_3d(ax, points, pad=1.1):
    lim = pad * np.max(np.abs(points))
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), zlim=(-lim, lim))
    ax.set_box_aspect((1, 1, 1))
    ax.set(xlabel="$x_1$", ylabel="$x_2$", zlabel="$x_3$")


def _plane_basis(normal):
    """An orthonormal basis ``(3, 2)`` of the plane through 0 orthogonal to ``normal``."""
    q, _ = np.linalg.qr(np.column_stack([normal, np.eye(3)]))
    return q[:, 1:3]


def _plane_patch(ax, normal, centre, radius, colour, alpha=0.12):
    basis = _plane_basis(np.asarray(normal, dtype=float))
    s = np.linspace(-radius, radius, 2)
    a, b = np.meshgrid(s, s)
    pts = centre[:, None, None] + basis[:, 0, None, None] * a + basis[:, 1, None, None] * b
    ax.plot_surface(pts[0], pts[1], pts[2], color=colour, alpha=alpha, linewidth=0, shade=False)


def plot_layernorm_3d(x, px, y, circle, n_paths=8):
    r"""The d = 3 picture: inputs, their projections onto :math:`H`, LayerNorm outputs.

    ``x, px, y: (n, 3)`` inputs, :math:`Px` and :math:`\mathrm{LN}(x)`;
    ``circle: (m, 3)`` points of the circle of radius :math:`\sqrt 3` in ``H``.
    The first ``n_paths`` inputs get thin lines input -> projection -> output.
    """
    fig = _new_figure(figsize=(7.5, 7.0), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    c = sns.color_palette()
    everything = np.vstack([x, px, y])
    _plane_patch(ax, np.ones(3), np.zeros(3), 1.05 * np.max(np.abs(everything)), c[0])
    ax.plot(*_closed(circle).T, color=c[3], lw=2, label=r"image: circle of radius $\sqrt{3}$ in $\mathcal{H}$")
    ax.quiver(0, 0, 0, 1, 1, 1, color="black", lw=1.5, arrow_length_ratio=0.15)
    ax.text(1.1, 1.1, 1.1, r"$\mathbf{1}$", color="black")
    for i in range(min(n_paths, len(x))):
        ax.plot(*np.stack([x[i], px[i]]).T, color="grey", lw=0.8, ls=":")
        ax.plot(*np.stack([px[i], y[i]]).T, color="grey", lw=0.8)
    ax.scatter(*x.T, s=14, color=c[7], alpha=0.8, label="inputs $x$")
    ax.scatter(*px.T, s=14, color=c[0], label=r"projections $Px$ (in $\mathcal{H}$)")
    ax.scatter(*y.T, s=22, color=c[3], edgecolor="black", lw=0.4,
               label=r"outputs $\mathrm{LN}(x) = \sqrt{3}\,Px/\|Px\|$")
    _equal_3d(ax, everything)
    ax.view_init(elev=20, azim=-10)
    ax.set_title(r"LayerNorm in $d = 3$: project onto $\mathcal{H} \perp \mathbf{1}$, then scale")
    ax.legend(loc="upper left", fontsize="small")
    return fig


def plot_affine_image_3d(circle, ellipse, n_points, y_points, gamma, beta):
    r"""The d = 3 image of LayerNorm without and with the affine map.

    ``circle, ellipse: (m, 3)`` the image without affine map and its image
    :math:`\gamma \odot v + \beta`; ``n_points, y_points: (k, 3)`` a few outputs
    before and after it; ``gamma, beta: (3,)``. The two planes are drawn with
    their normals :math:`\mathbf 1` and :math:`\mathbf 1/\gamma`.
    """
    fig = _new_figure(figsize=(7.5, 7.0), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    c = sns.color_palette()
    everything = np.vstack([circle, ellipse])
    radius = 0.8 * np.max(np.abs(everything))
    _plane_patch(ax, np.ones(3), np.zeros(3), radius, c[0], alpha=0.08)
    _plane_patch(ax, 1.0 / gamma, beta, radius, c[2], alpha=0.12)
    ax.plot(*_closed(circle).T, color=c[0], lw=2, label=r"$\gamma = \mathbf{1}, \beta = 0$: circle in $\mathcal{H}$")
    ax.plot(*_closed(ellipse).T, color=c[2], lw=2,
            label=r"$\gamma \odot v + \beta$: ellipse in the plane through $\beta$")
    for n, y in zip(n_points, y_points):
        ax.plot(*np.stack([n, y]).T, color="grey", lw=0.8)
    ax.scatter(*n_points.T, s=16, color=c[0])
    ax.scatter(*y_points.T, s=16, color=c[2])
    normal = 1.0 / gamma
    normal = normal / np.linalg.norm(normal) * np.sqrt(3)
    ax.quiver(0, 0, 0, 1, 1, 1, color=c[0], lw=1.5, arrow_length_ratio=0.15)
    ax.quiver(*beta, *normal, color=c[2], lw=1.5, arrow_length_ratio=0.15)
    ax.text(*(1.1 * np.ones(3)), r"$\mathbf{1}$", color=c[0])
    ax.text(*(beta + 1.1 * normal), r"$\mathbf{1}/\gamma$", color=c[2])
    ax.scatter(*beta, s=30, color="black", marker="x", label=r"$\beta$")
    _equal_3d(ax, everything)
    ax.view_init(elev=28, azim=25)
    ax.set_title("The learned affine map tilts the plane and stretches the circle")
    ax.legend(loc="upper left", fontsize="small")
    return fig
