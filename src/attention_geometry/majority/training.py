"""Training the majority model: all seeds at once on a leading axis, Adam with the
original's linear decay, checkpoints, and the recorded curves (:class:`MajorityRun`)."""

import functools
import math
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .._checks import as_generator, as_torch_generator, check_int, fail, shape_of, torch_threads
from .._parallel import map_processes, progress_bar
from ..checkpoint import CheckpointStore
from .data import partition_majority_data, stratified_split
from .model import (_attention_output, _attention_parts, _check_variant, _feed_forward, _linear, _present_pairs,
                    angle_to_ones, attention_norm, effective_queries, init_majority_params, majority_loss,
                    value_path_outputs, value_spectrum)
from .setup import MajoritySetup


@dataclass(frozen=True)
class MajorityRun:
    """Curves of ``S`` seeds, recorded at ``steps: (T,)``; every curve is ``(S, T)``.

    ``loss``: training cross-entropy per position, averaged over the steps since
    the previous record (the original's epoch-averaged training loss, Fig. 2a);
    ``test_loss``, ``test_accuracy``: on the test set, over all positions;
    ``angle``: mean over test positions of the angle (degrees) between the
    effective query and the line through 1 (the original's ``test_angle_mean``,
    Fig. 2b); ``entropy``: mean attention entropy divided by log n (1 = uniform);
    ``score_scale``: mean over test positions of the largest score magnitude the
    effective query can give any key of the variant, ``||u|| ||n|| / sqrt(d)``
    (``||Pu||`` under LayerNorm). ``lr: (T,)`` the learning rate at each record;
    ``stopped: (S,)`` the step at which a seed stopped (-1: never);
    ``keys, queries: (S, C, d)`` the normed class embeddings and their effective
    queries at the end (the original's Fig. 1a-b data). ``n_train``, ``n_test``:
    the sizes of the split. ``final``: the test metrics at the end on the whole
    test set, ``{"test_loss", "test_accuracy", "angle", "entropy", "score_scale"}``
    each ``(S,)`` (the curves may use a part of it: ``eval_sequences``).
    ``value_spectrum: (S, d)``: the eigenvalues, largest first, of the covariance of
    the value-path outputs (``value_path_outputs``) over the first
    :data:`SPECTRUM_SEQUENCES` test sequences at the end (``value_spectrum``).
    """

    norm: str
    seeds: tuple
    setup: MajoritySetup
    steps: np.ndarray
    lr: np.ndarray
    loss: np.ndarray
    test_loss: np.ndarray
    test_accuracy: np.ndarray
    angle: np.ndarray
    entropy: np.ndarray
    score_scale: np.ndarray
    stopped: np.ndarray
    keys: np.ndarray
    queries: np.ndarray
    n_train: int
    n_test: int
    final: dict
    value_spectrum: np.ndarray | None = None

    def at(self, curve: str, step: int) -> np.ndarray:
        """``curve`` at the last record at or before ``step``: ``(S,)``."""
        i = int(np.searchsorted(self.steps, step, side="right")) - 1
        if i < 0:
            raise fail("step", step, f"a step >= {self.steps[0]}", "is before the first record")
        return getattr(self, curve)[:, i]


#: Test sequences behind a run's value spectrum (enough for a d x d covariance at the widths used).
SPECTRUM_SEQUENCES = 5000

_CURVES = ("loss", "test_loss", "test_accuracy", "angle", "entropy", "score_scale")


def majority_lr(step: int, setup: MajoritySetup, steps_per_epoch: int) -> float:
    """The learning rate at ``step``: linear decay from ``lr`` to 0 over
    ``lr_decay_epochs * steps_per_epoch`` steps (constant if ``lr_decay_epochs = 0``)."""
    if setup.lr_decay_epochs == 0:
        return setup.lr
    total = setup.lr_decay_epochs * steps_per_epoch
    return setup.lr * max(0.0, (total - step) / total)


