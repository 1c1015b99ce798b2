"""A Sphinx extension for the figures a reader can move (:mod:`attention_geometry.figures.interactive`).

Such a figure draws with plotly.js, the bundle inside the ``plotly`` wheel
(about 4.8 MB). A page whose body holds one gets it as a deferred script,
``_static/plotly-<version>.min.js``, written once into the build folder when
the first such page is written; no other page loads it, and nothing comes from
the network. The book and every run report (a one-chapter book built with the
same configuration) go through it.
"""

import os
from pathlib import Path

__all__ = ["MARKER", "add_plotly", "setup"]

#: The class of a moving figure's element (``attention_geometry.figures.interactive.MARKER``; the
#: figures are imported, with matplotlib, only for a page that holds one).
MARKER = "ag-moving-figure"


def add_plotly(app, pagename, templatename, context, doctree) -> None:
    """On ``html-page-context``: load plotly.js on a page that holds a moving figure."""
    if f'class="{MARKER}"' not in (context.get("body") or ""):
        return
    from ..figures.interactive import plotly_bundle, plotly_bundle_name

    name = plotly_bundle_name()
    bundle = Path(app.outdir) / "_static" / name
    if not bundle.is_file():  # the name carries the version: an existing file is this bundle
        bundle.parent.mkdir(parents=True, exist_ok=True)
        tmp = bundle.with_name(f".{name}.{os.getpid()}")  # parallel writers each rename a whole file
        tmp.write_text(plotly_bundle(), encoding="utf-8")
        os.replace(tmp, bundle)
    app.add_js_file(name, loading_method="defer")


def setup(app):
    # before sphinx_offline's filter of script_files (priority 900), which keeps what is added here
    app.connect("html-page-context", add_plotly, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
