"""What kind of run a chapter is executing in, read from the kernel's environment.

The tooling starts every chapter's kernel with these variables:

``AG_RUN_KIND``
    ``book`` (``make book``), ``run`` (``make run``), ``sweep`` (a point of
    ``make sweep``), ``paper`` (``make paper``) or ``test``.
``AG_CHECKPOINT_DIR``
    paper runs only: ``results/<chapter>/paper/checkpoints``, where the heavy
    loops checkpoint so that a killed run resumes.
``AG_CHECKPOINT_DIR/outputs``
    paper runs only: files the chapter stores beside the run's values (arrays
    too large to glue), through :meth:`RunContext.output_path`; the run moves
    them into ``results/<chapter>/paper/`` when it finishes, each named with its
    digest in the provenance (:mod:`.paper`).
``AG_TORCH_THREADS``
    the number of torch threads of the kernel (set at kernel start-up, with
    ``OMP_NUM_THREADS`` and friends), so that parallel kernels do not
    oversubscribe the cores. Unset (a paper run, or a kernel started by hand), the
    kernel may use every core.

A chapter asks through :func:`run_context`::

    from attention_geometry.book import run_context
    ctx = run_context()
    results = resumable_map(step, items, store=ctx.checkpoints, name="mc", key={...})
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..checkpoint import CheckpointStore

__all__ = ["RUN_KIND_ENV", "CHECKPOINT_ENV", "TORCH_THREADS_ENV", "RUN_KINDS", "OUTPUTS", "RunContext", "run_context",
           "thread_env"]

RUN_KIND_ENV = "AG_RUN_KIND"
CHECKPOINT_ENV = "AG_CHECKPOINT_DIR"
TORCH_THREADS_ENV = "AG_TORCH_THREADS"
RUN_KINDS = ("book", "run", "paper", "sweep", "test")
OUTPUTS = "outputs"  # the folder, inside a paper run's checkpoints, of the files it stores


@dataclass(frozen=True)
class RunContext:
    kind: str  # one of RUN_KINDS
    checkpoints: CheckpointStore  # keeps nothing unless this is a paper run
    cores: int = 1  # cores this kernel may use: AG_TORCH_THREADS, or all of them when unset

    @property
    def is_paper_run(self) -> bool:
        return self.kind == "paper"

    def output_path(self, name: str) -> Path | None:
        """Where a paper run writes the file ``name`` that it stores beside its values
        (``<checkpoints>/outputs/name``, the folder created); ``None`` in any other run,
        which stores nothing."""
        if not self.is_paper_run or not self.checkpoints:
            return None
        if not name or name != Path(name).name or name.startswith("."):
            raise ValueError(f"name = {name!r} is not allowed; allowed: a plain file name (no folder, not hidden)")
        folder = self.checkpoints.folder / OUTPUTS
        folder.mkdir(parents=True, exist_ok=True)
        return folder / name


def run_context(environ: Mapping[str, str] | None = None) -> RunContext:
    """The context of the running chapter (``book`` when started by hand, e.g. in Jupyter)."""
    environ = os.environ if environ is None else environ
    kind = environ.get(RUN_KIND_ENV) or "book"
    if kind not in RUN_KINDS:
        raise ValueError(f"{RUN_KIND_ENV}={kind!r} is not a run kind; allowed: {', '.join(RUN_KINDS)}")
    folder = environ.get(CHECKPOINT_ENV) if kind == "paper" else None
    cores = environ.get(TORCH_THREADS_ENV) or str(os.cpu_count() or 1)
    if not cores.isdigit() or int(cores) < 1:
        raise ValueError(f"{TORCH_THREADS_ENV}={cores!r} is not a number of threads; allowed: an integer >= 1")
    return RunContext(kind=kind, checkpoints=CheckpointStore(folder or None), cores=int(cores))


def thread_env(threads: int) -> dict[str, str]:
    """Environment capping a kernel at ``threads`` BLAS/OpenMP/torch threads."""
    n = str(int(threads))
    return {"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n,
            "NUMEXPR_NUM_THREADS": n, "VECLIB_MAXIMUM_THREADS": n, TORCH_THREADS_ENV: n}
