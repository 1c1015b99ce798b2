r"""Early training of a random-init decoder, with its Jacobian profile measured as it goes.

The paper's Fig. 3 follows the influence profile of Qwen2-0.5B over its first
100 training steps (its App. G: AdamW, learning rate :math:`5\cdot10^{-4}`
cosine-decayed to :math:`5\cdot10^{-5}`, weight decay 0.1, gradient clipping at
1, batch size 1, next-token cross-entropy on random windows of a training
pool; the profile measured on held-out sequences before each update).
:func:`train_and_profile` does the same for any decoder built by
:func:`attention_geometry.jacobians.decoders.build_decoder`, with the output head tied to
the input embeddings (as Qwen2-0.5B's), and measures the profile at the steps
asked for with :func:`attention_geometry.jacobians.profiles.sequence_profiles`.

The whole training state (weights, optimiser, schedule, random state, losses,
profiles so far) is checkpointed in a
:class:`~attention_geometry.checkpoint.CheckpointStore` after every
measurement, so a killed run resumes where it stopped.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .._checks import check_float, check_int, fail
from ..checkpoint import CheckpointStore
from .profiles import sequence_profiles

__all__ = ["lm_loss", "TrainingRecord", "train_and_profile"]


def lm_loss(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy of a base decoder with its output head tied to the input
    embeddings (logits :math:`h E^\\top`); ``ids: (batch, L)``."""
    h = model(input_ids=ids, use_cache=False).last_hidden_state
    logits = h @ model.get_input_embeddings().weight.T
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


@dataclass(frozen=True)
class TrainingRecord:
    """``steps: (m,)`` the steps measured (0 = before any update); ``profiles: (m, n, L)``
    each held-out sequence's estimate of :math:`\\rho(j)^2` there; ``losses: (steps,)``
    the training loss of every update."""

    steps: np.ndarray
    profiles: np.ndarray
    losses: np.ndarray


def train_and_profile(model: torch.nn.Module, train_ids: torch.Tensor, eval_ids: torch.Tensor, *, steps: int,
                      eval_steps: Sequence[int], k: int, seed: int, lr: float = 5e-4, lr_final: float = 5e-5,
                      weight_decay: float = 0.1, clip: float = 1.0, store: CheckpointStore | None = None,
                      key: dict | None = None) -> TrainingRecord:
    """Train ``model`` (in place) for ``steps`` AdamW updates on windows drawn from
    ``train_ids: (pool, L)`` (batch 1, uniform, seeded by ``seed``) and measure the
    profile of ``eval_ids: (n, L)`` with ``k`` probes at each step in ``eval_steps``
    (0 = before the first update). ``key`` must describe the model and the data;
    the training settings are added to it."""
    steps = check_int("steps", steps)
    k, seed = check_int("k", k), check_int("seed", seed, low=0)
    lr, lr_final = check_float("lr", lr, low=0.0, low_open=True), check_float("lr_final", lr_final, low=0.0)
    weight_decay, clip = check_float("weight_decay", weight_decay, low=0.0), check_float("clip", clip, low=0.0,
                                                                                          low_open=True)
    eval_steps = sorted({check_int("eval step", s, low=0, high=steps) for s in eval_steps})
    if not eval_steps:
        raise fail("eval_steps", eval_steps, "at least one step in 0..steps")
    store = store or CheckpointStore(None)
    full_key = {**(key or {}), "steps": steps, "eval_steps": eval_steps, "k": k, "seed": seed, "lr": lr,
                "lr_final": lr_final, "weight_decay": weight_decay, "clip": clip,
                "pool": list(train_ids.shape), "eval": list(eval_ids.shape)}
    model.requires_grad_(True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=lr_final)
    gen = torch.Generator().manual_seed(seed)
    state = {"step": 0, "losses": [], "profiles": [], "measured": []}
    saved = store.load("training", full_key)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        gen.set_state(saved["gen"])
        state = saved["state"]

    def measure(step):
        model.eval()
        with torch.no_grad():
            inputs = model.get_input_embeddings()(eval_ids)
        vals = sequence_profiles(model, inputs, k, seed=seed + 1, batch_size=len(eval_ids))
        state["profiles"].append(vals.mean(1))
        state["measured"].append(step)
        store.save("training", full_key, {"model": model.state_dict(), "opt": opt.state_dict(),
                                          "sched": sched.state_dict(), "gen": gen.get_state(), "state": state})

    while True:
        step = state["step"]
        if step in eval_steps and step not in state["measured"]:
            measure(step)
        if step == steps:
            break
        model.train()
        ids = train_ids[torch.randint(len(train_ids), (1,), generator=gen)]
        loss = lm_loss(model, ids)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        sched.step()
        state["losses"].append(float(loss.detach()))
        state["step"] = step + 1
    model.eval().requires_grad_(False)
    return TrainingRecord(steps=np.array(state["measured"]), profiles=np.stack(state["profiles"]),
                          losses=np.array(state["losses"]))
