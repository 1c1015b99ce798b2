"""The claims ledger: every claim of the four papers, in one place, built with the book.

Each chapter's "Paper vs. this book" table is generated from its claims
(:func:`attention_geometry.book.claims.show_claims`), which also glues the
records as a structured output (:data:`~.notebooks.CLAIMS_KEY`, stored as JSON).
This module collects them from the executed chapters, in the order of the
book, into

* ``claims.json`` and ``claims.csv`` beside the HTML book (:func:`write_ledger_files`);
* the appendix page "The claims ledger" (:func:`ledger_page`): the ledger paper
  by paper, counts and a few computed sentences on what holds and what does not
  (:func:`paper_scoreboard`), then one sortable, filterable table (plain
  JavaScript, no network) whose verdict cell holds the label and a short reason
  (:func:`short_reason`; the full reason on hover).

A record holds: ``id``, ``paper`` (the bibliography key), ``where`` in the
paper, ``statement`` (as the source states it), ``source`` (its kind),
``claim_kind`` (``paper``: the paper's claim; ``reading``: the book's reading
or a control), ``differs_from`` (how the claim differs from another row's
quoting the same sentence; :func:`conflicting_verdicts` finds rows that
quote one sentence with two verdicts and say nothing of the kind),
``settings`` (what we measured at: the defaults or the stored paper-scale
run), ``measured`` (with its uncertainty), ``verdict`` (the label of the one that
stands: one of :data:`~attention_geometry.verdicts.VERDICTS`, whatever the source),
``reason`` and the chapter section that shows it.
No record is typed by hand: the ledger has no input other than the chapters.
"""

import csv
import html
import io
import json
import re
from pathlib import Path
from typing import Iterable

from .._checks import check_int
from ..verdicts import VERDICTS, Label
from .notebooks import CLAIMS_KEY, glued_data
from .project import Project
from .tables import markdown_table
from .toc import book_chapters

__all__ = ["LEDGER_FIELDS", "PAPERS", "book_ledger", "ledger_row", "executed_values", "ledger_untested", "ledger_verdicts",
           "chapter_claims", "collect_ledger", "ledger_page", "paper_scoreboard", "paper_tally", "conflicting_verdicts", "quoted_fragments",
           "quote_the_same", "check_one_verdict", "ConflictingVerdicts", "MIN_QUOTE_WORDS",
           "normalised_statement", "reason_gist", "short_reason", "write_ledger_files"]

#: Bibliography key -> how the ledger names the paper.
PAPERS = {
    "brody2023expressivity": "Brody et al. 2023",
    "wu2024masks": "Wu et al. 2024",
    "kim2025recency": "Kim et al. 2025",
    "chowdhury2026lost": "Chowdhury 2026",
}

LEDGER_FIELDS = ("id", "paper", "where", "source", "claim_kind", "statement", "settings", "measured", "verdict",
                 "reason", "differs_from", "chapter", "link")


def chapter_claims(notebook: dict | Path) -> list[dict]:
    """The claim records glued by one executed notebook (``[]`` if it has none).

    Raises ``ValueError`` for records that are not a structured output (a notebook
    executed before they were one glued them as the text of a JSON string)."""
    records = glued_data(notebook).get(CLAIMS_KEY, [])
    if not isinstance(records, list):
        raise ValueError(f"{notebook if not isinstance(notebook, dict) else 'the notebook'}: its claim records "
                         f"({CLAIMS_KEY!r}) are glued as {type(records).__name__}, not as the structured output "
                         "of show_claims; execute the chapter again")
    return records


