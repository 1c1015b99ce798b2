"""Scratch files of an execution, named by the process that owns them, and their clean-up.

An execution writes its partial notebook beside the output
(``.<stem>.<pid>.<random>.partial.ipynb``) and runs its kernel on sockets in a
temporary folder (``ag-kernel-<pid>-<random>``, with the kernel's own pid in
``kernel.pid``); a sweep point works in ``ag-point-<pid>-<random>``. An
execution that ends, however it ends, removes them. A process killed outright
(a Dask worker that dies, ``kill -9``) cannot: :func:`clean_leftovers` removes
those whose owner is gone, and stops a kernel that outlived its owner. Files of
a live process are never touched, so two runs side by side are safe.
"""

import os
import re
import secrets
import shutil
import signal
import tempfile
from pathlib import Path

__all__ = ["KERNEL_PID", "partial_notebook", "kernel_dir", "point_dir", "owner", "clean_leftovers"]

KERNEL_PID = "kernel.pid"
_PARTIAL = re.compile(r"^\..+\.(\d+)\.[0-9a-f]{8}\.partial\.")
_FOLDER = re.compile(r"^ag-(?:kernel|point)-(\d+)-")


def _tag() -> str:
    return f"{os.getpid()}.{secrets.token_hex(4)}"


def partial_notebook(output: Path) -> Path:
    """Where papermill writes ``output`` while it runs."""
    return Path(output).parent / f".{Path(output).stem}.{_tag()}.partial.ipynb"


def kernel_dir() -> str:
    return tempfile.mkdtemp(prefix=f"ag-kernel-{os.getpid()}-")


def point_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix=f"ag-point-{os.getpid()}-")


def owner(path: Path) -> int | None:
    """The pid in a scratch file's or folder's name, ``None`` if it has none."""
    name = Path(path).name
    m = _PARTIAL.match(name) or _FOLDER.match(name)
    return int(m.group(1)) if m else None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _stop_orphan_kernel(folder: Path, owner_pid: int) -> None:
    """Stop the kernel recorded in ``folder`` if it still runs: a kernel process whose
    parent, as jupyter_client told it (``JPY_PARENT_PID``), is the dead owner."""
    try:
        pid = int((folder / KERNEL_PID).read_text())
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return
    if f"JPY_PARENT_PID={owner_pid}".encode() in environ:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def clean_leftovers(*folders: Path) -> list[Path]:
    """Remove the scratch files in ``folders`` (default: none) and the kernel and point
    folders in the temporary directory whose owning process is gone; return them."""
    removed = []
    for folder in folders:
        for path in Path(folder).glob(".*.partial*.ipynb"):
            pid = owner(path)
            if pid is None or not _alive(pid):
                path.unlink(missing_ok=True)
                removed.append(path)
    tmp = Path(tempfile.gettempdir())
    for path in [*tmp.glob("ag-kernel-*"), *tmp.glob("ag-point-*")]:
        pid = owner(path)
        if pid is None or _alive(pid) or not path.is_dir():
            continue
        _stop_orphan_kernel(path, pid)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed
