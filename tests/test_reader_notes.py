"""No development notes for readers: the built pages say what the book finds, not how it
came to be (no "amended on ... (commit ...)", no "first edition", no claim ids as prose).
Provenance stays as one compact line per stored run."""

import html
import json
import re
from pathlib import Path

import pytest

#: Phrases of the book's own history, which a reader has no use for.
NOTES = ("amended", "earlier version", "first edition", "the issue that asked", "this session")
#: Claim ids that cannot be read as words: a hyphen and a digit, or a chapter's or paper's prefix.
_ID_PREFIXES = ("ua-", "sel-", "brody-", "rc-", "le-", "rec-", "jac-", "syn-", "chowdhury-", "kim-", "wu-")


def page_text(raw: str) -> str:
    """What a reader reads on a page: the text without tags, scripts, styles and code blocks."""
    raw = re.sub(r"<(script|style|pre)\b.*?</\1>", " ", raw, flags=re.S | re.I)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def prose_ids(ids) -> list[str]:
    """The claim ids a scan looks for: those no English sentence uses (``fig2-plotted``, not ``bound``)."""
    return [i for i in ids if "-" in i and (re.search(r"\d", i) or i.startswith(_ID_PREFIXES))]


def notes_in(text: str, ids=()) -> list[str]:
    """The development notes and claim ids in a page's text, each with a little context."""
    found = []
    for phrase in NOTES:
        found += [f"{phrase!r}: …{text[max(0, m.start() - 60):m.end() + 40]}…"
                  for m in re.finditer(rf"\b{re.escape(phrase)}", text, re.I)]
    for cid in prose_ids(ids):
        found += [f"claim id {cid!r}: …{text[max(0, m.start() - 60):m.end() + 20]}…"
                  for m in re.finditer(rf"(?<![\w-]){re.escape(cid)}(?![\w-])", text)]
    return found


def test_the_scan_finds_notes_and_ids_in_prose_not_in_code():
    page = ("<p>Amended 2026-12-02 (commit 3dfb03d387): the rows gained a field.</p>"
            "<p>As the chapter's first edition transcribed it; see the row fig2-plotted.</p>"
            "<div class='highlight'><pre>claims.add(\"fig2-plotted\", ...)  # amended</pre></div>"
            "<p>The peak-to-trough ratio and the bound hold.</p>")
    ids = ["fig2-plotted", "peak-to-trough", "bound", "ua-uniform-query"]
    assert prose_ids(ids) == ["fig2-plotted", "ua-uniform-query"]
    found = notes_in(page_text(page), ids)
    assert len(found) == 3, found
    assert found[0].startswith("'amended'") and found[1].startswith("'first edition'")
    assert found[2].startswith("claim id 'fig2-plotted'")
    assert notes_in(page_text("<p>Built 2026-12-03 from commit abc. The bound holds.</p>"), ids) == []


@pytest.mark.book
def test_no_built_page_holds_development_notes_or_claim_ids(built_book):
    ids = [r["id"] for r in json.loads((built_book / "claims.json").read_text())]
    pages = [p for p in sorted(built_book.rglob("*.html")) if "_static" not in p.parts]
    assert len(pages) > 10
    bad = {str(p.relative_to(built_book)): found for p in pages
           if (found := notes_in(page_text(p.read_text(encoding="utf-8")), ids))}
    assert not bad, "\n".join(f"{page}: {note}" for page, notes in bad.items() for note in notes)


def test_the_book_tooling_writes_no_development_notes():
    """The code that writes pages (the chapters' glued text, the generated appendices) states
    none of these phrases either."""
    root = Path(__file__).resolve().parents[1]
    sources = [*sorted((root / "book").glob("*.md")),
               *sorted(p for p in (root / "src" / "attention_geometry" / "book").glob("*.py") if p.name != "paper.py")]
    bad = [f"{p.relative_to(root)}: {phrase!r}" for p in sources for phrase in NOTES
           if re.search(rf"\b{re.escape(phrase)}", p.read_text(), re.I)]
    assert not bad, bad
