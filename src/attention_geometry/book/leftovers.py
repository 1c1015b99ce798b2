"""Scratch files of an execution, named by the process that owns them, and their clean-up.

An execution writes its partial notebook beside the output
(``.<stem>.<pid>.<random>.partial.ipynb``) and runs its kernel on sockets in a
temporary folder (``ag-kernel-<pid>-<random>``, with the kernel's own pid in
``kernel.pid`` and its connection file ``kernel.json``); a sweep point works in
``ag-point-<pid>-<random>``, and a run report is built in
``.report-<pid>-<random>`` beside it. An execution that ends, however it ends,
removes them. A process killed outright (a Dask worker that dies, ``kill -9``)
cannot: :func:`clean_leftovers` removes those whose owner is gone, and stops a
kernel that outlived its owner. It also removes the connection files that kernels
started before the connection file moved into the kernel folder left in the
temporary directory (``tmp*.json`` naming a dead owner's kernel folder). Files of
a live process are never touched, so two runs side by side are safe.
"""

import json
import os
import re
import secrets
import shutil
import signal
import tempfile
from pathlib import Path

__all__ = ["KERNEL_PID", "CONNECTION_FILE", "partial_notebook", "kernel_dir", "point_dir", "report_dir", "owner",
           "clean_leftovers"]

KERNEL_PID = "kernel.pid"
CONNECTION_FILE = "kernel.json"
_PARTIAL = re.compile(r"^\..+\.(\d+)\.[0-9a-f]{8}\.partial\.")
_FOLDER = re.compile(r"^(?:ag-(?:kernel|point)|\.report)-(\d+)-")


def _tag() -> str:
    return f"{os.getpid()}.{secrets.token_hex(4)}"


def partial_notebook(output: Path) -> Path:
    """Where papermill writes ``output`` while it runs."""
    return Path(output).parent / f".{Path(output).stem}.{_tag()}.partial.ipynb"


def kernel_dir() -> str:
    return tempfile.mkdtemp(prefix=f"ag-kernel-{os.getpid()}-")


def point_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix=f"ag-point-{os.getpid()}-")


def report_dir(parent: Path) -> tempfile.TemporaryDirectory:
    """Where a run report is built, beside the folder it replaces (an atomic rename)."""
    return tempfile.TemporaryDirectory(prefix=f".report-{os.getpid()}-", dir=parent)


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
        for path in Path(folder).glob(".report-*"):  # a report's build folder
            pid = owner(path)
            if path.is_dir() and (pid is None or not _alive(pid)):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    tmp = Path(tempfile.gettempdir())
    for path in [*tmp.glob("ag-kernel-*"), *tmp.glob("ag-point-*")]:
        pid = owner(path)
        if pid is None or _alive(pid) or not path.is_dir():
            continue
        _stop_orphan_kernel(path, pid)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    for path in tmp.glob("tmp*.json"):
        pid = _old_connection_file_owner(path)
        if pid is not None and not _alive(pid):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _old_connection_file_owner(path: Path) -> int | None:
    """The owner of the kernel folder that a connection file left in the temporary
    directory names (``"ip": "/tmp/ag-kernel-<pid>-.../kernel"``); ``None`` for any other file."""
    try:
        if path.stat().st_size > 4096:
            return None
        ip = json.loads(path.read_text()).get("ip", "")
    except (OSError, ValueError, AttributeError):
        return None
    folder = Path(ip).parent if isinstance(ip, str) else None
    return owner(folder) if folder and folder.name.startswith("ag-kernel-") else None