def majority_dataset(seed: int, setup: MajoritySetup) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One seed's data as :func:`train_majority` uses it: ``(train_counts (N, C),
    train_labels (N,), test_counts (M, C), test_labels (M,))``, drawn with
    ``numpy.random.default_rng(seed)`` (cached)."""
    return _seed_data(seed, setup.length, setup.n_classes, setup.n_sequences, setup.min_margin, setup.train_fraction)


@functools.lru_cache(maxsize=64)
def _seed_data(seed, length, n_classes, n_sequences, min_margin, train_fraction):
    """One seed's data: counts and labels of the training and the test set (numpy RNG of the seed).

    Cached: the three norm variants train on the same data."""
    rng = as_generator("seed", seed)
    counts, labels = partition_majority_data(length, n_classes, n_sequences, min_margin, rng)
    train, test = stratified_split(labels.numpy(), train_fraction, rng)
    return counts[train], labels[train], counts[test], labels[test]


class _Data(NamedTuple):
    train_counts: torch.Tensor  # (S, N_train, C) float32
    train_labels: torch.Tensor  # (S, N_train)
    test_counts: torch.Tensor
    test_labels: torch.Tensor


def _all_data(seeds, setup):
    parts = [majority_dataset(s, setup) for s in seeds]
    train_counts, train_labels, test_counts, test_labels = (torch.stack([p[i] for p in parts]) for i in range(4))
    return _Data(train_counts.float(), train_labels, test_counts.float(), test_labels)


@torch.no_grad()
def _evaluate(params, data, norm, length, limit=0, chunk=5000):
    """Test metrics per seed, each ``(S,)``: loss, accuracy, angle, entropy, score scale;
    computed on the (sequence, class) pairs that occur, weighted by their counts, over
    the first ``limit`` test sequences (0: all)."""
    counts, labels = data.test_counts, data.test_labels
    if limit:
        counts, labels = counts[:, :limit], labels[:, :limit]
    S, n_total, C = counts.shape
    nx, s, w, value = _attention_parts(params, norm)
    sums = {k: torch.zeros(S) for k in ("test_loss", "test_accuracy", "entropy")}
    for lo in range(0, n_total, chunk):
        m, y = counts[:, lo:lo + chunk], labels[:, lo:lo + chunk]
        pairs, weight = _present_pairs(m)
        cls, seq = pairs % C, pairs // C
        h = _attention_output(m, w, value, pairs) + params["E"].gather(1, cls[..., None].expand(-1, -1, nx.shape[-1]))
        logits = _linear(_feed_forward(params, h + params["b_O"][:, None]), params["E"])  # (S, P, C)
        target = y.gather(1, seq)
        ce = F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), reduction="none").view(S, -1)
        sums["test_loss"] += (ce * weight).sum(1)
        sums["test_accuracy"] += ((logits.argmax(-1) == target) * weight).sum(1)
        mk = m.gather(1, seq[..., None].expand(-1, -1, C))  # (S, P, C): the counts the pair's query sees
        a = w.gather(1, cls[..., None].expand(-1, -1, C)) * mk
        a = a / a.sum(-1, keepdim=True)  # class a's total attention on each class b
        ent = -(a * torch.log(a.clamp_min(1e-30) / mk.clamp_min(1.0))).sum(-1) / math.log(length)
        sums["entropy"] += (ent * weight).sum(1)
    positions = counts.sum((1, 2))
    out = {k: (v / positions).numpy().astype(float) for k, v in sums.items()}
    u = effective_queries(params, nx)  # (S, C, d)
    reach = u - u.mean(-1, keepdim=True) if norm == "layernorm" else u  # what the keys can see of u
    per_class = {"angle": angle_to_ones(u), "score_scale": reach.norm(dim=-1) * nx.norm(dim=-1) / math.sqrt(u.shape[-1])}
    class_share = counts.sum(1) / positions[:, None]  # (S, C): positions holding each class
    for key, value in per_class.items():
        out[key] = (value * class_share).sum(-1).numpy().astype(float)
    return out


def train_majority(
    norm: str,
    seeds: Sequence[int],
    setup: MajoritySetup = MajoritySetup(),
    *,
    store: CheckpointStore | None = None,
    progress: bool = False,
    threads: int = 1,
    continued: bool = False,
) -> MajorityRun:
    """Train one model per seed (all seeds at once) as the original does; see the module docstring.

    Seed ``s`` draws its data from ``numpy.random.default_rng(s)`` and its
    initial weights and epoch permutations from ``torch.Generator().manual_seed(s)``,
    so the same seed gives the same data and initial weights under every norm
    variant. Curves are recorded at step 0, every ``eval_every`` steps and at the
    end. With a ``store`` the whole training state (parameters, Adam, generators,
    step, curves) is saved every ``checkpoint_every`` steps under a key holding
    the variant, the seeds and the set-up, and a rerun resumes from it.

    ``threads``: PyTorch intra-op threads during the call (restored after).

    ``continued``: a longer run that continues the run of the same set-up (a run to fewer steps,
    whose checkpoint it starts from when it has none of its own) and keeps its checkpoints under a
    key of its own, so that the shorter run's state at its last step stays in the store: the same
    curves as one run to ``setup.steps``, and the shorter run still resumable.
    """
    _check_variant(norm)
    if len(seeds) == 0:
        raise fail("seeds", seeds, "a non-empty list of integers", "is empty")
    seeds = [check_int("seed", s, low=0, high=2**63 - 1) for s in seeds]
    if not isinstance(setup, MajoritySetup):
        raise fail("setup", setup, "a MajoritySetup", "has the wrong type")
    with torch_threads(threads):
        return _Trainer(norm, seeds, setup, store or CheckpointStore(None), progress, continued).run()


class _Trainer:
    """The training loop of :func:`train_majority`, with its checkpointable state."""

    def __init__(self, norm, seeds, setup, store, progress, continued=False):
        self.norm, self.seeds, self.setup, self.store, self.progress = norm, seeds, setup, store, progress
        self.key = {"what": "majority", "norm": norm, "seeds": list(seeds), **asdict(setup)}
        self.key.pop("steps")  # a run stopped at step k is the start of any longer run
        self.key.pop("eval_every"), self.key.pop("checkpoint_every")
        # a continued run starts from the shorter run's checkpoint and keeps its own beside it
        self.start_key, self.key = (self.key, {**self.key, "continued": True}) if continued else (None, self.key)
        self.data = _all_data(seeds, setup)
        self.n_train = self.data.train_counts.shape[1]
        self.per_epoch = math.ceil(self.n_train / min(setup.batch, self.n_train))

    def _fresh(self):
        gens = [as_torch_generator("seed", s) for s in self.seeds]
        self.params = init_majority_params(self.setup.n_classes, self.setup.d, gens)
        self.gens, self.step, self.perm, self.frozen = gens, 0, None, torch.zeros(len(self.seeds), dtype=torch.bool)
        self.record = {k: [] for k in ("steps", "lr", *_CURVES)}
        self.running, self.n_running, self.stopped = 0.0, 0, np.full(len(self.seeds), -1)

    def _state(self):
        return {"params": {k: v.detach().clone() for k, v in self.params.items()}, "opt": self.opt.state_dict(),
                "gens": [g.get_state() for g in self.gens], "step": self.step,
                "perm": None if self.perm is None else self.perm.to(torch.int32),  # half the file; indices < 2^31
                "frozen": self.frozen.clone(), "record": self.record, "running": self.running,
                "n_running": self.n_running, "stopped": self.stopped.copy()}

    def _restore(self, state):
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v)
        self.opt.load_state_dict(state["opt"])
        for g, s in zip(self.gens, state["gens"]):
            g.set_state(s)
        for k in ("step", "frozen", "record", "running", "n_running", "stopped"):
            setattr(self, k, state[k])
        self.perm = None if state["perm"] is None else state["perm"].long()  # int64 in older checkpoints

    def _batch(self):
        """The next mini-batch of every seed: the epoch's permutation, in order."""
        b = min(self.setup.batch, self.n_train)
        within = self.step % self.per_epoch
        if within == 0 or self.perm is None:
            self.perm = torch.stack([torch.randperm(self.n_train, generator=g) for g in self.gens])
        idx = self.perm[:, within * b:(within + 1) * b]
        counts = self.data.train_counts.gather(1, idx[..., None].expand(-1, -1, self.setup.n_classes))
        return counts, self.data.train_labels.gather(1, idx)

    def _record(self, lr):
        metrics = _evaluate(self.params, self.data, self.norm, self.setup.length, self.setup.eval_sequences)
        self.record["steps"].append(self.step)
        self.record["lr"].append(lr)
        self.record["loss"].append((self.running / max(self.n_running, 1)).numpy().astype(float)
                                   if self.n_running else np.full(len(self.seeds), np.nan))
        self.running, self.n_running = 0.0, 0
        for k, v in metrics.items():
            self.record[k].append(v)
        hit = (metrics["test_accuracy"] >= self.setup.stop_at_accuracy) & ~self.frozen.numpy()
        self.stopped[hit] = self.step
        self.frozen |= torch.from_numpy(hit)

    def run(self) -> MajorityRun:
        self._fresh()
        self.opt = torch.optim.Adam(self.params.values(), lr=self.setup.lr)
        saved = self.store.load("majority", self.key)
        if saved is None and self.start_key is not None:  # the run this one continues
            saved = self.store.load("majority", self.start_key)
            saved = saved if saved is not None and saved["step"] <= self.setup.steps else None
        if saved is not None and saved["step"] > self.setup.steps:  # a longer run's checkpoint: leave it alone
            self.store = CheckpointStore(None)
        elif saved is not None:
            self._restore(saved)
        bar = progress_bar(self.progress, self.setup.steps, self.step, f"majority, {self.norm}")
        if self.step == 0 and not self.record["steps"]:
            self._record(majority_lr(0, self.setup, self.per_epoch))
        while self.step < self.setup.steps:
            self._train_step()
            bar.update(1)
            if self.step % self.setup.eval_every == 0 or self.step == self.setup.steps:
                self._record(majority_lr(self.step, self.setup, self.per_epoch))
            if self.step % self.setup.checkpoint_every == 0 or self.step == self.setup.steps:
                self.store.save("majority", self.key, self._state())
        bar.close()
        return self._result()

    def _train_step(self):
        lr = majority_lr(self.step, self.setup, self.per_epoch)
        for group in self.opt.param_groups:
            group["lr"] = lr
        counts, labels = self._batch()
        loss = majority_loss(self.params, counts, labels, self.norm)
        self.running, self.n_running = self.running + loss.detach(), self.n_running + 1
        snapshot = {k: v.detach()[self.frozen].clone() for k, v in self.params.items()} if self.frozen.any() else None
        self.opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        self.opt.step()
        if snapshot is not None:  # stopped seeds keep their weights
            with torch.no_grad():
                for k, v in self.params.items():
                    v[self.frozen] = snapshot[k]
        self.step += 1

    def _result(self) -> MajorityRun:
        arrays = {k: np.asarray(v, dtype=float) for k, v in self.record.items()}
        final = _evaluate(self.params, self.data, self.norm, self.setup.length)
        with torch.no_grad():
            keys = attention_norm(self.params["E"], self.norm)
            queries = effective_queries(self.params, keys) / math.sqrt(self.setup.d)  # the original's qQK
            outputs, weights = value_path_outputs(self.params, self.data.test_counts[:, :SPECTRUM_SEQUENCES], self.norm)
        return MajorityRun(
            norm=self.norm, seeds=tuple(self.seeds), setup=self.setup, steps=arrays["steps"].astype(int),
            lr=arrays["lr"], **{k: arrays[k].T.copy() for k in _CURVES}, stopped=self.stopped.copy(),
            keys=keys.numpy().astype(float), queries=queries.numpy().astype(float),
            n_train=self.n_train, n_test=int(self.data.test_counts.shape[1]),
            final={k: v.copy() for k, v in final.items()}, value_spectrum=value_spectrum(outputs, weights),
        )


