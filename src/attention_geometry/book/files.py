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

__all__ = ["FILE_MODE", "write_bytes_atomic", "write_text_atomic", "write_json_atomic", "read_json_or_recover"]


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
