"""Files written whole or not at all, and JSON read back with a recovery.

Every status, result and notebook file of the tooling is written through
:func:`write_bytes_atomic`: to a temporary file in the same folder, then
renamed over the target, so a reader (or a run killed mid-write) sees the old
file or the new one, never half of one. The result gets ordinary permissions
(``0644``), not the ``0600`` of :func:`tempfile.mkstemp`.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["FILE_MODE", "write_bytes_atomic", "write_text_atomic", "write_json_atomic", "read_json_or_recover"]

FILE_MODE = 0o644


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file + rename); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode())


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


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
