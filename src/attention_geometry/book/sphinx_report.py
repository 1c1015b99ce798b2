"""A Sphinx extension for run reports: references to other chapters link into the main book.

A run report (:mod:`.report`) is a one-chapter book. The chapter's references
to the rest of the book (``{doc}``, ``{ref}``, ``{numref}``, ``{eq}``,
``{prf:ref}`` whose target is in another chapter) have no target in it. This
extension resolves them, before Sphinx would warn, against the main book's
built HTML (``ag_main_book``, a folder; ``ag_main_book_url``, that folder
relative to the report's HTML root): a link to the right page and anchor, with
the title or number that the main book shows ("Theorem 6.2", "(7.3)"). Without
a built main book the reference is kept as plain text, without a warning.
"""

import posixpath
import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["Target", "MainBook", "setup"]

_ID = re.compile(r'\sid="([^"]+)"')
_NUMBER = re.compile(r'<span class="(?:caption-number|eqno)">\s*(.*?)\s*(?:<a |</span>)', re.S)
_HEADING = re.compile(r"<h[1-6][^>]*>(.*?)</h[1-6]>", re.S)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Target:
    page: str  # the HTML page, relative to the main book's root
    anchor: str  # "" for a whole page
    title: str  # a page's or section's title, a figure's caption
    number: str  # "Fig. 3", "Theorem 6.2", "(7.3)"; "" if none


def _text(html: str) -> str:
    return " ".join(unescape(_TAG.sub("", html)).replace("¶", "").replace("#", "").split())


class MainBook:
    """The targets of a built book's HTML pages, read on demand."""

    def __init__(self, html: Path):
        self.html = Path(html)
        self._ids: dict[str, Target] | None = None
        self._docs: dict[str, Target] = {}

    def _read(self) -> dict[str, Target]:
        ids: dict[str, Target] = {}
        for page in sorted(self.html.rglob("*.html")):
            rel = page.relative_to(self.html).as_posix()
            if rel.startswith(("_", "genindex", "search")):
                continue
            text = page.read_text(encoding="utf-8", errors="replace")
            heading = _HEADING.search(text)
            self._docs[rel.removesuffix(".html")] = Target(rel, "", _text(heading.group(1)) if heading else rel, "")
            for m in _ID.finditer(text):
                if m.group(1) in ids:
                    continue
                after = text[m.end():m.end() + 4000]
                number = _NUMBER.search(after[:1500])
                title = _HEADING.search(after[:600])
                caption = re.search(r'<span class="caption-text">(.*?)</span>', after[:3000], re.S)
                ids[m.group(1)] = Target(rel, m.group(1), _text((title or caption).group(1)) if (title or caption) else "",
                                         _text(number.group(1)) if number else "")
        return ids

    @property
    def ids(self) -> dict[str, Target]:
        if self._ids is None:
            self._ids = self._read() if self.html.is_dir() else {}
        return self._ids

    def label(self, label: str, kind: str = "") -> Target | None:
        """The target of ``label`` (an equation's with ``kind="eq"``)."""
        candidates = [f"equation-{label}", nodes.make_id(f"equation-{label}")] if kind == "eq" else []
        for anchor in [*candidates, label, nodes.make_id(label)]:
            if anchor in self.ids:
                return self.ids[anchor]
        return None

    def doc(self, docname: str) -> Target | None:
        self.ids  # noqa: B018 - reads the pages
        return self._docs.get(docname)


def _is_local(env, node) -> bool:
    """Whether the report itself has the target of ``node``."""
    domain, kind, target = node.get("refdomain"), node.get("reftype"), node.get("reftarget", "")
    if domain == "prf":
        return target in getattr(env, "proof_list", {})
    if domain == "math":
        return target in env.get_domain("math").equations
    if domain == "std" and kind == "doc":
        return _docname(node) in env.all_docs
    if domain == "std" and kind in ("ref", "numref"):
        std = env.get_domain("std")
        return target.lower() in std.labels or target.lower() in std.anonlabels or target in std.labels
    return True  # citations, glue, python objects...: not ours


def _docname(node) -> str:
    target = node.get("reftarget", "")
    if target.startswith("/"):
        return target[1:]
    return posixpath.normpath(posixpath.join(posixpath.dirname(node.get("refdoc", "")), target))


def _label_text(node, target: Target) -> str:
    kind = node.get("reftype")
    explicit = node.get("refexplicit")
    shown = node.astext()
    if kind == "eq":
        return target.number if target.number.startswith("(") else f"({target.number})"
    if kind == "numref" or node.get("refdomain") == "prf":
        if explicit and target.number:
            number = target.number.split()[-1]
            return shown.replace("{number}", number).replace("%s", number).replace("{name}", target.title)
        return target.number or target.title or shown
    if explicit:
        return shown
    return target.title or shown


class CrossBookReferences(SphinxPostTransform):
    """Resolve references to other chapters into links to the main book (see the module)."""

    default_priority = 5  # before Sphinx's own ReferencesResolver (10), which would warn

    def run(self, **kwargs) -> None:
        config = self.app.config
        book = None
        if config.ag_main_book:  # read once per build, on first use
            book = getattr(self.app, "_ag_main_book", None) or MainBook(Path(config.ag_main_book))
            self.app._ag_main_book = book
        base = config.ag_main_book_url.rstrip("/")
        depth = posixpath.relpath(".", posixpath.dirname(self.env.docname) or ".")
        for node in list(self.document.findall(pending_xref)):
            if _is_local(self.env, node):
                continue
            kind = node.get("reftype")
            found = None
            if book is not None:
                found = book.doc(_docname(node)) if kind == "doc" else book.label(node.get("reftarget", ""), kind)
            if found is None:
                node.replace_self(nodes.inline(node.astext(), node.astext(), classes=["ag-elsewhere"]))
                continue
            uri = posixpath.join(depth, base, found.page) + (f"#{found.anchor}" if found.anchor else "")
            text = _label_text(node, found)
            ref = nodes.reference(text, "", internal=False, refuri=uri, classes=["ag-main-book"],
                                  reftitle="in the book")
            ref += nodes.inline(text, text)
            node.replace_self(ref)


def setup(app):
    app.add_config_value("ag_main_book", "", "env")
    app.add_config_value("ag_main_book_url", "", "env")
    app.add_post_transform(CrossBookReferences)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
