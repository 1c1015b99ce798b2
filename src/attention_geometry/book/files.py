"""Files written whole or not at all, and JSON read back with a recovery.

Every status, result and notebook file of the tooling is written through
:func:`write_bytes_atomic` (from :mod:`attention_geometry._files`, where the
library's own caches use it too): to a temporary file in the same folder, then
renamed over the target, so a reader (or a run killed mid-write) sees the old
file or the new one, never half of one.
"""

import json
import os
import shutil
from pathlib import Path

from .._files import FILE_MODE, write_bytes_atomic, write_json_atomic, write_text_atomic

__all__ = ["FILE_MODE", "write_bytes_atomic", "write_text_atomic", "write_json_atomic", "read_json_or_recover",
           "StoredResultCorrupt", "read_stored_json", "stored_result_fix", "corrupt_stored_results"]


def read_json_or_recover(path: str | os.PathLike, what: str) -> tuple[dict, str | None]:
    """The JSON object in ``path`` (``{}`` if there is none), and a warning or ``None``.

    A file that is not a JSON object (cut off, edited by hand) is moved aside to
    ``<name>.corrupt`` and read as empty; the warning says so, naming ``what``
    the file is and where the copy is.
    """
    path = Path(path)
    if not path.exists():
        return {}, None
    try:
        data = json.loads(path.read_text())
        if isinstance(data, dict):
            return data, None
        problem = f"holds a {type(data).__name__}, not a JSON object"
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        problem = f"is not valid JSON ({err})"
    kept = path.with_name(path.name + ".corrupt")
    shutil.copyfile(path, kept)
    path.unlink()
    return {}, (
        f"warning: {what} {path} {problem}; kept it as {kept} and started from an empty one "
        "(what it recorded is recomputed)"
    )


class StoredResultCorrupt(ValueError):
    """A stored result (a JSON file committed under ``results/``) that is not valid JSON:
    one line naming the file and how to get it back."""


def stored_result_fix(rel: Path) -> str:
    """How to compute again the stored result at ``rel`` (a path under the project's root)."""
    parts = rel.parts
    if len(parts) >= 3 and parts[0] == "results" and parts[2] == "paper":
        return f"make paper CHAPTER={parts[1]}"
    if len(parts) >= 4 and parts[0] == "results" and parts[2] == "sweeps":
        return (f"make sweep CHAPTER={parts[1]} GRID=sweeps/{parts[3]}.yaml "
                f"OUT={'/'.join(parts[:4])}")
    return "the command that made it"


def read_stored_json(path: str | os.PathLike, root: str | os.PathLike) -> object:
    """The JSON in ``path``, a stored result under the project folder ``root``. Unlike a
    status file (:func:`read_json_or_recover`) it is never replaced: what a long run
    stored cannot be recomputed in passing, so a file that is not valid JSON raises
    :class:`StoredResultCorrupt`, naming the file and the two fixes."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        try:
            rel = path.resolve().relative_to(Path(root).resolve())
        except ValueError:
            rel = path
        where = f"at line {err.lineno}, column {err.colno}" if isinstance(err, json.JSONDecodeError) else "not UTF-8"
        raise StoredResultCorrupt(
            f"the stored result {rel.as_posix()} is not valid JSON ({where}: cut off, or edited?): "
            f"restore it from git (git checkout -- {rel.as_posix()}), or compute it again with: "
            f"{stored_result_fix(rel)}") from None


def corrupt_stored_results(root: str | os.PathLike, chapter: str | None = None,
                           rewritten: str | os.PathLike | None = None) -> list[str]:
    """The message of every stored result under ``root/results`` (``results/<chapter>``
    only, if given) that is not valid JSON. Left out: the checkpoints of an unfinished
    run (the run reads them, and replaces them) and the folder ``rewritten`` (the
    command about to run writes it: a sweep into its ``OUT``)."""
    results = Path(root) / "results"
    folder = results / chapter if chapter else results
    skip = Path(rewritten).resolve() if rewritten else None
    messages = []
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
        if "checkpoints" in path.relative_to(results).parts or (skip and path.resolve().is_relative_to(skip)):
            continue
        try:
            read_stored_json(path, root)
        except StoredResultCorrupt as err:
            messages.append(str(err))
    return messages
