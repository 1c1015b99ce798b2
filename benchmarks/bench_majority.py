"""Benchmark: one Adam training step of the majority model, four ways.

8 seeds, C = 20 classes, length n = 50, d = 8, 256 sequences per seed and step,
LayerNorm variant, float32, CPU, one thread. The reference is the plain model
(``majority_forward`` on tokens, n queries and keys per sequence) trained one
seed at a time. The library's training uses the count-vector form of the same
model (``majority_forward_counts``: C queries and keys; exact because the model
has no positional encoding) with all seeds stacked on one axis. Both forms are
checked to give the same loss before the timings are trusted. The last row
times whole ``train_majority`` runs (data draws and evaluations included),
seeds batched against seeds in a loop.
"""

import time

import numpy as np
import torch
import torch.nn.functional as F

from attention_geometry.majority import (
    init_majority_params,
    majority_counts,
    majority_data,
    majority_forward,
    majority_forward_counts,
    train_majority,
    train_majority_per_seed,
)

SEEDS, C, N_LEN, D, BATCH, REPEATS = list(range(8)), 20, 50, 8, 256, 20
TRAIN = dict(n_classes=C, length=N_LEN, d=D, min_margin=6, n_train=20_000, batch=BATCH, n_test=500,
             steps=100, lr=1e-2, eval_every=50)


def token_loss(params, tokens, labels):
    logits = majority_forward(params, tokens, "layernorm").logits  # (S, N, n, C)
    target = labels[:, :, None].expand(tokens.shape)
    return F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), reduction="none").view(len(tokens), -1).mean(-1)


def count_loss(params, counts, labels):
    logits = majority_forward_counts(params, counts, "layernorm").logits  # (S, N, C, C)
    S, N = labels.shape
    ce = F.cross_entropy(logits.reshape(-1, C), labels[:, :, None].expand(S, N, C).reshape(-1),
                         reduction="none").view(S, N, C)
    return (ce * counts).sum(-1).div(N_LEN).mean(-1)


def time_steps(loss_fn, params, data, labels):
    opt = torch.optim.Adam(params.values(), lr=1e-3)
    t = time.perf_counter()
    for _ in range(REPEATS):
        opt.zero_grad(set_to_none=True)
        loss_fn(params, data, labels).sum().backward()
        opt.step()
    return (time.perf_counter() - t) / REPEATS


def main():
    torch.set_num_threads(1)
    gens = [torch.Generator().manual_seed(s) for s in SEEDS]
    draws = [majority_data(C, N_LEN, BATCH, g, 6) for g in gens]
    tokens, labels = torch.stack([t for t, _ in draws]), torch.stack([y for _, y in draws])
    counts = majority_counts(tokens, C)
    fresh = lambda: init_majority_params(C, D, [torch.Generator().manual_seed(s) for s in SEEDS])  # noqa: E731
    p = fresh()
    with torch.no_grad():
        err = float((token_loss(p, tokens, labels) - count_loss(p, counts, labels)).abs().max())

    def per_seed(loss_fn, data):
        total = 0.0
        for i in range(len(SEEDS)):
            one = {k: v[i : i + 1].detach().clone().requires_grad_() for k, v in fresh().items()}
            total += time_steps(loss_fn, one, data[i : i + 1], labels[i : i + 1])
        return total

    time_steps(count_loss, fresh(), counts, labels)  # warm-up
    rows = [
        ("step, tokens, per-seed loop (reference)", per_seed(token_loss, tokens)),
        ("step, tokens, seeds batched", time_steps(token_loss, fresh(), tokens, labels)),
        ("step, counts, per-seed loop", per_seed(count_loss, counts)),
        ("step, counts, seeds batched (library)", time_steps(count_loss, fresh(), counts, labels)),
    ]
    size = f"{len(SEEDS)} seeds x {BATCH} seqs, n={N_LEN}, C={C}, d={D}"
    ref = rows[0][1]
    print(f"{'operation':<44} {'size':<38} {'ms/step':>9} {'ratio vs reference':>19}")
    for name, t in rows:
        print(f"{name:<44} {size:<38} {1e3 * t:>9.1f} {ref / t:>19.2f}")
    t = time.perf_counter()
    loop = train_majority_per_seed("layernorm", SEEDS, **TRAIN)
    t_loop = time.perf_counter() - t
    t = time.perf_counter()
    batched = train_majority("layernorm", SEEDS, **TRAIN)
    t_batched = time.perf_counter() - t
    name = f"train_majority, {TRAIN['steps']} steps: loop / batched"
    print(f"{name:<44} {size:<38} {1e3 * t_batched / TRAIN['steps']:>9.1f} {t_loop / t_batched:>19.2f}"
          "   (ratio: per-seed loop time / batched time)")
    print(f"max |loss difference| tokens vs counts: {err:.2e}; "
          f"train_majority batched vs loop: {np.max(np.abs(batched.loss - loop.loss)):.2e}")
    if t_loop / t_batched < 1.2:
        print("note: batching the seeds gives little or no speed-up at this size on this machine; "
              "the gain comes from the count-vector form.")


if __name__ == "__main__":
    main()
