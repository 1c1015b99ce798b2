"""Figures a reader can move (attention_geometry.figures.interactive): in headless Chromium
with every non-local request blocked, three slider positions of chapter 7's figure give the
numbers of the library (the exact profile by the O(HL) recursion, the continuous limit's cell
masses) to 1e-9, and three of chapter 6's give the stored grid's recency probabilities at the
right (alpha, d); the snippet's text form for the PDF; the Sphinx extension loads plotly.js,
written once into _static, on the pages that hold such a figure and on no other."""

from types import SimpleNamespace

import numpy as np
import pytest

import attention_geometry as ag
from attention_geometry._checks import ArgumentError
from attention_geometry.book import sphinx_figures
from attention_geometry.figures import interactive
from test_browser import browser, open_page, serve  # noqa: F401  (browser: the module's Chromium fixture)

# (alpha, H, L): a light mix, a deep and almost fully mixing stack, pure averaging at the paper's size
POSITIONS = [(0.37, 12, 512), (0.93, 40, 128), (1.0, 24, 2048)]
TINY = 1e-290  # below this the library's and the page's numbers may round differently to denormals


def agree(page: np.ndarray, library: np.ndarray, rtol: float = 1e-9) -> float:
    """The largest relative difference where the library's value is not tiny; both tiny elsewhere."""
    big = library > TINY
    assert np.all(page[~big] <= 2 * TINY), "the page has mass where the library has none"
    rel = np.abs(page[big] / library[big] - 1)
    assert rel.max() <= rtol, (rel.max(), int(np.argmax(rel)))
    return float(rel.max())


def _set_and_read(page, figure, sliders: dict, done: str, arg) -> dict:
    """Move the sliders (name -> position), wait until the page's result satisfies ``done``, return it."""
    for name, position in sliders.items():
        page.fill(f'input[name="{name}"]', str(position))
    page.wait_for_function(f"([el, arg]) => el.agResult && ({done})", arg=[figure.element_handle(), arg],
                           timeout=30_000)
    return page.evaluate("el => Object.fromEntries(Object.entries(el.agResult).map(([k, v]) =>"
                         " [k, ArrayBuffer.isView(v) ? Array.from(v) : v]))", figure.element_handle())


@pytest.mark.browser
def test_three_slider_positions_give_the_librarys_numbers(browser, tmp_path):
    (tmp_path / "index.html").write_text(interactive.cesaro_profile(2048, 24, 0.5).standalone(), encoding="utf-8")
    httpd, url = serve(tmp_path)
    try:
        page, console, blocked, failed = open_page(browser, url, "index.html")
        figure = page.locator(f".{interactive.MARKER}")
        page.wait_for_function("el => el.dataset.state === 'drawn'", arg=figure.element_handle(), timeout=30_000)
        assert page.locator(".ag-plot .main-svg").count() > 0, "plotly.js drew the figure"
        lengths = [int(v) for v in page.evaluate("el => JSON.parse(el.dataset.spec).sliders[2].values",
                                                 figure.element_handle())]
        for alpha, H, L in POSITIONS:
            result = _set_and_read(page, figure, {"alpha": alpha, "H": H, "L": lengths.index(L)},
                                   "el.agResult.alpha === arg[0] && el.agResult.H === arg[1] && el.agResult.L === arg[2]",
                                   [alpha, H, L])
            log_p, masses = np.array(result["logProfile"], dtype=float), np.array(result["cellMasses"], dtype=float)
            assert log_p.shape == masses.shape == (L,)
            # the profile, in log space (what the figure plots) and as probabilities
            np.testing.assert_allclose(log_p, ag.log_last_row(L, H, alpha), rtol=0, atol=1e-9)
            agree(np.exp(log_p), ag.last_row(L, H, alpha))
            agree(masses, ag.limit_cell_masses(L, H, alpha))
            title = page.locator(".ag-plot .gtitle").text_content()
            assert f"L = {L}, H = {H}, α = {alpha:.2f}" in title, title
        assert not blocked, f"requests that left localhost: {blocked}"
        assert not failed, failed
        errors = [t for kind, t in console if kind in ("error", "pageerror")]
        assert not errors, errors
        page.close()
    finally:
        httpd.shutdown()