def _stack_runs(runs: Sequence[MajorityRun]) -> MajorityRun:
    """One run of all seeds from runs of the same variant and set-up on disjoint seeds."""
    stack = {k: np.concatenate([getattr(r, k) for r in runs]) for k in (*_CURVES, "stopped", "keys", "queries")}
    if all(r.value_spectrum is not None for r in runs):
        stack["value_spectrum"] = np.concatenate([r.value_spectrum for r in runs])
    final = {k: np.concatenate([r.final[k] for r in runs]) for k in runs[0].final}
    return replace(runs[0], seeds=tuple(s for r in runs for s in r.seeds), final=final, **stack)


def train_majority_per_seed(norm: str, seeds: Sequence[int], setup: MajoritySetup = MajoritySetup(),
                            **kwargs) -> MajorityRun:
    """Reference: the same training, one seed at a time (a plain loop).

    Gives the same curves as :func:`train_majority` up to float rounding; the
    benchmark times the two against each other.
    """
    return _stack_runs([train_majority(norm, [s], setup, **kwargs) for s in seeds])


def train_majority_groups(norms: Sequence[str], seeds: Sequence[int], setup: MajoritySetup = MajoritySetup(), *,
                          group_size: int = 5, store: CheckpointStore | None = None, progress: bool = False,
                          threads: int = 1, workers: int = 1, continued: bool = False) -> dict[str, MajorityRun]:
    """:func:`train_majority` for every variant in ``norms``, the seeds in groups of
    ``group_size`` (groups outer, variants inner), each group checkpointed under
    its own key. The same result as one call per variant, up to float rounding;
    a long run then completes group by group, and the first groups are reusable
    by a run with fewer seeds. Returns ``{norm: MajorityRun}``.

    ``workers > 1`` trains that many (group, variant) units at once, each in its
    own process with ``threads`` threads: the same numbers as one after the other
    (every unit is a separate training), in less wall time on several cores.
    ``continued``: as in :func:`train_majority`, for every unit.
    """
    check_int("group_size", group_size, low=1)
    check_int("workers", workers, low=1)
    for norm in norms:
        _check_variant(norm)
    groups = [list(seeds[i:i + group_size]) for i in range(0, len(seeds), group_size)]
    units = [(norm, group, setup, store, progress, threads, continued) for group in groups for norm in norms]
    done = map_processes(_train_unit, units, workers, progress=progress, desc="majority")
    parts = {norm: [run for (n, *_), run in zip(units, done) if n == norm] for norm in norms}
    return {norm: _stack_runs(runs) for norm, runs in parts.items()}


