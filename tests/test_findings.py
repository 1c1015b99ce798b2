"""The box "What this chapter finds" and the preface's "What the book finds": written from the
claim records, decisive verdicts first, never a row not tested or a NaN, never a claim id."""

import html
import re

import pytest

from attention_geometry.book.findings import (PREFACE_MARKER, book_findings, choose_rows, fill_generated,
                                              finding_sentence, findings)
from attention_geometry.book.ledger import ledger_row


def record(id, label, *, kind="paper", measured="0.5 ± 0.1", paper="kim2025recency", stored=None,
           at_paper=False, statement=None):
    """A claim record as :func:`~attention_geometry.book.claims.show_claims` glues it."""
    return {"id": id, "paper": paper, "where": f"Section {id[-1]}", "source": "full text", "claim_kind": kind,
            "statement": statement or f"the statement of claim {id[-1]}", "measured": measured,
            "settings": "d = 64, n = 10", "at_paper_settings": at_paper,
            "verdict": {"label": label, "reason": "r"}, "final_verdict": {"label": label, "reason": "why"},
            "at_paper_settings_record": stored, "paper_run_verdict": stored is not None}


def bullets(box: str) -> list[str]:
    return [line[2:] for line in box.splitlines() if line.startswith("- ")]


MIXED = [record("row-1", "not decided"), record("row-2", "reproduced"), record("row-3", "not tested"),
         record("row-4", "refuted", kind="reading"), record("row-5", "differs"), record("row-6", "refuted"),
         record("row-7", "reproduced", measured="nan ± nan"), record("row-8", "reproduced in a stand-in"),
         record("row-9", "uninformative")]


def test_the_box_states_three_to_six_rows_decisive_first_the_papers_before_readings():
    box = findings(MIXED)
    lines = bullets(box)
    assert len(lines) == 5
    assert [re.search(r"\*\*(.*?)\*\*", s).group(1) for s in lines] == [
        "refuted", "differs", "reproduced", "reproduced in a stand-in", "not decided"]
    assert all(s.endswith(".") and s.count("**") == 2 for s in lines)
    six = bullets(findings(MIXED, n=6))
    assert len(six) == 6 and "uninformative" in six[-1] and "(the book's reading)" not in six[-1]
    assert "(the book's reading)" in bullets(findings([r for r in MIXED if r["id"] != "row-9"], n=6))[-1]
    assert "not tested" not in box and not re.search(r"\bnan\b", box, re.I)
    assert not re.search(r"row-\d", box)  # no claim id as prose
    assert "these and 4 more claims" in box
    with pytest.raises(ValueError, match="n"):
        findings(MIXED, n=7)


def test_a_sentence_gives_the_claim_the_verdict_the_number_and_the_settings():
    stored = {"measured": "0.42 ± 0.01", "settings": "d = 1024, 10,000,000 sequences"}
    rows = [ledger_row(r) for r in (record("a-1", "refuted", stored=stored), record("a-2", "reproduced"),
                                    record("a-3", "reproduced", at_paper=True))]
    first, second, third = (finding_sentence(r) for r in rows)
    assert first == ("Section 1, “the statement of claim 1”: **refuted**; 0.42 ± 0.01, in the stored paper-scale "
                     "run (d = 1024, 10,000,000 sequences).")
    assert second.endswith("**reproduced**; 0.5 ± 0.1, at the book's settings (d = 64, n = 10).")
    assert third.endswith("at the paper's settings (d = 64, n = 10).")
    assert finding_sentence(rows[0], paper=True).startswith("Kim et al. 2025, Section 1, ")
    assert finding_sentence({**rows[1], "where": "abstract"}).startswith("Abstract, “the statement")
    assert finding_sentence({**rows[1], "where": "abstract"}, paper=True).startswith("Kim et al. 2025, abstract, ")


def test_a_long_claim_is_cut_without_breaking_its_math_quotes_or_parentheses():
    long = ("the profile “(M^H)_{L,j} decays” (in every layer $\\sum_{m=1}^{L} (-1)^{m} m^{-H}$ and "
            "at every position of the sequence, for every residual weight and depth) " * 2)
    row = ledger_row(record("b-1", "reproduced", statement=long, measured="x = 1.5; y = 2 " * 20))
    sentence = finding_sentence(row)
    claim = sentence.split(": **")[0]
    assert "…" in claim and len(claim) < 160
    assert claim.count("$") % 2 == 0 and claim.count("(") == claim.count(")")
    assert claim.count("“") == claim.count("”")
    assert "; 1.5" not in sentence and "x = 1.5, at the book's settings" in sentence  # the first clause


