"""The built book against its claims ledger: every verdict of every "Paper vs. this
book" table is a ledger record, no chapter writes a verdict by hand, and chapter
9's cross-references name claims that exist."""

import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

pytestmark = pytest.mark.book


def _ledger(built_book) -> list[dict]:
    return json.loads((built_book / "claims.json").read_text())


def _table_verdicts(page: Path) -> list[str]:
    """The bold verdict words of the page's "Paper vs. this book" table(s)."""
    text = page.read_text()
    section = text[text.find('id="paper-vs-this-book"'):]
    out = []
    for table in re.findall(r"<table.*?</table>", section, re.S):
        if "The paper says" not in table:
            continue
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]:
            cells = re.findall(r"<td>(.*?)</td>", row, re.S)
            bold = re.search(r"<strong>(.*?)</strong>", cells[-1], re.S)
            word = html.unescape(re.sub(r"<[^>]+>", "", bold.group(1))).strip()
            out.append(word.replace("\u2019", "'"))  # Sphinx's smart quotes
    return out


def test_every_table_verdict_is_a_ledger_record(built_book):
    ledger = _ledger(built_book)
    chapters = sorted({r["chapter"] for r in ledger})
    assert len(chapters) >= 8
    seen = 0
    for page in sorted((built_book / "book").glob("0*.html")):
        verdicts = _table_verdicts(page)
        records = [r for r in ledger if r["link"].split("#")[0].endswith(page.name)]
        assert Counter(verdicts) == Counter(r["verdict"] for r in records), page.name
        seen += len(verdicts)
    assert seen == len(ledger) and seen > 50


def test_no_chapter_writes_a_verdict_by_hand():
    sources = sorted(BOOK.glob("0*.md"))
    assert sources
    for source in sources:
        text = source.read_text()
        assert not re.search(r"\bVerdict\(", text), f"{source.name} builds a Verdict by hand"


def test_chapter_9_cross_references_name_claims_in_the_ledger(built_book):
    """Every claim the component table cites (verdicts.COMPONENT_SOURCES; a row measured in chapter 9
    only cites none) is a row of the built ledger."""
    from attention_geometry.verdicts import COMPONENT_SOURCES

    ids = {r["id"] for r in _ledger(built_book)}
    assert any(COMPONENT_SOURCES.values())
    for effect, claims in COMPONENT_SOURCES.items():
        assert set(claims) <= ids, (effect, sorted(set(claims) - ids))


def test_one_claim_one_verdict(built_book):
    """Rows of different chapters that quote the same sentence of a paper carry the same
    verdict, or one of them says how its claim differs (``differs_from``)."""
    from attention_geometry.book.ledger import conflicting_verdicts

    rows = _ledger(built_book)
    assert rows
    pairs = conflicting_verdicts(rows)
    assert not pairs, [(a["id"], a["verdict"], b["id"], b["verdict"]) for a, b in pairs]


def test_the_ledger_has_claim_kinds_and_at_most_six_verdict_labels(built_book):
    from attention_geometry.verdicts import VERDICTS, Label

    rows = _ledger(built_book)
    assert {r["claim_kind"] for r in rows} <= {"paper", "reading"}
    labels = {lab.value for lab in Label} - {"not tested"}
    assert len(labels) <= 6
    assert {r["verdict"] for r in rows} <= set(VERDICTS)  # no label compounded with the source
