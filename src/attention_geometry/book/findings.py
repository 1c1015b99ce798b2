"""What a chapter finds, and what the book finds, written from the claims ledger.

A chapter opens with a box, "What this chapter finds": a few sentences, each one
row of its "Paper vs. this book" table in short (where the paper makes the claim
and what it says, the verdict that stands, the measurement and the settings it
was measured at). :func:`findings` writes it from the chapter's claim records,
which :func:`~.claims.show_claims` returns as ``shown.findings``; the chapter
glues it beside its table, and the box at the top of the page shows the glued
value. The preface's section "What the book finds" is written the same way from
the whole ledger, paper by paper (:func:`book_findings`), when the book is staged
(:func:`fill_generated`). Nothing in either is typed: a rerun that moves a verdict
or a number rewrites the sentence.

Which rows: one row of each verdict the chapter has, then the rest; shown with the
paper's own claims before the book's readings and controls, and decisive verdicts
first (refuted, differs, reproduced, reproduced in a stand-in), then the undecided ones; a row not tested, or one whose measurement is not a
number (NaN), is never chosen.
"""

import re

from .._checks import check_int
from ..verdicts import Label
from .ledger import (PAPERS, SETTINGS_DEFAULTS, SETTINGS_PAPER, SETTINGS_PAPER_RUN, ledger_row, paper_tally,
                     short_reason)

__all__ = ["ORDER", "PREFACE_MARKER", "choose_rows", "finding_sentence", "findings", "book_findings",
           "fill_generated"]

#: The verdicts a box may show, in the order it shows them (``not tested`` never).
ORDER = (Label.REFUTED, Label.DIFFERS, Label.REPRODUCED, Label.REPRODUCED_IN_STAND_IN, Label.NOT_DECIDED,
         Label.UNINFORMATIVE)
#: The line of a prose page (the preface) that the staged book replaces with :func:`book_findings`
#: (a MyST comment: a page read without staging shows nothing there).
PREFACE_MARKER = "% generated: what the book finds"

_NAN = re.compile(r"\bnan\b", re.I)
_QUOTES = "“”\""  # a statement that quotes already is not quoted again
#: A statement's last clause that names what it is tested against ("…; tested against the fair control"):
#: one claim tested against two things gives two rows, told apart only by it.
_TESTED = re.compile(r";\s*(tested against [^;]{1,80})$")


def _short(text: str, limit: int) -> str:
    """``text`` cut to its first clause, at most ``limit`` characters (:func:`~.ledger.short_reason`),
    with the parentheses a cut left open closed again."""
    cut = short_reason(text, limit)
    depth = 0
    for ch in re.sub(r"\$[^$]+\$", "", cut):
        depth = max(0, depth + (ch == "(") - (ch == ")"))
    return cut + ")" * depth


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def _settings(row: dict) -> str:
    """Where the measurement that stands was made, from the ledger row's ``settings``."""
    s = row["settings"]
    for prefix, words in ((SETTINGS_PAPER_RUN, "in the stored paper-scale run"),
                          (SETTINGS_PAPER, "at the paper's settings"),
                          (SETTINGS_DEFAULTS, "at the book's settings")):
        if s.startswith(prefix):
            rest = s[len(prefix):].strip()
            return f"{words} ({_short(rest, 90)})" if rest else words
    return f"at {_short(s, 90)}"


def choose_rows(rows: list[dict], n: int = 5) -> list[dict]:
    """At most ``n`` ledger rows to state (see the module's docstring), in the order stated."""
    n = check_int("n", n, 1, 6)
    usable = _ordered(rows, ORDER)
    usable.sort(key=lambda r: r.get("claim_kind", "paper") == "reading")  # stable: ORDER within each kind
    # one row of each verdict first, so that a chapter whose first rows all differ still says what holds
    firsts = list({r["verdict"]: r for r in reversed(usable)}.values())[::-1]
    chosen = (sorted(firsts, key=usable.index)[:n] + [r for r in usable if r not in firsts])[:n]
    return sorted(chosen, key=usable.index)


def finding_sentence(row: dict, *, paper: bool = False, link: str = "") -> str:
    """One ledger row as one sentence (MyST): where the paper makes the claim (``paper``: after
    the paper's name; ``link``: a page the place links to), the claim in short, the verdict,
    the measurement and its settings.

    >>> print(finding_sentence({"paper": "Kim et al. 2025", "where": "Proposition 1", "claim_kind": "paper",
    ...       "statement": "without LayerNorm, there is no recency bias", "verdict": "reproduced",
    ...       "measured": "RP = 0.4999 ± 0.0007", "settings": "book defaults: d = 64, n = 10"}))
    Proposition 1, “without LayerNorm, there is no recency bias”: **reproduced**; RP = 0.4999 ± 0.0007, at the book's settings (d = 64, n = 10).
    """
    where = row["where"] if paper else _capital(row["where"])
    if link and not set("`<>$") & set(where):
        where = f"{{doc}}`{where} <{link}>`"
    if paper:
        where = f"{row['paper']}, {where}"
    if row.get("claim_kind", "paper") == "reading":
        where += " (the book's reading)"
    tested = _TESTED.search(row["statement"])  # what a claim is tested against, kept through the cut
    statement = _short(row["statement"][:tested.start()] if tested else row["statement"], 110)
    if not set(_QUOTES) & set(statement):
        statement = f"“{statement}”"
    statement += "”" * (statement.count("“") - statement.count("”"))  # a quotation the cut left open
    if tested:
        statement += f", {tested.group(1)}"
    sentence = (f"{where}, {statement}: **{row['verdict']}**; {_short(row['measured'], 130)}, "
                f"{_settings(row)}")
    return sentence.rstrip(".") + "."


