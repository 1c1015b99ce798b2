"""The form of a chapter's source, as a reader meets it: which code cells the HTML shows, how
long they are, how many glued numbers a paragraph carries, and which sentences state a
comparison in words a rerun cannot change.

A chapter is a MyST Markdown notebook. A code cell tagged ``remove-cell`` (or ``remove-input``)
stays in the notebook a reader downloads and in ``make lab`` but is not shown in the HTML; the
rest are *visible*. The book keeps at most :data:`MAX_VISIBLE_CELLS` visible cells per chapter,
none longer than :data:`MAX_CELL_LINES` lines, and at most :data:`MAX_GLUED_PER_PARAGRAPH`
glued values per paragraph (the rest belong in a numbered table).

A sentence that compares or concludes ("exceeds", "below", "only", "holds") beside a glued
number must be computed too, because a rerun at other parameters changes the number but not the
literal word. :func:`fixed_comparisons` finds such sentences. A sentence whose literal words
hold at every allowed parameter (a theorem's statement, say) is marked with a MyST comment
``% holds at any parameters`` on the line above its paragraph.

A backtick fence whose opening line holds a backtick (``````{table} The `x` ...``, a caption
with inline code or a glue role) is not a fence in CommonMark, whose info string may not
contain backticks: jupytext then reads the rest of the chapter as one Markdown cell, and
every code cell after it is lost. :func:`broken_fences` finds such lines; a caption with a
role needs a tilde fence (``~~~~{table} ...``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Visible code cells a chapter may show.
MAX_VISIBLE_CELLS = 12
#: Lines (without blank lines) of a visible code cell, the ``parameters`` cell excepted.
MAX_CELL_LINES = 10
#: Glued values one paragraph may carry.
MAX_GLUED_PER_PARAGRAPH = 5
#: Tags that keep a cell out of the HTML.
HIDDEN_TAGS = ("remove-cell", "remove-input")
#: The MyST comment that vouches that a paragraph's literal comparisons hold at any parameters.
ANY_PARAMETERS = "% holds at any parameters"

#: Words that compare or conclude: beside a glued number they must be glued themselves.
COMPARATIVE = re.compile(
    r"\b(more|less|fewer|larger|smaller|greater|higher|lower|above|below|beyond|exceeds?|exceeding|"
    r"within|outside|only|twice|half|reproduces?|holds?|fails?|confirms?|contradicts?|agrees?|"
    r"disagrees?|never|always|none|all of)\b", re.I)

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.S | re.M)
_GLUE = re.compile(r"\{glue(?::text|:md)?\}`[^`]*`")
_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.S | re.M)
# display math: "$$" alone or opening a block up to the next line that starts with "$$", or a
# whole display on one line ("$$ a = b $$", which has no closing line of its own)
_MATH_BLOCK = re.compile(r"^\$\$(?:[^\n]*?\$\$[ \t]*(?:\([^)\n]*\))?[ \t]*$|.*?^\$\$[^\n]*$)", re.S | re.M)
_COMMENT = re.compile(r"^\s*%")


@dataclass(frozen=True)
class Cell:
    """A code cell of a chapter's source: its position among the code cells, tags and lines."""

    index: int
    tags: tuple[str, ...]
    lines: tuple[str, ...]

    @property
    def visible(self) -> bool:
        return not any(t in self.tags for t in HIDDEN_TAGS)

    @property
    def length(self) -> int:
        """Lines that are not blank and not the cell's own tag header."""
        return sum(1 for ln in self.lines if ln.strip())


def code_cells(source: str) -> list[Cell]:
    """Every code cell of a MyST notebook's text, with its tags (``:tags: [...]``)."""
    cells = []
    for k, m in enumerate(_CELL.finditer(source)):
        body = m.group(1).splitlines()
        tags: tuple[str, ...] = ()
        while body and body[0].startswith(":"):
            head = body.pop(0)
            if head.startswith(":tags:"):
                tags = tuple(t.strip(" '\"") for t in head.split(":", 2)[2].strip(" []").split(",") if t.strip())
        if body and not body[0].strip():
            body.pop(0)
        cells.append(Cell(k, tags, tuple(body)))
    return cells


def visible_cells(source: str) -> list[Cell]:
    """The code cells the HTML shows."""
    return [c for c in code_cells(source) if c.visible]


def form_problems(source: str) -> list[str]:
    """What breaks the book's limits on visible code: too many visible cells, or one too long.
    The ``parameters`` cell counts as a cell but not for length (it lists what a reader may set)."""
    shown = visible_cells(source)
    problems = []
    if len(shown) > MAX_VISIBLE_CELLS:
        problems.append(f"{len(shown)} visible code cells (at most {MAX_VISIBLE_CELLS})")
    for c in shown:
        if "parameters" not in c.tags and c.length > MAX_CELL_LINES:
            first = next((ln for ln in c.lines if ln.strip()), "")
            problems.append(f"code cell {c.index + 1} shows {c.length} lines (at most {MAX_CELL_LINES}): {first.strip()[:60]}")
    return problems


