"""Generated appendices: they match the chapters (a drift fails here)."""

import html
import json
import re

import pytest

from pydantic import Field

from attention_geometry.book.appendices import _errata_section, _relocate, chapter_title, parameters_page
from attention_geometry.book.toc import book_chapters, parameters_cell

from conftest import chapter_text, make_project, toy_chapter


def _text(path):
    raw = path.read_text()
    raw = re.sub(r"<[^>]+>", " ", raw)
    text = html.unescape(raw).replace("\u2018", "'").replace("\u2019", "'")  # Sphinx smart quotes
    return re.sub(r"\s+", " ", text)


def chapters():
    """The toc's chapters; none found is a failure, not a loop that checks nothing."""
    found = book_chapters()
    assert found, "the toc lists no chapters"
    return found


@pytest.mark.book
def test_parameters_appendix_matches_every_chapter(built_book):
    text = _text(built_book / "book" / "appendix_parameters.html")
    for chapter in chapters():
        defaults = parameters_cell(chapter)
        assert chapter.name in text
        for name, param in chapter.params.items():
            assert name in text, (chapter.name, name)
            assert json.dumps(defaults[name]) in text or repr(defaults[name]) in text, (chapter.name, name)
            assert param.allowed() in text, (chapter.name, name)
            assert param.doc in text, (chapter.name, name)


def test_parameters_appendix_is_written_from_the_chapter_models(tmp_path):
    """Each row: the model's default, its smoke value, what it allows and its meaning; then its presets."""
    params = {"n": (int, Field(3, ge=0, le=100, description="count of things")),
              "xs": (list[float], Field([0.5], min_length=1, max_length=4, description="reals"))}
    chapter = toy_chapter("toy", params=params, smoke={"n": 1}, presets={"paper": {"n": 50}})
    project = make_project(tmp_path, {"toy": (chapter_text("Toy", "n = 3\nxs = [0.5]"), chapter)})
    page = parameters_page([chapter], project)
    assert "| `n` | `3` | `1` | an integer in [0, 100] | count of things |" in page
    assert "| `xs` | `[0.5]` | (default) | a list of 1 to 4 items, each a finite number in [-inf, inf] | reals |" in page
    assert "Preset `paper` (`make paper CHAPTER=toy`): `n = 50`" in page


@pytest.mark.book
def test_reproducibility_appendix_lists_every_chapter_and_the_environment(built_book):
    text = _text(built_book / "book" / "appendix_reproducibility.html")
    for chapter in chapters():
        meta = json.loads((built_book.parent / "executed" / f"{chapter.stem}.ipynb").read_text())
        key = meta["metadata"]["attention_geometry"]["cache_key"][:16]
        assert key in text, chapter.name
        assert f"make run CHAPTER={chapter.name}" in text
    assert "papermill book/" not in text  # commands a reader can run as they are
    assert "Runs at the papers' settings" in text
    for package in ("numpy", "torch", "jupyter-book", "papermill"):
        assert package in text


@pytest.mark.book
def test_errata_appendix_collects_each_chapter(built_book):
    text = _text(built_book / "book" / "appendix_errata.html")
    for chapter in chapters():
        assert chapter_title(chapter, built_book.parents[1]) in text
        section = _errata_section((built_book.parents[1] / chapter.source).read_text())
        assert section is not None, f"{chapter.source} has no 'Errata' section"


def test_errata_section_extraction_and_relocation():
    md = "# T\n\n## Errata and caveats\n\n(lbl)=\nValue {glue:text}`k:.2f` and {glue:text}`n`.\n" \
         "```{code-cell} ipython3\n# not a heading\n```\n\n### Sub\nmore\n\n## Next\nnot this\n"
    body = _errata_section(md)
    assert "Value" in body and "more" in body and "not this" not in body
    moved = _relocate(body, "ch.ipynb")
    assert "{glue:text}`ch.ipynb::k:.2f`" in moved and "{glue:text}`ch.ipynb::n:s`" in moved
    assert "(lbl)=" not in moved and "code-cell" not in moved
    assert _errata_section("# T\n\nno such section\n") is None