def _anchor(section: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", section.lower()).strip("-") if section else "paper-vs-this-book"


#: How a ledger row's ``settings`` begins, by the run behind its verdict.
SETTINGS_PAPER_RUN, SETTINGS_PAPER, SETTINGS_DEFAULTS = "stored paper-scale run: ", "the paper's settings: ", "book defaults: "


def ledger_row(record: dict, chapter: str = "", stem: str = "") -> dict:
    """One ledger row (:data:`LEDGER_FIELDS`) of a claim record glued by a chapter
    (:func:`~.claims.show_claims`), which is ``chapter`` of the book at page ``stem``. The
    measurement and settings are those of the run whose verdict stands: the stored
    paper-scale run's when its verdict stands (``paper_run_verdict``; records glued before
    that field existed: whenever the run stored the claim)."""
    r = record
    final = r.get("final_verdict") or r["verdict"]
    stored = r.get("at_paper_settings_record")
    if not r.get("paper_run_verdict", True):
        stored = None
    return {
        "id": r["id"],
        "paper": PAPERS.get(r["paper"], r["paper"]),
        "where": r["where"],
        "source": r["source"],
        "claim_kind": r.get("claim_kind", "paper"),
        "statement": r["statement"],
        "settings": (SETTINGS_PAPER_RUN + stored["settings"] if stored
                     else (SETTINGS_PAPER if r.get("at_paper_settings") else SETTINGS_DEFAULTS) + r["settings"]),
        "measured": stored["measured"] if stored else r["measured"],
        "verdict": final["label"],  # a label, never words compounded with the source
        "reason": final["reason"],
        "differs_from": r.get("differs_from", ""),
        "chapter": chapter,
        "link": f"{stem}.html#{_anchor(r.get('section', ''))}",
    }


def collect_ledger(executed: Iterable[tuple[str, str, Path]]) -> list[dict]:
    """Ledger rows (:func:`ledger_row`) from ``(chapter name, html page stem, executed notebook)``
    triples, in order.

    Raises ``ValueError`` if two chapters use one claim id.
    """
    rows, seen = [], {}
    for chapter, stem, notebook in executed:
        for r in chapter_claims(notebook):
            if r["id"] in seen:
                raise ValueError(f"claim id {r['id']!r} is used by chapters {seen[r['id']]!r} and {chapter!r}")
            seen[r["id"]] = chapter
            rows.append(ledger_row(r, chapter, stem))
    return rows


def normalised_statement(text: str) -> str:
    """A statement as compared across chapters: MyST roles and math delimiters, quotes, case,
    punctuation and runs of white space removed (``“Spearman ρ=0.99”`` and ``spearman ρ = 0.99``
    are one sentence)."""
    text = re.sub(r"\{\w+(:\w+)?\}`([^`]*)`", r"\2", text)
    text = re.sub(r"[$“”\"'‘’`*_]", "", text.lower())
    text = re.sub(r"[^\w\s=<>+-]", " ", text)
    text = re.sub(r"\s*([=<>])\s*", r"\1", text)
    return " ".join(text.split())


#: The fewest words a quoted fragment needs to count as a sentence of the paper when matched
#: inside another row's statement (shorter fragments, "ρ=0.99", match too much).
MIN_QUOTE_WORDS = 4


def quoted_fragments(statement: str) -> list[str]:
    """The fragments of ``statement`` that quote the paper (text in “…” or "…"), each
    :func:`normalised_statement`, those of at least :data:`MIN_QUOTE_WORDS` words; the whole
    statement when it quotes nothing that long."""
    found = re.findall(r"“([^”]+)”|\"([^\"]+)\"", statement)
    fragments = [normalised_statement(a or b) for a, b in found]
    fragments = [f for f in fragments if len(f.split()) >= MIN_QUOTE_WORDS]
    return fragments or [normalised_statement(statement)]


def quote_the_same(first: str, second: str) -> bool:
    """Whether two statements quote the same sentence: equal once normalised, or a quoted
    fragment of one (:func:`quoted_fragments`) contained in the other, so that a row quoting
    half a sentence meets the row quoting all of it."""
    a, b = normalised_statement(first), normalised_statement(second)
    if a == b:
        return True
    return (any(f in b for f in quoted_fragments(first) if len(f.split()) >= MIN_QUOTE_WORDS)
            or any(f in a for f in quoted_fragments(second) if len(f.split()) >= MIN_QUOTE_WORDS))


def conflicting_verdicts(rows: list[dict]) -> list[tuple[dict, dict]]:
    """Pairs of ledger rows from *different* chapters that quote the same sentence of the same
    paper (:func:`quote_the_same`) with different verdicts, neither saying how its claim
    differs from the other's (a non-empty ``differs_from``). One claim, one verdict: the build
    fails on any pair returned (:func:`check_one_verdict`)."""
    pairs = []
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if (a["paper"] == b["paper"] and a["chapter"] != b["chapter"] and a["verdict"] != b["verdict"]
                    and not (a.get("differs_from") or b.get("differs_from"))
                    and quote_the_same(a["statement"], b["statement"])):
                pairs.append((a, b))
    return pairs


class ConflictingVerdicts(ValueError):
    """Two chapters give one sentence of a paper two verdicts without saying how they differ."""


def check_one_verdict(rows: list[dict]) -> None:
    """Raise :class:`ConflictingVerdicts` naming every pair :func:`conflicting_verdicts` finds."""
    pairs = conflicting_verdicts(rows)
    if pairs:
        raise ConflictingVerdicts("one claim, two verdicts (give the rows one verdict, or say how they differ "
                                  "in differs_from): " + "; ".join(
                                      f"{a['id']} ({a['chapter']}: {a['verdict']}) and {b['id']} "
                                      f"({b['chapter']}: {b['verdict']})" for a, b in pairs))


def write_ledger_files(rows: list[dict], folder: Path) -> tuple[Path, Path]:
    """``claims.json`` and ``claims.csv`` in ``folder`` (the built HTML book's root)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    js, cs = folder / "claims.json", folder / "claims.csv"
    js.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=LEDGER_FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    cs.write_text(buf.getvalue())
    return js, cs


_MATH = re.compile(r"\$[^$]+\$")
#: What a cut never splits: ``$...$`` math, a MyST role with its text, inline code.
_ATOMS = re.compile(r"\$[^$]+\$|\{[\w:-]+\}`[^`]*`|`[^`]*`")


def short_reason(reason: str, limit: int = 160) -> str:
    """The reason's first clause or sentence, at most ``limit`` characters: what the ledger's
    verdict cell shows (the full reason is in its tooltip and in ``claims.json``/``claims.csv``).

    A clause ends at a semicolon, a sentence at ``.``, ``!`` or ``?`` before a capital, neither
    inside parentheses, brackets, ``$...$`` math, a MyST role or inline code. A clause longer
    than ``limit`` is cut at the last space that fits, outside those, and ends with an ellipsis;
    a shorter one is kept whole.

    >>> short_reason("at the paper's settings: 0.12 ± 0.01; claimed 0.5")
    "at the paper's settings: 0.12 ± 0.01"
    >>> short_reason("the interval [0.1; 0.3] holds both. It would take 4x the data.")
    'the interval [0.1; 0.3] holds both.'
    >>> short_reason("one two three four", limit=12)
    'one two…'
    """
    limit = check_int("limit", limit, 2)
    text = " ".join(reason.split())
    maths = [m.span() for m in _ATOMS.finditer(text)]

    def in_math(i: int) -> bool:
        return any(a <= i < b for a, b in maths)

    end, depth = len(text), 0
    for i, ch in enumerate(text):
        if in_math(i):
            continue
        depth += (ch in "([") - (ch in ")]")
        if depth > 0:
            continue
        if ch == ";":
            end = i
            break
        if ch in ".!?" and text[i + 1:i + 2] == " " and text[i + 2:i + 3].isupper():
            end = i + 1
            break
    head = text[:end].rstrip()
    if len(head) <= limit:
        return head
    spaces = [j for j in range(1, limit) if head[j] == " " and not in_math(j)]
    cut = spaces[-1] if spaces else limit - 1
    return head[:cut].rstrip(" ,;:(-–—=±") + "…"


#: The openings of a reason that say where it was measured, not what it found; the ledger's
#: settings column says where, so the verdict cell skips them (:func:`reason_gist`).
_SETTINGS_OPENING = re.compile(r"(at the paper's settings|in the paper-scale run|with .* in place of )")


def reason_gist(reason: str, limit: int = 160) -> str:
    """What a reason found, in its first clause (:func:`short_reason`), after the leading clauses
    that only say where it was measured ("in the paper-scale run, with ...:", "at the paper's
    settings:", "with X in place of Y:"): each ends at the first colon outside brackets and math.
    A reason that is nothing but such clauses is shortened as it stands.

    >>> reason_gist("in the paper-scale run, with d = 16 (the later one): RP - 1/2 = 0.14 ± 3e-05; claimed positive")
    'RP - 1/2 = 0.14 ± 3e-05'
    >>> reason_gist("at the book's smaller settings only: 0.5 ± 0.1")
    "at the book's smaller settings only: 0.5 ± 0.1"
    """
    text = " ".join(reason.split())
    while _SETTINGS_OPENING.match(text):
        maths = [m.span() for m in _ATOMS.finditer(text)]
        depth, colon = 0, None
        for i, ch in enumerate(text):
            if any(a <= i < b for a, b in maths):
                continue
            depth += (ch in "([") - (ch in ")]")
            if depth == 0 and ch == ":" and text[i + 1:i + 2] == " ":
                colon = i
                break
        if colon is None or not text[colon + 2:].strip():
            break
        text = text[colon + 2:]
    return short_reason(text, limit)


def _math(text: str) -> str:
    """HTML-escape, with ``$...$`` turned into ``\\(...\\)`` for MathJax."""
    parts = re.split(r"(\$[^$]+\$)", text)
    out = []
    for p in parts:
        if len(p) > 1 and p.startswith("$") and p.endswith("$"):
            out.append("\\(" + html.escape(p[1:-1], quote=False) + "\\)")
        else:
            out.append(html.escape(re.sub(r"\{\w+(:\w+)?\}`([^`]*)`", r"\2", p), quote=False))
    return "".join(out)


def _plain(text: str) -> str:
    """Text for an HTML attribute (a tooltip): MyST roles reduced to their text, quotes escaped."""
    return html.escape(re.sub(r"\{\w+(:\w+)?\}`([^`]*)`", r"\2", " ".join(text.split())), quote=True)


def _counts(rows: list[dict], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r[key]] = out.get(r[key], 0) + 1
    return dict(sorted(out.items()))


def _n(n: int, one: str, many: str | None = None) -> str:
    """``1 claim``, ``2 claims``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _outcomes(by: dict[str, int], tested: int) -> str:
    """What became of a paper's tested claims, one clause per label that occurs (``it`` when
    there is one claim)."""
    def subject(n: int) -> str:
        return "it" if tested == 1 else str(n)

    def be(n: int) -> str:
        return "is" if n == 1 else "are"

    clauses = []
    stand_in = by.get(Label.REPRODUCED_IN_STAND_IN, 0)
    agree = by.get(Label.REPRODUCED, 0) + stand_in
    if agree:
        clauses.append(f"{subject(agree)} {be(agree)} reproduced" + (
            " in a stand-in model" if stand_in == agree
            else f" ({stand_in} of them in a stand-in model)" if stand_in else ""))
    if n := by.get(Label.DIFFERS, 0):
        clauses.append(f"{subject(n)} {'differs' if n == 1 else 'differ'} from the measurement")
    for label in (Label.REFUTED, Label.NOT_DECIDED, Label.UNINFORMATIVE):
        if n := by.get(label, 0):
            clauses.append(f"{subject(n)} {be(n)} {label}")
    if tested == 1:
        return clauses[0][0].upper() + clauses[0][1:] + "."
    return "Of these, " + _and(clauses) + "."


def paper_tally(claims: list[dict], readings: list[dict]) -> list[str]:
    """Two or three sentences on one paper, computed from its rows: how many of its claims
    are tested, what became of them, the book's own readings of the paper apart."""
    by = _counts(claims, "verdict")
    untested = by.get(Label.NOT_TESTED, 0)
    tested = len(claims) - untested
    out = []
    if not claims:
        out.append("No claim of the paper itself is in the ledger.")
    elif not tested:
        out.append("Its one claim in the ledger is not tested here." if untested == 1
                   else f"None of its {untested} claims in the ledger is tested here.")
    else:
        out.append(f"{_n(tested, 'claim')} of the paper {'is' if tested == 1 else 'are'} tested here"
                   + (f" and {untested} more {'is' if untested == 1 else 'are'} not." if untested else "."))
        out.append(_outcomes(by, tested))
    if readings:
        tally = ", ".join(f"{n} {label}" for label, n in _counts(readings, "verdict").items())
        counted = _n(len(readings), "reading or control", "readings and controls")
        out.append(f"Counted apart from the paper's claims: {counted} of the book's own ({tally}).")
    return out


def _paper_sentences(claims: list[dict], readings: list[dict]) -> str:
    """:func:`paper_tally` (MyST); then the claims that do not hold, listed by where the paper
    makes them, each linked to its row (its statement on hover)."""
    out = paper_tally(claims, readings)
    failing = [r for r in claims if r["verdict"] in (Label.DIFFERS, Label.REFUTED)]
    if failing:
        out.append("The claim that does not hold:" if len(failing) == 1
                   else f"The {len(failing)} claims that do not hold:")
    text = " ".join(out)
    if failing:
        text += "\n\n" + "\n".join(f'- <a href="#claim-{html.escape(r["id"])}" title="{_plain(r["statement"])}">'
                                    f'{r["where"]}</a> ({r["verdict"]})' for r in failing)
    return text


def paper_scoreboard(rows: list[dict]) -> str:
    """The ledger paper by paper (MyST Markdown): a table of counts by verdict and by kind of
    claim (the paper's own; the book's readings and controls, counted apart, so that a reading
    refuted is not a refutation of the paper), then a few sentences per paper, in the order of
    :data:`PAPERS`, computed from the rows: what holds and what does not, with links to the
    rows. Raises ``ValueError`` for a verdict that is not one of
    :data:`~attention_geometry.verdicts.VERDICTS`."""
    for r in rows:
        if r["verdict"] not in VERDICTS:
            raise ValueError(f"claim {r['id']!r}: verdict {r['verdict']!r} is not one of the labels "
                             f"({', '.join(VERDICTS)})")
    if not rows:
        return "No claim is in the ledger."
    order = list(dict.fromkeys([*PAPERS.values(), *(r["paper"] for r in rows)]))
    kinds = {"paper": "the paper's claims", "reading": "the book's readings and controls"}
    table, text = [], []
    for paper in order:
        mine = [r for r in rows if r["paper"] == paper]
        claims = [r for r in mine if r.get("claim_kind", "paper") != "reading"]
        readings = [r for r in mine if r.get("claim_kind", "paper") == "reading"]
        for kind, group in (("paper", claims), ("reading", readings)):
            if group:
                by = _counts(group, "verdict")
                table.append((paper, kinds[kind], *(by.get(v, 0) for v in VERDICTS), len(group)))
        text.append(f"**{paper}.** " + (_paper_sentences(claims, readings) if mine
                                        else "No claim of this paper is in the ledger."))
    n_readings = sum(r.get("claim_kind", "paper") == "reading" for r in rows)
    counted = _n(n_readings, "reading or control", "readings and controls")
    head = f"{_n(len(rows), 'claim')} in the ledger" + (
        f": {len(rows) - n_readings} of the papers' own and {counted} of the book's, counted apart "
        "(a reading that fails is not a failure of the paper)." if n_readings else ".")
    return "\n\n".join([head, markdown_table(("Paper", "Kind", *VERDICTS, "all"), table), *text])


_SCRIPT = """
<script>
(function () {
  const table = document.getElementById("ag-ledger");
  if (!table) return;
  const body = table.tBodies[0];
  const paper = document.getElementById("ag-ledger-paper");
  const verdict = document.getElementById("ag-ledger-verdict");
  const shown = document.getElementById("ag-ledger-shown");
  function filter() {
    let n = 0;
    for (const row of body.rows) {
      const ok = (!paper.value || row.dataset.paper === paper.value) &&
                 (!verdict.value || row.dataset.verdict === verdict.value);
      row.style.display = ok ? "" : "none";
      n += ok ? 1 : 0;
    }
    shown.textContent = n;
  }
  paper.addEventListener("change", filter);
  verdict.addEventListener("change", filter);
  table.querySelectorAll("th").forEach(function (th, col) {
    th.style.cursor = "pointer";
    th.title = "sort";
    th.addEventListener("click", function () {
      const up = th.dataset.sort !== "up";
      table.querySelectorAll("th").forEach(function (h) { delete h.dataset.sort; });
      th.dataset.sort = up ? "up" : "down";
      const rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        const x = a.cells[col].textContent.trim(), y = b.cells[col].textContent.trim();
        return up ? x.localeCompare(y) : y.localeCompare(x);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  filter();
})();
</script>
"""


def ledger_page(rows: list[dict]) -> str:
    """The appendix page (MyST with raw HTML): the ledger paper by paper
    (:func:`paper_scoreboard`), then every claim in one table with filters."""
    papers, verdicts = _counts(rows, "paper"), _counts(rows, "verdict")
    lines = [
        "(appendix-claims)=",
        "# Appendix: the claims ledger",
        "",
        "Every claim of the four papers that a chapter tests, in one table, generated when the",
        "book is built from the chapters' own verdict tables: no row is typed by hand. Each row",
        "names where the paper makes the claim and what kind of source states it (the paper's",
        "full text, its abstract, a figure caption, the authors' repository, or the AI-written",
        "summary that stands in for a paper whose text is not here), the settings at which the",
        "book tested it, the measurement with its uncertainty and the verdict that stands, with",
        "the first clause of its reason (the whole reason on hover). The same records, whole, are in",
        "`claims.json` and `claims.csv` at the top of the built book (links below the table of every",
        "claim). In that table, click a column heading to sort; choose a paper or a verdict to filter.",
        "",
        "## Paper by paper",
        "",
        paper_scoreboard(rows),
        "",
        "## Every claim",
        "",
        "```{raw} html",
        '<div class="mathjax_process ag-ledger">',
        '<p><label>Paper <select id="ag-ledger-paper"><option value="">all</option>'
        + "".join(f'<option value="{html.escape(p)}">{html.escape(p)} ({n})</option>' for p, n in papers.items())
        + '</select></label> <label>Verdict <select id="ag-ledger-verdict"><option value="">all</option>'
        + "".join(f'<option value="{html.escape(v)}">{html.escape(v)} ({n})</option>' for v, n in verdicts.items())
        + '</select></label> <span id="ag-ledger-shown"></span> shown</p>',
        '<table id="ag-ledger" class="table"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in ("paper", "where", "source", "claim", "settings", "measured",
                                           "verdict", "chapter"))
        + "</tr></thead><tbody>",
    ]
    for r in rows:
        lines.append(
            f'<tr data-paper="{html.escape(r["paper"])}" data-verdict="{html.escape(r["verdict"])}" '
            f'id="claim-{html.escape(r["id"])}">'
            + "".join(f"<td>{cell}</td>" for cell in (
                html.escape(r["paper"]), _math(r["where"]), html.escape(r["source"]), _math(r["statement"]),
                _math(r["settings"]), _math(r["measured"]),
                f'<strong>{html.escape(r["verdict"])}</strong><br><small title="{_plain(r["reason"])}">'
                f'{_math(reason_gist(r["reason"]))}</small>',
                f'<a href="{html.escape(r["link"])}">{html.escape(r["chapter"])}</a>'))
            + "</tr>")
    lines += ["</tbody></table>",
              '<p>Download: <a href="../claims.json">claims.json</a>, <a href="../claims.csv">claims.csv</a></p>',
              "</div>", _SCRIPT.strip(), "```", ""]
    return "\n".join(lines)


