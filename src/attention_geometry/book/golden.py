"""The golden ledger: every verdict of the book, committed, so that a change that moves one shows it.

``tests/golden_ledger.json`` maps each claim id to its chapter and the verdict that
stands in the built book (the ledger's ``verdict`` column). The test
``test_no_verdict_moved_without_the_golden_file`` compares it with the built book's
``claims.json``: a verdict that changed, a row that appeared or one that went fails
the suite, unless the same change updates the golden file
(``attention-geometry golden``, after ``make book``). The diff of that file then shows
a reviewer every verdict that moved.
"""

import json
from pathlib import Path

from .project import Project

__all__ = ["GOLDEN_FILE", "golden_of", "verdict_changes", "read_golden", "write_golden"]

#: Where the golden ledger lives, relative to the project root.
GOLDEN_FILE = Path("tests") / "golden_ledger.json"


def golden_of(rows: list[dict]) -> dict[str, dict[str, str]]:
    """``{id: {"chapter", "verdict"}}`` of ledger rows (``claims.json``), sorted by id."""
    return {r["id"]: {"chapter": r["chapter"], "verdict": r["verdict"]} for r in sorted(rows, key=lambda r: r["id"])}


def verdict_changes(golden: dict[str, dict], current: dict[str, dict]) -> list[str]:
    """One line per difference: a verdict that moved, a row that is new, a row that is gone."""
    lines = []
    for cid in sorted(set(golden) | set(current)):
        old, new = golden.get(cid), current.get(cid)
        if old is None:
            lines.append(f"{cid} ({new['chapter']}): new row, {new['verdict']!r}")
        elif new is None:
            lines.append(f"{cid} ({old['chapter']}): row gone (was {old['verdict']!r})")
        elif old["verdict"] != new["verdict"]:
            lines.append(f"{cid} ({new['chapter']}): {old['verdict']!r} -> {new['verdict']!r}")
    return lines


def read_golden(project: Project | None = None) -> dict[str, dict]:
    path = Project.of(project).root / GOLDEN_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def write_golden(rows: list[dict], project: Project | None = None) -> Path:
    """Write the golden ledger of ``rows`` (one row per line, so that a diff shows each verdict)."""
    path = Project.of(project).root / GOLDEN_FILE
    golden = golden_of(rows)
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in golden.items())
    path.write_text("{\n" + body + "\n}\n")
    return path