def findings(records: list[dict], n: int = 5) -> str:
    """The box "What this chapter finds" (MyST): one sentence (:func:`finding_sentence`) per row
    chosen (:func:`choose_rows`) from a chapter's claim records (those of
    :func:`~.claims.show_claims`), as a list, then how many rows the table at the end has."""
    rows = [ledger_row(r) for r in records]
    chosen = choose_rows(rows, n)
    papers = {r["paper"] for r in rows}
    if not chosen:
        return ("No claim of this chapter is decided or measured yet; the table at the end of the chapter "
                "says why for each.")
    lines = [f"- {finding_sentence(r, paper=len(papers) > 1)}" for r in chosen]
    rest = len(rows) - len(chosen)
    tail = (f"The table at the end of the chapter has these and {rest} more "
            f"{'claim' if rest == 1 else 'claims'}." if rest else
            "The table at the end of the chapter gives the reason for each.")
    return "\n".join(lines) + "\n\n" + tail


def _ordered(rows: list[dict], labels: tuple[str, ...]) -> list[dict]:
    """The rows with one of ``labels`` and a measurement that is a number, in :data:`ORDER`."""
    out = [r for r in rows if r["verdict"] in labels and not _NAN.search(r["measured"])]
    return sorted(out, key=lambda r: ORDER.index(r["verdict"]))


def _across_chapters(rows: list[dict]) -> list[dict]:
    """``rows`` taken one chapter at a time (each chapter's first, then each one's second, ...),
    so that the first few name every chapter that tests the paper."""
    seen: dict[str, int] = {}
    rank = []
    for r in rows:
        rank.append(seen.get(r["chapter"], 0))
        seen[r["chapter"]] = rank[-1] + 1
    return [r for _, r in sorted(zip(rank, rows), key=lambda pair: pair[0])]


def _page(row: dict) -> str:
    return row["link"].split(".html")[0]


def book_findings(rows: list[dict] | None, *, holds: int = 3, fails: int = 8) -> str:
    """The preface's "What the book finds" (MyST), from the ledger's rows (:func:`~.ledger.book_ledger`),
    paper by paper in the order of :data:`~.ledger.PAPERS`: how many of its claims hold and do not
    (:func:`~.ledger.paper_tally`), then up to ``holds`` of the claims that hold and up to ``fails``
    of those that do not, each with its measurement, linked to the chapter that tests it."""
    holds, fails = check_int("holds", holds, 0), check_int("fails", fails, 0)
    if rows is None:
        return "*(Written when every chapter has been executed: `make book`.)*"
    if not rows:
        return "No claim is in the ledger."
    out = []
    for paper in dict.fromkeys([*PAPERS.values(), *(r["paper"] for r in rows)]):
        mine = [r for r in rows if r["paper"] == paper]
        if not mine:
            continue
        claims = [r for r in mine if r.get("claim_kind", "paper") != "reading"]
        readings = [r for r in mine if r.get("claim_kind", "paper") == "reading"]
        out += [f"### {paper}", "", " ".join(paper_tally(claims, readings)), ""]
        good = _across_chapters(_ordered(claims, (Label.REPRODUCED, Label.REPRODUCED_IN_STAND_IN)))
        bad = _ordered(claims, (Label.REFUTED, Label.DIFFERS))
        for title, group, limit in (("What holds", good, holds), ("What does not hold", bad, fails)):
            if not group or not limit:
                continue
            more = len(group) - limit
            out += [f"{title}" + (f" ({limit} of {len(group)}):" if more > 0 else ":"), ""]
            out += [f"- {finding_sentence(r, link=_page(r))}" for r in group[:limit]]
            out.append("")
    out.append("Every claim, with the reason for its verdict, is in the claims ledger ({ref}`appendix-claims`).")
    return "\n".join(out).strip() + "\n"


def fill_generated(text: str, rows: list[dict] | None) -> str:
    """A prose page with its :data:`PREFACE_MARKER` line replaced by :func:`book_findings` of ``rows``
    (the page as it is when it has no marker)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == PREFACE_MARKER:
            lines[i] = book_findings(rows)
    return "".join(lines)