def test_what_a_claim_is_tested_against_survives_the_cut():
    quote = "“" + "With projection, the model converges faster compared to the model without projection " * 2 + "”"
    rows = [ledger_row(record(f"c-{i}", "differs", kind="reading",
                              statement=f"{quote} (caption of Fig. 2a); tested against {what}"))
            for i, what in ((1, "the original's variant"), (2, "the fair control (not in the paper)"))]
    first, second = (finding_sentence(r).split(": **")[0] for r in rows)
    assert first.endswith("…”, tested against the original's variant")
    assert second.endswith("…”, tested against the fair control (not in the paper)") and first != second
    plain = finding_sentence(ledger_row(record("c-3", "differs", statement="a claim; its second clause")))
    assert "second clause" not in plain and "tested against" not in plain  # only that clause is kept


def test_few_or_no_rows():
    assert findings([]).startswith("No claim of this chapter is decided")
    assert findings([record("c-1", "not tested")]).startswith("No claim")
    one = findings([record("c-1", "reproduced")])
    assert len(bullets(one)) == 1 and "gives the reason for each" in one
    assert len(bullets(findings([record("c-1", "reproduced"), record("c-2", "not decided")]))) == 2
    assert choose_rows([], 3) == []


def _rows():
    rows = [ledger_row(r, "ch", "07_toy") for r in MIXED]
    rows += [ledger_row(record("w-1", "refuted", paper="wu2024masks", measured="slope 1.3 ± 0.02"), "other", "04_toy")]
    return rows


def test_the_book_finds_paper_by_paper_what_holds_and_what_does_not():
    text = book_findings(_rows())
    kim, wu = text.index("### Kim et al. 2025"), text.index("### Wu et al. 2024")
    assert wu < kim  # the order of the papers in the ledger
    kim_part = text[kim:]
    assert "What holds:" in kim_part and "What does not hold:" in kim_part
    assert kim_part.index("What holds") < kim_part.index("**reproduced**") < kim_part.index("What does not hold")
    assert "- {doc}`Section 6 <07_toy>`" in kim_part and "slope 1.3 ± 0.02" in text[wu:kim]
    assert "Of these, " in kim_part and "not tested" not in kim_part.split("\n", 3)[3]
    assert not re.search(r"\bnan\b", text) and not re.search(r"row-\d|w-1", text)
    assert "{ref}`appendix-claims`" in text
    assert "What holds (1 of 2):" in book_findings(_rows(), holds=1)
    assert book_findings(None).startswith("*(Written when every chapter")


def test_the_preface_marker_is_replaced_by_the_section():
    page = f"# Preface\n\n## What the book finds\n\n{PREFACE_MARKER}\n\n## Next\n"
    filled = fill_generated(page, _rows())
    assert PREFACE_MARKER not in filled and "### Kim et al. 2025" in filled and filled.endswith("\n\n## Next\n")
    assert fill_generated("# Other\n", _rows()) == "# Other\n"


# ---- the built book


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.mark.book
def test_every_chapter_opens_with_what_it_finds(built_book):
    pages = sorted((built_book / "book").glob("0*.html"))
    assert len(pages) >= 9
    for page in pages:
        text = page.read_text()
        box = re.search(r'<div class="[^"]*ag-findings[^"]*">(.*?)</div>', text, re.S)
        assert box, f"{page.name}: no box 'What this chapter finds'"
        assert "What this chapter finds" in box.group(1)
        assert text.index("ag-findings") < text.index('id="paper-vs-this-book"'), page.name
        items = [_text(li) for li in re.findall(r"<li>(.*?)</li>", box.group(1), re.S)]
        assert 3 <= len(items) <= 6, (page.name, items)
        for item in items:
            assert re.search(r"\b(refuted|differs|reproduced|not decided|uninformative)\b", item), item
            assert not re.search(r"\bnan\b|not tested", item, re.I), item


@pytest.mark.book
def test_the_preface_says_what_the_book_finds(built_book):
    html = (built_book / "book" / "preface.html").read_text()
    text = _text(html)
    start = html.index('<section id="what-the-book-finds">')  # the section, not its entry in the page's contents
    section = _text(html[start:html.index('<section id="how-to-read-this-book">', start)])
    for paper in ("Brody et al. 2023", "Wu et al. 2024", "Kim et al. 2025", "Chowdhury 2026"):
        assert paper in section
    assert "What does not hold" in section and "What holds" in section
    assert "generated: what the book finds" not in text


def test_the_docstring_examples_run():
    import doctest

    from attention_geometry.book import findings as module

    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0


def test_a_chapter_whose_first_rows_all_differ_still_says_what_holds():
    rows = [record(f"d-{i}", "differs") for i in range(6)] + [record("r-1", "reproduced"),
                                                               record("u-1", "not decided")]
    labels = [re.search(r"\*\*(.*?)\*\*", s).group(1) for s in bullets(findings(rows))]
    assert labels == ["differs", "differs", "differs", "reproduced", "not decided"]