def book_ledger(exclude: tuple[str, ...] = (), project: Project | None = None) -> list[dict] | None:
    """The ledger of the book's executed chapters (``_build/executed``), in reading order,
    or ``None`` if some chapter has not been executed yet. ``exclude``: chapter names left out
    (a chapter reading the ledger leaves itself out, and declares the others in its
    registry entry's ``depends_on``, so that it executes after them)."""
    project = project or Project.find()
    found = []
    for chapter in book_chapters(project):
        if chapter.name in exclude:
            continue
        notebook = project.executed / f"{chapter.stem}.ipynb"
        if not notebook.exists():
            return None
        found.append((chapter.name, chapter.stem, notebook))
    return collect_ledger(found)


def executed_values(chapter_name: str, project: Project | None = None) -> dict | None:
    """The glued values (numbers as numbers) of one executed chapter of the book
    (``_build/executed``), or ``None`` if it has not been executed yet. A chapter that reads
    another's values declares it in its registry entry's ``depends_on``."""
    project = project or Project.find()
    for chapter in book_chapters(project):
        if chapter.name == chapter_name:
            notebook = project.executed / f"{chapter.stem}.ipynb"
            return glued_data(notebook) if notebook.exists() else None
    raise ValueError(f"chapter_name = {chapter_name!r}: not a chapter of the book's toc")