@pytest.mark.browser
def test_three_slider_positions_read_the_stored_recency_grid(browser, tmp_path):
    dims, alphas, layers, gammas = [16, 64, 256], [0.0, 0.2, 0.5, 1.0], [1, 2, 3, 4], (0.0, 1.0)
    rng = np.random.default_rng(6)  # distinct numbers everywhere: a transposed index would show
    rp = {(g, l): rng.uniform(0.3, 0.7, (len(alphas), len(dims))) for g in gammas for l in layers}
    se = {key: rng.uniform(0.001, 0.01, (len(alphas), len(dims))) for key in rp}
    (tmp_path / "index.html").write_text(interactive.recency_rp(dims, alphas, layers, rp, se).standalone(),
                                         encoding="utf-8")
    httpd, url = serve(tmp_path)
    try:
        page, console, blocked, failed = open_page(browser, url, "index.html")
        figure = page.locator(f".{interactive.MARKER}")
        page.wait_for_function("el => el.dataset.state === 'drawn'", arg=figure.element_handle(), timeout=30_000)
        for alpha, d in [(0.2, 16), (1.0, 256), (0.0, 64)]:
            got = _set_and_read(page, figure, {"alpha": alphas.index(alpha), "d": dims.index(d)},
                                "el.agResult.alpha === arg[0] && el.agResult.d === arg[1]", [alpha, d])
            a, k = alphas.index(alpha), dims.index(d)
            for i, g in enumerate(gammas):
                assert got["rp"][i] == [rp[(g, l)][a, k] for l in layers]
                assert got["se"][i] == [se[(g, l)][a, k] for l in layers]
            assert page.locator(".ag-plot .scatterlayer .trace").count() == len(gammas)
        assert not blocked and not failed, (blocked, failed)
        assert not [t for kind, t in console if kind in ("error", "pageerror")], console
        page.close()
    finally:
        httpd.shutdown()


def test_the_figure_shows_as_a_sentence_where_html_cannot():
    figure = interactive.cesaro_profile(128, 8, 0.5)
    assert figure._repr_markdown_() == f"*{figure.text}*" and repr(figure) == figure.text
    assert "α, H and L" in figure.text and "HTML" in figure.text
    assert figure.html.count(f'class="{interactive.MARKER}"') == 1
    assert "<script src" not in figure.html and "http" not in figure.html.lower(), "nothing from the network"


def test_the_figure_checks_its_parameters():
    with pytest.raises(ArgumentError, match=r"L = 2 is out of range"):
        interactive.cesaro_profile(2, 8, 0.5)
    with pytest.raises(ArgumentError, match=r"alpha = 1.5"):
        interactive.cesaro_profile(128, 8, 1.5)
    rp = {(g, l): np.zeros((2, 3)) for g in (0.0, 1.0) for l in (1, 2)}
    with pytest.raises(ArgumentError, match=r"d = 32 is not one of the choices"):
        interactive.recency_rp([16, 64, 256], [0.0, 0.5], [1, 2], rp, rp, d=32)
    with pytest.raises(ArgumentError, match=r"rp\[\(0.0, 1\)\] = an array of shape \(3, 2\)"):
        interactive.recency_rp([16, 64, 256], [0.0, 0.5], [1, 2], {**rp, (0.0, 1): np.zeros((3, 2))}, rp)


def _context(body: str) -> dict:
    return {"body": body, "script_files": []}


def test_the_sphinx_extension_loads_plotly_only_where_a_figure_is(tmp_path):
    added = []
    app = SimpleNamespace(outdir=str(tmp_path), add_js_file=lambda name, **kw: added.append((name, kw)))
    sphinx_figures.add_plotly(app, "book/01", "page.html", _context("<p>no figure</p>"), None)
    assert added == [] and not (tmp_path / "_static").exists()
    sphinx_figures.add_plotly(app, "book/07", "page.html", _context(interactive.cesaro_profile().html), None)
    bundle = tmp_path / "_static" / interactive.plotly_bundle_name()
    assert added == [(bundle.name, {"loading_method": "defer"})]
    assert bundle.read_text(encoding="utf-8") == interactive.plotly_bundle()
    mtime = bundle.stat().st_mtime_ns
    sphinx_figures.add_plotly(app, "book/06", "page.html", _context(interactive.cesaro_profile().html), None)
    assert bundle.stat().st_mtime_ns == mtime, "written once per build folder"
    assert sphinx_figures.MARKER == interactive.MARKER
