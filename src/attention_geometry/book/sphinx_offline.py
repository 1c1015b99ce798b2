"""A Sphinx extension that keeps the book offline.

Jupyter Book always loads ``sphinx_thebe``, which writes the address of its
JavaScript bundle on a CDN into every page (fetched only when a reader clicks
"live code", which this book does not offer). This extension drops those two
scripts from each page, so no page names a remote resource.
"""

__all__ = ["setup"]


def _is_thebe(script) -> bool:
    filename = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [s for s in scripts if not _is_thebe(s)]


def setup(app):
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
