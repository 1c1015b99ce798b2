"""Atomic checkpoints for long loops, so that an interrupted run resumes.

The heavy loops of the book (Monte Carlo chunks, training steps, Jacobian
probes over sequences) take an optional ``store``. Without one they simply run;
with one, each finished piece of work is written to disk *atomically* (to a
temporary file, then renamed), so a run killed at any moment leaves either the
previous checkpoint or the new one, never half of one. Starting the same loop
again with the same key loads what was done and continues.

A checkpoint is named by the loop (``name``) and by a *key*: a mapping of
everything that determines the loop's result (sizes, seeds, hyper-parameters).
The key is stored beside the state and compared on load, so a checkpoint
written for other settings is never mistaken for this one: it lives under
another file name, and a file whose stored key differs is refused.

Two patterns cover the book's loops:

* :func:`resumable_map`: independent pieces (Monte Carlo chunks with their own
  seeds, one Jacobian profile per sequence). Each piece's result is stored.
* :meth:`CheckpointStore.load` / :meth:`CheckpointStore.save`: one evolving
  state (a training run: parameters, optimiser state, step, curves), saved
  every so often and loaded at the start.

A loop whose results depend on code (a model's forward pass, a Jacobian) puts
:func:`code_digest` of that code in its key: a run resumed after the code
changed then looks under another name, and computes afresh instead of reusing
what the older code computed.

Only numpy, torch and the standard library are used here; the folder comes
from the caller (the book tooling passes ``results/<chapter>/paper/checkpoints``).
"""

import hashlib
import inspect
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ._files import write_atomic

__all__ = ["CheckpointStore", "CheckpointMismatch", "resumable_map", "key_digest", "code_digest"]


class CheckpointMismatch(RuntimeError):
    """A checkpoint file exists under this name but was written for another key."""


def key_digest(key: Mapping[str, Any]) -> str:
    """A short stable digest of a JSON-able key (sorted, so argument order does not matter)."""
    text = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def code_digest(*objects: Any) -> str:
    """A short stable digest of the source of ``objects`` (functions, classes, modules), in
    the order given; for a checkpoint key, so that checkpoints made by other code are not
    reused. An object without retrievable source (a builtin) counts by its qualified name."""
    h = hashlib.sha256()
    for obj in objects:
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            text = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"
        h.update(text.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


class CheckpointStore:
    """A folder of checkpoints, written atomically.

    ``CheckpointStore(None)`` is a store that keeps nothing (every ``load``
    returns ``None``, every ``save`` is a no-op): loops take a store and never
    need to test for one.
    """

    def __init__(self, folder: str | os.PathLike | None):
        self.folder = Path(folder) if folder is not None else None
        # what resumable_map computed through this store: the items and the seconds they
        # took (items reused from checkpoints count in neither, so a resumed run's timing is honest)
        self.computed_items, self.computing_seconds = 0, 0.0

    def __bool__(self) -> bool:
        return self.folder is not None

    def mark(self) -> tuple[int, float]:
        """Where the counts stand now, for :meth:`since`."""
        return self.computed_items, self.computing_seconds

    def since(self, mark: tuple[int, float]) -> tuple[int, float]:
        """``(items, seconds)`` that :func:`resumable_map` computed through this store
        since ``mark``, not counting the items it reused from checkpoints."""
        return self.computed_items - mark[0], self.computing_seconds - mark[1]

    def __repr__(self) -> str:
        return f"CheckpointStore({str(self.folder) if self.folder else None!r})"

    def path(self, name: str, key: Mapping[str, Any]) -> Path | None:
        if self.folder is None:
            return None
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
        return self.folder / f"{safe}-{key_digest(key)}.pt"

    def load(self, name: str, key: Mapping[str, Any]) -> Any | None:
        """The state saved under ``(name, key)``, or ``None`` if there is none."""
        path = self.path(name, key)
        if path is None or not path.exists():
            return None
        import torch  # on first use: the book tooling imports this module without needing torch

        record = torch.load(path, map_location="cpu", weights_only=False)
        if record.get("key") != json.loads(json.dumps(key, sort_keys=True, default=str)):
            raise CheckpointMismatch(
                f"checkpoint {path} was written for key {record.get('key')!r}, not {dict(key)!r}; "
                "delete it to start this loop afresh"
            )
        return record["state"]

    def save(self, name: str, key: Mapping[str, Any], state: Any) -> None:
        """Write ``state`` under ``(name, key)`` atomically (temporary file, then rename)."""
        path = self.path(name, key)
        if path is None:
            return
        import torch

        record = {"key": json.loads(json.dumps(key, sort_keys=True, default=str)), "state": state}
        write_atomic(path, lambda fh: torch.save(record, fh), mode=None)


def resumable_map(
    fn: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    store: CheckpointStore | None,
    name: str,
    key: Mapping[str, Any],
    progress: Callable[[int, int], None] | None = None,
    size: Callable[[Any], int] | None = None,
) -> list:
    """``[fn(item) for item in items]``, each result checkpointed as it is done.

    The results so far are saved after every item under ``(name, key)``; the
    key must determine every result (it should include the items' definition,
    e.g. the seeds and sizes). On a restart the saved results are reused and
    only the remaining items are computed. ``progress(done, total)`` is called
    after each item (also for the reused ones, once). The store counts the items
    computed and their seconds (``computed_items``, ``computing_seconds``);
    ``size(item)`` is what an item counts for there (default 1; e.g. the
    sequences in a batch).
    """
    size = size or (lambda item: 1)
    items = list(items)
    if store is None:
        store = CheckpointStore(None)
    full_key = {**dict(key), "n_items": len(items)}
    done = store.load(name, full_key) or []
    results = list(done)
    if progress is not None and results:
        progress(len(results), len(items))
    for item in items[len(results):]:
        start = time.perf_counter()
        results.append(fn(item))
        store.computing_seconds += time.perf_counter() - start
        store.computed_items += size(item)
        store.save(name, full_key, results)
        if progress is not None:
            progress(len(results), len(items))
    return results