def train_width_sweep(plan: dict[str, Sequence[int]], seeds: Sequence[int], setup: MajoritySetup = MajoritySetup(), *,
                      group_size: int = 5, store: CheckpointStore | None = None, progress: bool = False,
                      threads: int = 1, workers: int = 1) -> dict[tuple[str, int], MajorityRun]:
    """:func:`train_majority` of every variant at every width of ``plan`` (``{norm: [d, ...]}``, e.g.
    ``width_plan``), ``setup`` with its width replaced, the seeds in checkpointed groups of
    ``group_size`` as in :func:`train_majority_groups` (each (variant, width, group) under its own
    key: a stopped sweep resumes, and a sweep with more widths or seeds reuses what is done).
    Seed ``s`` gives every variant and width the same data. Returns ``{(norm, d): MajorityRun}``."""
    check_int("group_size", group_size, low=1)
    check_int("workers", workers, low=1)
    for norm in plan:
        _check_variant(norm)
    groups = [list(seeds[i:i + group_size]) for i in range(0, len(seeds), group_size)]
    cells = [(norm, check_int("d", d, low=2)) for norm, dims in plan.items() for d in dims]
    units = [(norm, group, replace(setup, d=d), store, progress, threads, False) for group in groups
             for norm, d in cells]
    done = map_processes(_train_unit, units, workers, progress=progress, desc="majority widths")
    return {(norm, d): _stack_runs([run for (n, _, s, *_), run in zip(units, done) if n == norm and s.d == d])
            for norm, d in cells}


def _train_unit(unit) -> MajorityRun:
    norm, group, setup, store, progress, threads, continued = unit  # a worker's bar goes to its own stderr
    return train_majority(norm, group, setup, store=store, progress=progress, threads=threads, continued=continued)


def steps_to_reach(steps: np.ndarray, curve: np.ndarray, threshold: float) -> np.ndarray:
    """First recorded step at which ``curve <= threshold``, per seed; NaN if never.

    ``steps: (T,)``, ``curve: (S, T)`` -> ``(S,)`` float.
    """
    curve = np.asarray(curve, dtype=float)
    if curve.ndim != 2 or curve.shape[1] != len(steps):
        raise fail("curve", shape_of(curve), f"(S, T={len(steps)})", "has the wrong shape")
    hit = curve <= threshold
    first = np.where(hit.any(1), hit.argmax(1), -1)
    return np.where(first >= 0, np.asarray(steps, dtype=float)[first], np.nan)
