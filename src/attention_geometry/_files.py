"""Files written whole or not at all, and the folder of what the library keeps on disk.

A file is written to a temporary file in the same folder, then renamed over the
target, so a reader (or a run killed mid-write) sees the old file or the new
one, never half of one. The result gets ordinary permissions (``0644``), not
the ``0600`` of :func:`tempfile.mkstemp` (checkpoints keep ``0600``). The tooling
writes every status, result and notebook file this way
(:mod:`attention_geometry.book.files`), :mod:`attention_geometry.checkpoint` its
checkpoints (:func:`write_atomic`, streaming ``torch.save`` into the file).
"""

import json
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Callable

__all__ = ["FILE_MODE", "write_atomic", "write_bytes_atomic", "write_text_atomic", "write_json_atomic", "cache_root"]

FILE_MODE = 0o644


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], Any], *,
                 mode: int | None = FILE_MODE) -> Path:
    """Call ``write`` on a temporary binary file beside ``path``, then rename it over
    ``path``; return the path. ``mode``: the permissions of the result (``None`` keeps
    :func:`tempfile.mkstemp`'s ``0600``, as checkpoints do)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file + rename); return the path."""
    return write_atomic(path, lambda fh: fh.write(data))


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode())


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def cache_root() -> Path:
    """The folder of what the models keep on disk: ``$AG_CACHE_DIR``, default ``~/.cache/attention_geometry``."""
    return Path(os.environ.get("AG_CACHE_DIR", Path.home() / ".cache" / "attention_geometry"))
