"""Generated appendices: they match the chapters (a drift fails here)."""

import html
import json
import re

import pytest

from pydantic import Field

from attention_geometry.book.appendices import (_caveats_section, _relocate, caveats_page, chapter_title, errata_page,
                                                parameters_page)
from attention_geometry.book.errata import ERRATA, PAPERS, SEVERITIES, Erratum, cross_references, evidence_target, labels
from attention_geometry.book.project import Project
from attention_geometry.book.registry import CHAPTERS
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
def test_caveats_appendix_collects_each_chapter(built_book):
    text = _text(built_book / "book" / "appendix_caveats.html")
    for chapter in chapters():
        assert chapter_title(chapter, built_book.parents[1]) in text
        section = _caveats_section((built_book.parents[1] / chapter.source).read_text())
        assert section is not None, f"{chapter.source} has no 'Caveats' section"


@pytest.mark.book
def test_errata_appendix_has_a_table_per_paper_with_an_erratum(built_book):
    raw = (built_book / "book" / "appendix_errata.html").read_text()
    papers = {e.paper for e in ERRATA}
    assert raw.count("<table") == len(papers)
    for severity in {e.severity for e in ERRATA}:
        assert severity in raw


def test_caveats_section_extraction_and_relocation():
    md = "# T\n\n## Errata and caveats\n\n(lbl)=\nValue {glue:text}`k:.2f` and {glue:text}`n`.\n" \
         "```{code-cell} ipython3\n# not a heading\n```\n\n### Sub\nmore\n\n## Next\nnot this\n"
    body = _caveats_section(md)
    assert "Value" in body and "more" in body and "not this" not in body
    moved = _relocate(body, "ch.ipynb")
    assert "{glue:text}`ch.ipynb::k:.2f`" in moved and "{glue:text}`ch.ipynb::n:s`" in moved
    assert "(lbl)=" not in moved and "code-cell" not in moved
    assert _caveats_section("# T\n\nno such section\n") is None
    assert _caveats_section("# T\n\n## Caveats\n\nOne.\n\n## After\n").strip() == "One."
    assert _caveats_section("# T\n\n## Caveats of the runs\n\nTwo.\n").strip() == "Two."
    assert _caveats_section("# T\n\n## Errata of the papers\n\nNo.\n") is None


# --- the papers' errata (src/attention_geometry/book/errata.py) ---

ROOT = Project.find().root
_KIND = {"ref": "section", "eq": "equation", "numref": "figure", "prf:ref": "directive"}


def test_every_erratum_is_complete():
    assert ERRATA
    bib = (ROOT / "references.bib").read_text()
    for e in ERRATA:
        for field in ("paper", "chapter", "location", "written", "right", "evidence", "severity"):
            assert str(getattr(e, field)).strip(), (e.location, field)
        assert e.severity in SEVERITIES, e
        assert e.paper in PAPERS and f"{{{e.paper}," in bib, e.paper
        assert e.chapter in CHAPTERS, e.chapter
        assert "|" not in e.written + e.right + e.location, e.location  # table cells
    keys = [(e.paper, e.location) for e in ERRATA]
    assert len(keys) == len(set(keys)), "one record per erratum"


def test_every_erratum_points_at_a_label_of_its_chapter():
    """The evidence (and every cross-reference in a record) targets a label of the chapter of the right
    kind: {ref} a section heading, {eq} an equation, {numref} a figure or table, {doc} the chapter."""
    for e in ERRATA:
        source = ROOT / CHAPTERS[e.chapter].source
        found = labels(source.read_text())
        role, target = evidence_target(e.evidence)
        refs = [(role, target), *cross_references(e.written + e.right)]
        for role, target in refs:
            if role == "doc":
                assert target == source.stem, (e.location, target)
            else:
                assert found.get(target) == _KIND[role], (e.location, role, target, found.get(target))


def test_an_erratum_is_checked_where_it_is_made():
    good = dict(paper="p", chapter="c", location="Eq. 1", written="a", right="b", evidence="{eq}`eq-x`",
                severity="wrong number")
    assert Erratum(**good).severity == "wrong number"
    with pytest.raises(ValueError, match="severity = 'typo'"):
        Erratum(**{**good, "severity": "typo"})
    with pytest.raises(ValueError, match="right = ' ' is empty"):
        Erratum(**{**good, "right": " "})
    for bad in ("eq-x", "{eq}`a` and {eq}`b`", "{prf:ref}`thm-x`", "see {doc}`ch`"):
        with pytest.raises(ValueError, match="evidence"):
            Erratum(**{**good, "evidence": bad})
    assert evidence_target("{ref}`the section <sec-x>`") == ("ref", "sec-x")


