"""Stored paper-scale runs: reading them (the runner comes with the tooling rewrite).

A chapter's run at its paper's settings lives in ``results/<chapter>/paper/``:
``values.json`` (every glued value, and the claim records under ``"claims"``),
``parameters.json`` and ``provenance.json``.
"""

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PaperRun", "load_paper_run", "project_root"]


@dataclass(frozen=True)
class PaperRun:
    chapter: str
    folder: Path
    parameters: dict
    values: dict
    claims: list
    provenance: dict


def project_root(start: Path | None = None) -> Path:
    """The folder holding ``_toc.yml``, walking up from ``start`` (default: the working directory)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").exists():
            return folder
    raise FileNotFoundError(f"no _toc.yml in {here} or above: not inside the book's repository")


def load_paper_run(chapter: str, root: Path | None = None) -> PaperRun | None:
    """The stored paper-scale run of ``chapter``, or ``None`` if there is none."""
    folder = (root or project_root()) / "results" / chapter / "paper"
    if not (folder / "values.json").exists():
        return None
    values = json.loads((folder / "values.json").read_text())
    return PaperRun(
        chapter=chapter,
        folder=folder,
        parameters=json.loads((folder / "parameters.json").read_text()),
        values=values,
        claims=values.get("claims", []),
        provenance=json.loads((folder / "provenance.json").read_text()),
    )
