"""Chapter 1, *LayerNorm is a projection and a scaling* (``book/01_layernorm.md``): its parameters,
and what it glues beside its computations (tables, and the words that compare its numbers)."""

from typing import Annotated

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["LayerNormParams"]


class LayerNormParams(ChapterParams):
    """The parameters of chapter ``layernorm``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    d_max: int = Field(4096, ge=3, le=65_536, description="largest dimension d in the numerical check")
    n_dims: int = Field(16, ge=2, le=64, description="number of dimensions, log-spaced from 2 to d_max")
    # >= 2: selectability compares keys; <= 10^4: the check forms an n x n score matrix
    n_samples: int = Field(1000, ge=2, le=10_000, description="random inputs drawn per dimension")
    eps_values: list[Annotated[float, Field(gt=0.0, le=1.0)]] = Field([1e-12, 1e-05, 0.01],
        min_length=1, max_length=8, description="LayerNorm epsilons compared with the exact (eps = 0) map")
    n_points_3d: int = Field(40, ge=3, le=2000, description="inputs drawn for the d = 3 figure")

    # smoke: d_max = 8 lies below ten dimensions, where the eps deficits of unit-norm and unit-variance
    # inputs (about d apart) differ by less than the factor ten from which the text calls the scale
    # decisive: the sentence reads otherwise than at the defaults (tests/test_chapters.py)
    smoke = {"d_max": 8, "n_dims": 3, "n_samples": 20, "n_points_3d": 12}
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(11, (
        (0.6, {"n_samples": 1, "d_max": 1}),
        (0.1, {"n_points_3d": 1}),
    ))


# What the chapter glues: its numbers, its tables and the words that compare them, computed from the
# measurements so that a rerun at other parameters says what that run measured.

def markdown_words(values: dict) -> dict:
    """``values`` with each ``*-words`` entry as Markdown, for ``{glue:md}`key:myst``` (math, roles)."""
    from IPython.display import Markdown
    return {k: Markdown(v) if k.endswith("-words") else v for k, v in values.items()}


def _table(header, rows):
    from IPython.display import Markdown

    from ..tables import markdown_table
    return Markdown(markdown_table(header, rows))


def check_glue(check: dict, dims, *, d_max: int, n_samples: int, kappa_hard: float, torch_eps: float,
               tol: float) -> dict:
    """The check of the decomposition against PyTorch (``check``: ``decomposition_errors`` over all
    dimensions): the settings, the table of errors and the clauses that read it."""
    import numpy as np
    hard = check["kappa"] > kappa_hard
    n_hard = int(hard.sum())

    def median_hard(key):
        return f"{np.median(check[key][hard]):.1e}" if n_hard else "no such input drawn"

    on_sphere = max(check["mean"].max(), check["norm"].max(), check["torch64"].max()) <= tol
    rows = [("largest entrywise error, float64", f"{check['torch64'].max():.1e}"),
            ("largest entrywise error, float32", f"{check['torch32'].max():.1e}"),
            (r"largest $\lvert \bar y\rvert$ of an output $y$ (float64)", f"{check['mean'].max():.1e}"),
            (r"largest relative deviation of $\lVert y\rVert$ from $\sqrt d$", f"{check['norm'].max():.1e}"),
            (r"largest condition number $\kappa$", f"{check['kappa'].max():.1e}"),
            (rf"median error for $\kappa > {kappa_hard:g}$: PyTorch, float64", median_hard("torch64")),
            (rf"median error for $\kappa > {kappa_hard:g}$: PyTorch, float32", median_hard("torch32")),
            (rf"median error for $\kappa > {kappa_hard:g}$: library, float32", median_hard("library32"))]
    return markdown_words({"kappa-hard": kappa_hard, "torch-default-eps": torch_eps, "n-dims": len(dims), "d-max": d_max,
            # the numbers of the table, under their own names (a sweep plots them; ln-err64-max is the headline)
            "ln-err64-max": check["torch64"].max(), "ln-err32-max": check["torch32"].max(),
            "ln-mean-max": check["mean"].max(), "ln-normdev-max": check["norm"].max(), "kappa-max": check["kappa"].max(),
            "n-samples": n_samples, "ln-tab-check": _table(("quantity", "value"), rows),
            "ln-sphere-words": sphere_words(on_sphere, tol)})


def sphere_words(on_sphere: bool, tol: float) -> str:
    """Whether the outputs lie on the sphere within the claims' tolerance ``tol``."""
    return ("to working precision, as {prf:ref}`prop-ln-decomposition` says" if on_sphere
            else f"only up to errors above {tol:.0e}")


def eps_glue(points: dict, by_d: dict, *, eps_ref: float, d_mid: int, d_max: int, t_small: float) -> dict:
    """The measured effect of ``eps`` (``eps_deficit_points`` at ``d_mid``, ``eps_deficit_by_dim``):
    the table and the clause that compares unit-variance and unit-norm inputs."""
    import numpy as np
    small = points["t"] < t_small
    first_order = (f"{np.max(np.abs(points['t'][small] / 2 / points['closed'][small] - 1)):.1e}"
                   if small.any() else "no point drawn there")
    unitvar = float(by_d[(eps_ref, "unit variance")][0][-1])
    unitnorm = float(by_d[(eps_ref, "unit norm")][0][-1])
    rows = [(rf"largest $\lvert$measured $-$ closed form$\rvert$ of the deficit, $d = {d_mid}$",
             f"{np.abs(points['measured'] - points['closed']).max():.1e}"),
            (rf"largest $\lvert \bar y\rvert$ of an output, $d = {d_mid}$", f"{points['mean'].max():.1e}"),
            (rf"largest relative error of $t/2$ for $t < {t_small:.0e}$", first_order),
            (rf"median deficit, unit-variance inputs, $d = {d_max}$, $\varepsilon = {eps_ref:.0e}$", f"{unitvar:.1e}"),
            (rf"median deficit, unit-norm inputs, $d = {d_max}$, $\varepsilon = {eps_ref:.0e}$", f"{unitnorm:.1e}")]
    return markdown_words({"d-mid": d_mid, "eps-ref": eps_ref, "eps-ref-unitvar": unitvar, "eps-ref-unitnorm": unitnorm,
            "ln-tab-eps": _table(("quantity", "value"), rows), "eps-scale-words": eps_scale_words(unitvar, unitnorm)})


def eps_scale_words(unitvar: float, unitnorm: float) -> str:
    """How the deficits of unit-variance and unit-norm inputs at the largest dimension compare."""
    ratio = unitnorm / unitvar if unitvar > 0 else float("inf")
    if ratio >= 10:
        return (f"the unit-norm deficit is {ratio:,.0f} times the unit-variance one: the same $\\varepsilon$ "
                "is negligible or not depending on the scale of the activations per coordinate")
    factor = max(ratio, 1 / ratio)
    if factor >= 2:
        return (f"the two deficits are within a factor {factor:.1f} of each other at this dimension: the scale of "
                "the activations per coordinate matters, by less than an order of magnitude")
    return (f"the two deficits are within a factor {factor:.1f} of each other at this dimension, "
            "so the scale of the activations per coordinate barely matters here")


def affine_glue(aff: dict, n_samples: int, d_mid: int) -> dict:
    """The check of :prf:ref:`prop-ln-affine` at ``d_mid`` (``affine_checks``): table and clauses."""
    rows = [(r"median $\lvert \bar y\rvert$", f"{aff['mean_median']:.2f}"),
            (r"longest over shortest $\lVert y - \beta\rVert$", f"{aff['norm_ratio']:.2f}"),
            (r"relative distance from the hyperplane {eq}`eq-affine-plane`", f"{aff['plane_residual']:.1e}"),
            (r"relative spread of the scores of $\mathbf 1/\gamma$", f"{aff['uniform_spread']:.1e}"),
            (r"outputs that their query $v_k/\gamma$ selects", f"{aff['selected']:.1%}"),
            (r"smallest winning margin (units of $d$)", f"{aff['min_margin']:.2f}"),
            (r"outputs that the naive query $y_k$ selects", f"{aff['self_selected']:.1%}")]
    gone = aff["mean_median"] > 1e-6 and aff["norm_ratio"] > 1 + 1e-6
    return markdown_words({"ln-tab-affine": _table(("quantity", "value"), rows),
            "aff-gone-words": ("mean zero and the round sphere are gone" if gone else
                               "these draws of $\\gamma, \\beta$ happen to leave mean zero and one norm nearly intact"),
            "aff-selected-words": selected_words(aff["selected"], "every output is the unique maximiser of its own query $v_k/\\gamma$"),
            "aff-self-words": ("the naive query happens to work as well" if aff["self_selected"] == 1.0 else
                               "the naive query fails for some of them"),
            "aff-self_selected": aff["self_selected"]})


