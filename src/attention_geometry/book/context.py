"""What kind of run a chapter is executing in, and where its checkpoints go.

The runners export ``AG_RUN_KIND`` (``book``, ``run``, ``paper``, ``sweep``,
``test``) and, for paper-scale runs, ``AG_CHECKPOINT_DIR``. A chapter reads
them through :func:`run_context` and passes ``ctx.checkpoints`` to its heavy
loops, which then resume after an interruption.
"""

import os
from dataclasses import dataclass

from ..checkpoint import CheckpointStore

__all__ = ["RunContext", "run_context"]


@dataclass(frozen=True)
class RunContext:
    kind: str
    checkpoints: CheckpointStore

    @property
    def is_paper_run(self) -> bool:
        return self.kind == "paper"


def run_context() -> RunContext:
    """The current run's kind and checkpoint store (an empty store outside paper runs)."""
    return RunContext(kind=os.environ.get("AG_RUN_KIND", "book"),
                      checkpoints=CheckpointStore(os.environ.get("AG_CHECKPOINT_DIR") or None))
