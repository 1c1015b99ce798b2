"""Figures a reader can move: sliders over a chapter's parameters, the mathematics recomputed
in the page, drawn by plotly.js.

A moving figure is an HTML snippet: sliders, an empty plot, and a call into
``interactive.js`` (beside this module), which ports the library's formulas to
JavaScript line by line (for the Cesàro profile: :func:`~attention_geometry.cesaro.log_last_row`,
the ``O(HL)`` recursion ``eq-cesaro-recursion``, and
:func:`~attention_geometry.cesaro.limit_cell_masses`, the continuous limit
``eq-cesaro-rho``) and draws with plotly.js; for chapter 6's recency
probability it reads the chapter's stored grid of Monte Carlo estimates. plotly.js is the bundle inside the
``plotly`` wheel; nothing is loaded from the network. The page loads it once:
the book's Sphinx extension :mod:`attention_geometry.book.sphinx_figures`
writes it into ``_static`` and loads it on the pages that hold a moving figure,
and :meth:`MovingFigure.standalone` inlines it into a page of its own.

A moving figure complements a static one, which stays for the PDF: where HTML
cannot be shown (the PDF, a terminal) it shows as a sentence saying what the
HTML book lets the reader move.
"""

import html
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._checks import check_choice, check_float, check_int, fail, shape_of

__all__ = ["MARKER", "MovingFigure", "cesaro_profile", "recency_rp", "plotly_bundle", "plotly_bundle_name"]

#: The class of a moving figure's element: the Sphinx extension looks for it in a page's body.
MARKER = "ag-moving-figure"
_SCRIPT = Path(__file__).with_name("interactive.js")
_IDS = itertools.count(1)  # ids in the order of the figures: the same in every run of a notebook
# The chapter's ranges (its parameter model): alpha in [0, 1], H in [2, 400], L in [3, 2^20]. The
# slider's lengths stop at 2^14 (and the figure's own L): at L = 2^14, H = 400 one recomputation takes
# about 1.5 s in Chromium on a slow machine (4.5 s at 2^16), so past 10^6 operations the figure
# recomputes when the slider is released, not while it moves.
_L_MAX, _L_SLIDER_MAX, _H_MAX, _LIVE_COST = 2**20, 2**14, 400, 1_000_000
_STYLE = (".ag-moving-figure{margin:1em 0}.ag-moving-figure .ag-controls{display:flex;flex-wrap:wrap;"
          "gap:.4em 1.5em;font-size:.95em}.ag-moving-figure label{display:flex;align-items:center;gap:.4em}"
          ".ag-moving-figure output{min-width:4.5em;font-variant-numeric:tabular-nums}"
          ".ag-moving-figure .ag-plot{height:420px;background:white}"
          ".ag-moving-figure .ag-readout{font-size:.9em;margin:.3em 0}")


@dataclass(frozen=True)
class MovingFigure:
    """A figure a reader can move. ``html``: the snippet for a page that loads plotly.js
    (the book's pages do); ``text``: what shows where HTML cannot (a PDF, a terminal)."""

    html: str
    text: str

    def _repr_html_(self) -> str:
        return self.html

    def _repr_markdown_(self) -> str:
        return f"*{self.text}*"

    def __repr__(self) -> str:
        return self.text

    def standalone(self, title: str = "Attention Geometry") -> str:
        """A whole HTML page holding this figure and plotly.js inline (about 4.8 MB): it works
        opened from disk, with no network."""
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}"
                f"</title>\n<script>{plotly_bundle()}</script></head>\n<body>\n{self.html}\n</body></html>\n")


