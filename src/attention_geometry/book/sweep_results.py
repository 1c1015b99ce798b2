"""Stored sweep results: a sweep run once with ``make sweep`` and committed under ``results/``.

A chapter that shows a sweep does not run it at build time (a sweep is many
chapter executions); it reads ``results/<chapter>/sweeps/<name>/results.csv``
(the sweep's tidy table) and its ``provenance.json``.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from .files import read_stored_json
from .project import Project
from .provenance import Provenance

__all__ = ["StoredSweep", "load_sweep_results"]


@dataclass(frozen=True)
class StoredSweep:
    name: str
    folder: Path
    table: object  # pandas.DataFrame: run, parameters..., status, error, key, value
    provenance: Provenance

    def estimates(self, key: str, by: tuple[str, ...]) -> dict:
        """``{(values of by...): Estimate}`` from each finished point's glued ``key`` and its
        standard error ``key + "-se"`` (points without them are left out)."""
        from ..stats import Estimate

        done = self.table[self.table["status"] == "done"]
        out = {}
        for values, part in done.groupby(list(by)):
            found = dict(zip(part["key"], part["value"]))
            if key in found and f"{key}-se" in found:
                out[tuple(values) if isinstance(values, tuple) else (values,)] = Estimate(
                    float(found[key]), float(found[f"{key}-se"]))
        return out


def load_sweep_results(chapter: str, name: str,
                       project: Project | str | os.PathLike | None = None) -> StoredSweep | None:
    """The stored sweep ``name`` of ``chapter``, or ``None`` if it has not been stored.
    ``project``: a :class:`Project`, its root folder, or (default) the one found from
    the working directory."""
    import pandas as pd

    project = Project.of(project)
    folder = project.results / chapter / "sweeps" / name
    if not (folder / "results.csv").exists():
        return None
    prov = folder / "provenance.json"
    return StoredSweep(name=name, folder=folder, table=pd.read_csv(folder / "results.csv"),
                       provenance=Provenance.from_json(read_stored_json(prov, project.root) if prov.exists() else {}))
