"""The built book (`make book` output under _build/html)."""

import re
from pathlib import Path

import pytest

import attention_geometry as ag
from attention_geometry.book.toc import book_chapters, toc_pages

ROOT = Path(__file__).resolve().parents[1]

# Anything that would load from the network when a page opens.
REMOTE = re.compile(r"""<(?:script|link|img|iframe)[^>]+(?:src|href)=["'](?:https?:)?//""", re.I)


def pages(html: Path) -> list[Path]:
    found = [html / f"{page}.html" for page in toc_pages()]
    assert found, "the toc lists no pages"
    return found


def chapters():
    found = book_chapters()
    assert found, "the toc lists no chapters"
    return found


@pytest.mark.book
def test_every_toc_entry_has_a_page(built_book):
    missing = [p for p in pages(built_book) if not p.exists()]
    assert not missing


@pytest.mark.book
def test_no_page_shows_an_error_or_traceback(built_book):
    for page in pages(built_book):
        text = page.read_text()
        assert "Traceback (most recent call last)" not in text, page
        assert not re.search(r'class="[^"]*\boutput error\b', text), page
        assert "ParameterError" not in text, page


@pytest.mark.book
def test_no_page_loads_anything_from_the_network(built_book):
    html = sorted(built_book.rglob("*.html"))
    assert html
    for page in html:
        text = page.read_text()
        assert not REMOTE.search(text), (page, REMOTE.search(text).group(0))
        assert "cdn.jsdelivr" not in text and "cdnjs" not in text and "unpkg.com" not in text, page
    assert (built_book / "_static" / "mathjax" / "tex-chtml.js").exists()


@pytest.mark.book
def test_mathjax_is_the_local_copy(built_book):
    text = (built_book / "book" / "01_layernorm.html").read_text()
    assert re.search(r'<script[^>]+src="[^"]*_static/mathjax/tex-chtml\.js', text)


@pytest.mark.book
def test_theorems_and_figures_are_numbered(built_book):
    text = (built_book / "book" / "01_layernorm.html").read_text()
    assert re.search(r"Proposition\s*\d", text)
    assert re.search(r"Fig\.\s*\d|Figure\s*\d", text)
    assert 'class="caption-number"' in text


@pytest.mark.book
def test_each_chapter_has_a_download_of_its_executed_notebook(built_book):
    for chapter in chapters():
        page = built_book / f"{chapter.source.removesuffix('.md')}.html"
        text = page.read_text()
        link = f"_sources/{chapter.source.removesuffix('.md')}.ipynb"
        assert link in text, page
        assert (built_book / link).exists()


@pytest.mark.book
def test_glued_numbers_were_inserted(built_book):
    """Every key a chapter's prose references was glued by its executed notebook, and
    every {glue:text} role of the chapter was rendered into its page (no role left as
    text). A missing key is also a Sphinx warning, hence a build error."""
    from attention_geometry.book.notebooks import glued_values
    from attention_geometry.book.where import referenced_keys

    for chapter in chapters():
        source = (ROOT / "book" / f"{chapter.stem}.md").read_text()
        keys = referenced_keys(source)
        assert keys, chapter.name
        glued = glued_values(ROOT / "_build" / "executed" / f"{chapter.stem}.ipynb")  # figures too
        assert not keys - set(glued), (chapter.name, sorted(keys - set(glued)))
        page = (built_book / "book" / f"{chapter.stem}.html").read_text()
        roles = source.count("{glue:text}")
        assert page.count('class="pasted-text"') >= roles, chapter.name
        assert "{glue:" not in page, chapter.name


def test_notation_table_names_exist_in_the_library():
    preface = (ROOT / "book" / "preface.md").read_text()
    rows = [line for line in preface.splitlines() if line.startswith("| $")]
    assert rows
    public = set(ag.__all__)
    argument_names = {"d", "eps", "gamma", "beta", "X", "alpha"}
    for row in rows:
        for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row.split("|")[3]):
            assert name in public or name in argument_names, name


@pytest.mark.book
def test_each_chapters_headline_is_a_glued_number(built_book):
    """What a sweep plots by default (the registry's `headline`) is a number the chapter glues."""
    from attention_geometry.book.notebooks import glued_data

    for chapter in chapters():
        values = glued_data(ROOT / "_build" / "executed" / f"{chapter.stem}.ipynb")
        assert chapter.headline in values, (chapter.name, chapter.headline)
        assert isinstance(values[chapter.headline], (int, float)), (chapter.name, values[chapter.headline])
        assert chapter.cost is not None, chapter.name