def selected_words(fraction: float, every: str) -> str:
    """``every`` when the fraction of selected points is one, else the fraction in words."""
    return every if fraction == 1.0 else f"only {fraction:.1%} of the points are selected by their query"


def affine3_glue(n: int, self_selected: float, selected: float) -> dict:
    """The ellipse of :numref:`fig-ln-affine`: how often the naive query and $v_k/\\gamma$ select their point."""
    naive = ("fails on the shifted ellipse: it selects its own point for only "
             f"{self_selected:.1%} of {n} points of the ellipse" if self_selected < 1.0 else
             f"works on this ellipse too: it selects its own point for all {n} points")
    return markdown_words({"aff3-naive-words": naive,
            "aff3-selected-words": ("while $v_k/\\gamma$ selects every one" if selected == 1.0 else
                                    f"and $v_k/\\gamma$ selects {selected:.1%} of them")})


def rms_glue(rms: dict, tol: float) -> dict:
    """The check of RMSNorm (``rms_checks``): the numbers and the clauses that read them."""
    return markdown_words({"rms-norm_dev": rms["norm_dev"], "rms-mean_err": rms["mean_err"], "rms-mean_median": rms["mean_median"],
            "rms-ln_err": rms["ln_err"],
            "rms-project-words": ("RMSNorm does not project" if rms["mean_median"] > tol else
                                  "for these inputs the mean happens to be near zero"),
            "rms-ln-words": ("which is {eq}`eq-ln-rms` to rounding" if rms["ln_err"] <= tol else
                             f"more than the tolerance {tol:.0e}")})


def circle_glue(y3, n_points: int, tol: float) -> dict:
    """The LayerNorm outputs of :numref:`fig-ln-3d` (``y3``: shape ``(n, 3)``) against the circle."""
    import numpy as np
    radius = float(np.max(np.abs(np.linalg.norm(y3, axis=-1) - np.sqrt(3))))
    mean = float(np.max(np.abs(y3.sum(axis=-1))))
    return markdown_words({"n-points-3d": n_points, "ln3d-radius-dev": radius, "ln3d-mean-max": mean,
            "ln3d-words": "every output lies on the circle" if max(radius, mean) <= tol else
                          "the outputs stray from the circle"})


def lowvar_glue(lowvar: dict, eps_ref: float, ratio: float, n_queries: int) -> dict:
    """The pentagon of five unit-variance keys and a sixth of variance eps/ratio (``low_variance_key``)."""
    import numpy as np
    inradius = np.sqrt(3) * np.cos(np.pi / 5)  # distance of a pentagon edge from the centre
    rows = [(r"$\varepsilon = 0$", f"{lowvar['norm_exact']:.3f}", f"{lowvar['wins_exact']:.1%}"),
            (rf"$\varepsilon = {eps_ref:.0e}$", f"{lowvar['norm_eps']:.3f}", f"{lowvar['wins_eps']:.1%}")]
    inside = lowvar["norm_eps"] < inradius
    return markdown_words({"lowvar-ratio": ratio, "n-queries": n_queries,
            "ln-tab-lowvar": _table(("LayerNorm", "norm of the sixth key", f"queries it wins (of {n_queries})"), rows),
            "lowvar-words": (("With $\\varepsilon$ the sixth key is pulled inside the pentagon, into the convex hull "
                              "of the other five, and "
                              + ("no query selects it" if lowvar["wins_eps"] == 0 else
                                 f"it still wins {lowvar['wins_eps']:.1%} of the queries")) if inside else
                             "With $\\varepsilon$ the sixth key stays outside the pentagon and remains selectable")})
