"""Early training with the profile measured: the loss falls, and a run killed midway
resumes from its checkpoint to exactly the numbers of an uninterrupted run."""

import numpy as np
import pytest
import torch

import attention_geometry as ag
from attention_geometry.checkpoint import CheckpointStore


def _setup():
    model = ag.build_decoder("qwen2", 1, 16, 2, 1, context=16, seed=0, init_std=0.1)
    g = torch.Generator().manual_seed(0)
    pool = torch.randint(0, 8, (4, 16), generator=g)  # a tiny vocabulary: learnable in a few steps
    held = torch.randint(0, 8, (2, 16), generator=g)
    return model, pool, held


KW = dict(steps=12, eval_steps=[0, 6, 12], k=2, seed=1, lr=1e-2, lr_final=1e-3)


def test_training_lowers_the_loss_and_records_profiles():
    model, pool, held = _setup()
    rec = ag.train_and_profile(model, pool, held, **KW)
    assert rec.steps.tolist() == [0, 6, 12] and rec.profiles.shape == (3, 2, 16)
    assert rec.losses[-3:].mean() < rec.losses[:3].mean()
    assert not any(p.requires_grad for p in model.parameters())  # frozen again afterwards


def test_killed_training_resumes_exactly(tmp_path):
    model, pool, held = _setup()
    reference = ag.train_and_profile(model, pool, held, **KW)

    class Killed(Exception):
        pass

    class Dying(CheckpointStore):
        saves = 0

        def save(self, name, key, state):
            super().save(name, key, state)
            Dying.saves += 1
            if Dying.saves == 2:  # killed right after the checkpoint at step 6
                raise Killed

    model, pool, held = _setup()
    with pytest.raises(Killed):
        ag.train_and_profile(model, pool, held, store=Dying(tmp_path), key={"m": 1}, **KW)
    model, pool, held = _setup()  # a fresh process: fresh weights, the checkpoint on disk
    resumed = ag.train_and_profile(model, pool, held, store=CheckpointStore(tmp_path), key={"m": 1}, **KW)
    np.testing.assert_allclose(resumed.profiles, reference.profiles, rtol=1e-6)
    np.testing.assert_allclose(resumed.losses, reference.losses, rtol=1e-6)


def test_bad_eval_steps_raise():
    model, pool, held = _setup()
    with pytest.raises(ValueError, match="eval step"):
        ag.train_and_profile(model, pool, held, steps=3, eval_steps=[5], k=1, seed=0)