def prose_paragraphs(source: str) -> list[tuple[int, str]]:
    """The prose paragraphs of a MyST notebook (no front matter, code, fenced blocks or display
    math), each with the line it starts on."""
    text = re.sub(r"\A---\n.*?\n---\n", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.S)
    for pattern in (_FENCE, _MATH_BLOCK):
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    paragraphs, start, lines = [], 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line)
        elif lines:
            paragraphs.append((start, "\n".join(lines)))
            lines = []
    if lines:
        paragraphs.append((start, "\n".join(lines)))
    return paragraphs


def glued_count(paragraph: str) -> int:
    """How many glued values a paragraph shows (``{glue:text}`...``` and ``{glue}`...```)."""
    return len(_GLUE.findall(paragraph))


def crowded_paragraphs(source: str, limit: int = MAX_GLUED_PER_PARAGRAPH) -> list[str]:
    """Paragraphs that carry more glued values than ``limit``, each named by its first line."""
    return [f"line {start}: {glued_count(_without_comments(p))} glued values: {p.splitlines()[0][:60]}"
            for start, p in prose_paragraphs(source) if glued_count(_without_comments(p)) > limit]


def _sentences(paragraph: str) -> list[str]:
    flat = " ".join(paragraph.split())
    return [s for s in re.split(r"(?<=[.;:!?])\s+(?=[A-Z$({])", flat) if s]


def _vouched(lines: list[str], start: int, paragraph: str) -> bool:
    """Whether :data:`ANY_PARAMETERS` stands on the line above the paragraph or among the
    comment lines that open it (a MyST comment needs no blank line before the text)."""
    above = lines[start - 2].strip() if start >= 2 else ""
    opening = []
    for line in paragraph.splitlines():
        if not _COMMENT.match(line):
            break
        opening.append(line.strip())
    return above == ANY_PARAMETERS or ANY_PARAMETERS in opening


def _without_comments(paragraph: str) -> str:
    """The paragraph as the reader sees it: MyST comment lines (``% ...``) are not shown."""
    return "\n".join(line for line in paragraph.splitlines() if not _COMMENT.match(line))


def fixed_comparisons(source: str) -> list[str]:
    """Sentences with a glued value and a comparing or concluding word that is literal text, not
    glued: a rerun at other parameters changes the number and leaves the word, which may then be
    false. Paragraphs under the comment :data:`ANY_PARAMETERS` are vouched for and skipped; so
    are comparisons inside inline math (``$L \\le 40$`` states a setting, not a finding), inside
    a role's target (``{prf:ref}`thm-holds```) and in inline code."""
    found, lines = [], source.splitlines()
    for start, paragraph in prose_paragraphs(source):
        if _vouched(lines, start, paragraph):
            continue
        for sentence in _sentences(_without_comments(paragraph)):
            if not _GLUE.search(sentence):
                continue
            words = _GLUE.sub(" ", sentence)
            words = re.sub(r"\{[a-z:-]+\}`[^`]*`", " ", words)  # cite, ref, eq, prf:ref ... roles
            words = re.sub(r"`[^`]*`", " ", words)  # inline code
            words = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", words)  # inline math, $$...$$ too
            hit = COMPARATIVE.search(words)
            if hit:
                found.append(f"line {start}: {hit.group(0)!r} in: {sentence[:110]}")
    return found


_BACKTICK_OPENING = re.compile(r"^`{3,}([^`\n][^\n]*)$", re.M)


def broken_fences(source: str) -> list[str]:
    """Lines that open a backtick fence with a backtick in their info string (CommonMark's
    rule: not a fence, so the notebook is cut there), each named by its line number."""
    return [f"line {source.count(chr(10), 0, m.start()) + 1}: a backtick after a backtick fence: {m.group(0)[:70]}"
            for m in _BACKTICK_OPENING.finditer(source) if "`" in m.group(1)]


def chapter_report(path: Path | str) -> dict[str, list[str]]:
    """The form problems of one chapter's source file (see ``python -m attention_geometry.book.form``)."""
    source = Path(path).read_text()
    return {"cells": form_problems(source), "crowded": crowded_paragraphs(source),
            "comparisons": fixed_comparisons(source), "fences": broken_fences(source)}


def main(argv: list[str] | None = None) -> int:
    """Print each named chapter's form problems; the exit status is 1 when there are any."""
    import sys

    paths = (argv if argv is not None else sys.argv[1:]) or sorted(str(p) for p in Path("book").glob("0*.md"))
    bad = 0
    for path in paths:
        report = chapter_report(path)
        n = sum(len(v) for v in report.values())
        bad += n
        print(f"{path}: {len(visible_cells(Path(path).read_text()))} visible cells, {n} problems")
        for kind, items in report.items():
            for item in items:
                print(f"  [{kind}] {item}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