def plotly_bundle() -> str:
    """plotly.js as shipped inside the ``plotly`` wheel (minified, about 4.8 MB)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def plotly_bundle_name() -> str:
    """The bundle's file name in a built book's ``_static``, with its version (a new version is a new file)."""
    from plotly.offline import get_plotlyjs_version

    return f"plotly-{get_plotlyjs_version()}.min.js"


def _slider(name: str, label: str, value, low=0, high=0, step=1, *, index: list | None = None,
            digits: int | None = None) -> tuple[str, dict]:
    """An ``<input type=range>`` and its ``<output>`` (the value shown with ``digits`` decimals);
    over the entries of ``index`` if given (then the slider's own values are their positions)."""
    if index is not None:
        low, high, step, value = 0, len(index) - 1, 1, index.index(value)
    markup = (f'<label>{label} <input type="range" name="{name}" min="{low}" max="{high}" step="{step}" '
              f'value="{value}" aria-label="{html.escape(label)}"><output name="{name}"></output></label>')
    spec = {"name": name, **({"values": index} if index is not None else {}),
            **({"digits": digits} if digits is not None else {})}
    return markup, spec


def _figure(kind: str, sliders: list[tuple[str, dict]], live_cost: int, text: str, data=None) -> MovingFigure:
    fid = f"ag-moving-{next(_IDS)}"
    spec = {"kind": kind, "sliders": [s for _, s in sliders], "liveCost": live_cost, "data": data}
    markup = (f'<style>{_STYLE}</style>\n'
              f'<div class="{MARKER}" id="{fid}" data-spec="{html.escape(json.dumps(spec))}">\n'
              f'<div class="ag-controls">{"".join(m for m, _ in sliders)}</div>\n'
              f'<div class="ag-plot"></div>\n<p class="ag-readout"></p>\n</div>\n'
              f'<script>\n{_SCRIPT.read_text(encoding="utf-8")}\nwindow.agMoving.start("{fid}");\n</script>')
    return MovingFigure(markup, text)


def cesaro_profile(L: int = 2048, H: int = 24, alpha: float = 0.5) -> MovingFigure:
    r"""The influence profile :math:`p = e_L^\top N^H` and the continuous limit's cell masses
    (chapter 7), with sliders for ``alpha`` (steps of 0.01), ``H`` (2 to 400) and ``L``
    (powers of 2 from 4 to 16 384, and ``L`` itself), starting at the given values. Each move
    recomputes both in the page: the exact profile by the ``O(HL)`` recursion in log space
    (:func:`~attention_geometry.cesaro.log_last_row`), the limit as
    :func:`~attention_geometry.cesaro.limit_cell_masses` does."""
    L = check_int("L", L, low=3, high=_L_MAX)
    H = check_int("H", H, low=2, high=_H_MAX)
    alpha = check_float("alpha", alpha, low=0.0, high=1.0)
    lengths = sorted({2**k for k in range(2, _L_SLIDER_MAX.bit_length())} | {L})
    sliders = [_slider("alpha", "residual weight α", round(alpha, 2), 0, 1, 0.01, digits=2),
               _slider("H", "depth H", H, 2, _H_MAX),
               _slider("L", "length L", L, index=lengths)]
    return _figure("cesaro-profile", sliders, live_cost=_LIVE_COST, text=(
        "(In the HTML version of this book: this figure, with sliders for α, H and L.)"))


def recency_rp(dims, alphas, layers, rp: dict, se: dict, gammas=(0.0, 1.0), *, d=None, alpha=None) -> MovingFigure:
    r"""The recency probability over depth (chapter 6), read from a stored grid: sliders for the
    token correlation :math:`c` (the chapter's name for Kim et al.'s anisotropy, code name ``alpha``)
    over ``alphas`` and the width :math:`d` over ``dims`` (starting at ``alpha``, ``d``; the last of
    each by default), one curve per residual switch :math:`\omega` (code name ``gamma``) with
    :math:`\pm 2` standard errors. Nothing is simulated in the page: each point of the grid is
    the chapter's Monte Carlo estimate.

    ``rp[(gamma, layer)], se[(gamma, layer)]``: ``(len(alphas), len(dims))``, as
    :func:`attention_geometry.figures.recency.plot_rp_dims` takes them."""
    dims, alphas = [int(x) for x in dims], [float(x) for x in alphas]
    layers, gammas = [int(x) for x in layers], [float(x) for x in gammas]
    d, alpha = dims[-1] if d is None else int(d), alphas[-1] if alpha is None else float(alpha)
    check_choice("d", d, dims)
    check_choice("alpha", alpha, alphas)
    for name, values in (("rp", rp), ("se", se)):
        for key in ((g, l) for g in gammas for l in layers):
            if np.shape(values.get(key)) != (len(alphas), len(dims)):
                raise fail(f"{name}[{key}]", shape_of(values.get(key)), f"shape ({len(alphas)}, {len(dims)})")
    table = {name: [[[[float(x) for x in row] for row in values[(g, l)]] for l in layers] for g in gammas]
             for name, values in (("rp", rp), ("se", se))}
    sliders = [_slider("alpha", "token correlation c", alpha, index=alphas), _slider("d", "width d", d, index=dims)]
    data = {"dims": dims, "alphas": alphas, "layers": layers, "gammas": gammas, **table}
    return _figure("recency-rp", sliders, live_cost=0, data=data, text=(
        "(In the HTML version of this book: this figure, with sliders for c and d over the grid.)"))