def ledger_verdicts(ledger: list[dict] | None, ids: list[str]) -> str:
    """How the chapters that prove an effect judged it: ``{doc}`stem`: verdict (paper, where)`` per
    claim id, for a cell of a MyST table (the id picks the row; the reader sees where the paper
    makes the claim). Says so when the ledger is not built or an id is not in it."""
    if ledger is None:
        return "ledger not built in this run"
    by_id = {r["id"]: r for r in ledger}
    parts = []
    for i in ids:
        r = by_id.get(i)
        parts.append(f"{{doc}}`{r['link'].split('.html')[0]}`: {r['verdict']} ({r['paper']}, {r['where']})" if r
                     else f"`{i}`: not in the ledger")
    return "; ".join(parts) if parts else "no chapter tests this in its own model"


def ledger_untested(ledger: list[dict] | None) -> str:
    """The claims no chapter could test, as a MyST list: paper, where, the claim, and the reason
    it was not tested (what testing it would take), with a link to the chapter. For chapter 9's
    open questions; says so when the ledger is not built."""
    if ledger is None:
        return "- (the ledger is not built in this run: `make book` builds it)"
    rows = [r for r in ledger if r["verdict"].startswith(Label.NOT_TESTED)]
    if not rows:
        return "- every claim in the ledger was tested by some chapter"
    return "\n".join(f"- **{r['paper']}, {r['where']}** ({{doc}}`{r['link'].split('.html')[0]}`): "
                     f"{r['statement']} *Not tested:* {r['reason']}" for r in rows)

