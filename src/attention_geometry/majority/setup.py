"""One training set-up of the majority task (the original's settings as defaults) and
how a set-up differs from the original's."""

from dataclasses import asdict, dataclass, fields
from typing import Mapping

from .._checks import check_float, check_int


@dataclass(frozen=True)
class MajoritySetup:
    """One training set-up; the defaults are the original's (``run_with_projection.bash``)."""

    n_classes: int = 20  # --num_classes
    length: int = 50  # --seq_len
    d: int = 8  # --hidden_dim
    min_margin: int = 6  # --data_min_delta
    n_sequences: int = 100_000  # --num_samples (10,001 partitions x 10 = 100,010 are drawn)
    train_fraction: float = 0.8  # train_test_split(train_size=0.8, stratify=y)
    batch: int = 6000  # --batch_size: 14 mini-batches per epoch of 80,008 sequences
    steps: int = 14_000  # --epochs 1000 x 14 mini-batches
    lr: float = 1e-3  # --lr, Adam
    lr_decay_epochs: int = 10_000  # the schedule reaches 0 after ceil(n_train / batch) * 10000 steps; 0: constant
    eval_every: int = 140  # steps between two points of the curves (10 epochs; the original: every epoch)
    eval_sequences: int = 0  # test sequences behind the curves (0: all); the final numbers use all of them
    stop_at_accuracy: float = 1.0  # a seed stops when its test accuracy reaches this (the original: 1.0)
    checkpoint_every: int = 500  # steps between two checkpoints (with a store)

    def __post_init__(self):
        for name, low in [("n_classes", 2), ("length", 2), ("d", 2), ("min_margin", 1), ("n_sequences", 1),
                          ("batch", 1), ("steps", 1), ("lr_decay_epochs", 0), ("eval_every", 1), ("eval_sequences", 0),
                          ("checkpoint_every", 1)]:
            check_int(name, getattr(self, name), low=low)
        check_int("min_margin", self.min_margin, low=1, high=self.length)
        check_float("train_fraction", self.train_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
        check_float("lr", self.lr, low=0.0, low_open=True)
        check_float("stop_at_accuracy", self.stop_at_accuracy, low=0.0, high=1.0, low_open=True)


def setup_differences(setup: MajoritySetup, reference: MajoritySetup = MajoritySetup()) -> list[tuple]:
    """The fields that change the training in which ``setup`` differs from ``reference``
    (default: the original's settings): ``[(field, ours, reference), ...]``, in the
    dataclass's order (``eval_every``, ``eval_sequences`` and ``checkpoint_every``
    only change what is recorded and are left out)."""
    ours, ref = asdict(setup), asdict(reference)
    bookkeeping = ("eval_every", "eval_sequences", "checkpoint_every")  # what is recorded, not how it trains
    return [(k, ours[k], ref[k]) for k in ours if ours[k] != ref[k] and k not in bookkeeping]


#: The original's number of seeds per variant (``run_with_projection.bash``: seeds 0-9).
ORIGINAL_SEEDS = 10


def run_differences(setup: MajoritySetup, n_seeds: int, reference: MajoritySetup = MajoritySetup(),
                    original_seeds: int = ORIGINAL_SEEDS) -> list[tuple]:
    """:func:`setup_differences` plus the number of seeds (``"n_seeds"``) when it is not the original's."""
    rows = setup_differences(setup, reference)
    return rows + ([("n_seeds", n_seeds, original_seeds)] if n_seeds != original_seeds else [])


#: The original's d = 3 runs (``run_with_projection_3d.bash``): ten seeds, 10,000 steps,
#: full batches of its 6,000 sequences, learning rate 1e-3; under the chapter's parameter names.
ORIGINAL_GEOMETRY = {"geo_seeds": ORIGINAL_SEEDS, "geo_steps": 10_000, "geo_batch": 6000, "geo_lr": 0.001}


def geometry_differences(params: Mapping) -> list[tuple]:
    """The settings of the d = 3 runs (``geo_*`` in ``params``, a chapter's parameters
    or preset) that differ from the original's: ``[(name, ours, original), ...]``."""
    return [(k, params[k], v) for k, v in ORIGINAL_GEOMETRY.items() if k in params and params[k] != v]


def majority_setup(params: Mapping) -> MajoritySetup:
    """The :class:`MajoritySetup` whose fields are taken by name from ``params`` (a
    chapter's parameters or preset; other names are ignored, missing fields keep
    the original's values)."""
    names = {f.name for f in fields(MajoritySetup)}
    return MajoritySetup(**{k: v for k, v in params.items() if k in names})