def test_labels_of_a_page():
    md = ("(sec-a)=\n## A\n\n(par-b)=\n**B.** text\n\n$$\nx\n$$ (eq-c)\n\n```{figure} f.png\n:name: fig-d\n```\n\n"
          "```{prf:theorem} T\n:label: thm-e\n```\n")
    assert labels(md) == {"sec-a": "section", "par-b": "paragraph", "eq-c": "equation", "fig-d": "figure",
                          "thm-e": "directive"}


def test_errata_page_has_one_table_per_paper_with_an_erratum(tmp_path):
    a = toy_chapter("toy", stem="01_toy")
    b = toy_chapter("other", stem="02_other")
    project = make_project(tmp_path, {"01_toy": (chapter_text("Toy", "n = 3"), a),
                                      "02_other": (chapter_text("Other", "n = 3"), b)})
    (tmp_path / "references.bib").write_text(
        "@article{p1,\n  title = {The {First} Paper},\n  author = {Kim, A. and Lee, B. and Park, C.},\n"
        "  year = {2025}\n}\n\n@article{p2,\n  title = {Second},\n  author = {Solo, D.},\n  year = {2026}\n}\n")
    errata = (Erratum("p1", "toy", "Eq. 1", "$x = 2$", "$x = 1$ ({glue:text}`toy-x`)", "{eq}`eq-one`", "wrong number"),
              Erratum("p1", "other", "Eq. 2", "a", "b", "{doc}`02_other`", "slip with no effect"),
              Erratum("p3", "toy", "§1", "c", "d", "{ref}`sec-s`", "wrong conclusion"))
    page = errata_page([a, b], project, errata, papers=("p1", "p2"))
    assert page.count("````{table}") == 1 and ":name: errata-p1" in page
    assert "## The First Paper" in page and "Errata of Kim et al. (2025)." in page
    assert "{cite:t}`p1`, shown in {doc}`01_toy` and {doc}`02_other`." in page
    assert "| Eq. 1 | $x = 2$ | $x = 1$ ({glue:text}`01_toy.ipynb::toy-x:s`) | {eq}`eq-one` | wrong number |" in page
    assert "| Eq. 2 | a | b | {doc}`02_other` | slip with no effect |" in page
    assert "## Second" in page and "{cite:t}`p2`: no erratum is recorded." in page
    assert "p3" not in page  # a paper the page does not list


def test_errata_page_of_the_book_has_a_table_per_paper():
    project = Project.find()
    page = errata_page(book_chapters(project), project)
    papers = [p for p in PAPERS if any(e.paper == p for e in ERRATA)]
    assert page.count("````{table}") == len(papers)
    for paper in papers:
        rows = [e for e in ERRATA if e.paper == paper]
        table = page.split(f":name: errata-{paper}", 1)[1].split("````", 1)[0]
        assert table.count("\n| ") == len(rows) + 1, paper  # the header and one row per erratum


def test_caveats_page_collects_both_headings(tmp_path):
    a = toy_chapter("toy", stem="01_toy")
    b = toy_chapter("other", stem="02_other")
    c = toy_chapter("third", stem="03_third")
    old = chapter_text("Toy", "n = 3") + "\n## Errata and caveats\n\n- Old heading, {glue:text}`toy-n`.\n"
    new = chapter_text("Other", "n = 3") + "\n## Caveats\n\n- New heading.\n\n## Not this\n\nlater\n"
    project = make_project(tmp_path, {"01_toy": (old, a), "02_other": (new, b),
                                      "03_third": (chapter_text("Third", "n = 3"), c)})
    page = caveats_page([a, b, c], project)
    assert "(appendix-caveats)=" in page
    assert "## Toy\n\nFrom {doc}`01_toy`:\n\n- Old heading, {glue:text}`01_toy.ipynb::toy-n:s`." in page
    assert "## Other\n\nFrom {doc}`02_other`:\n\n- New heading." in page and "later" not in page
    assert "## Third\n\nFrom {doc}`03_third`:\n\n*(This chapter has no caveats section.)*" in page
