"""Benchmark: one Adam step of the majority model at the original's sizes, three ways.

10 seeds, C = 20 classes, length n = 50, d = 8, mini-batches of 6,000 sequences
of the original's partition data, LayerNorm variant, float32, CPU, one thread,
CPU time (``time.process_time``: the machine is shared). The reference is the
plain model (``majority_forward`` on tokens, n queries and keys per sequence)
trained one seed at a time. The library trains the count-vector form
(``majority_loss``: C queries and keys, exact because the model has no
positional encoding) on the (sequence, class) pairs that occur, all seeds
stacked on one axis. The middle row is the count form on every class. All three
are checked to give the same loss before the timings are trusted. The last line
estimates the CPU time of the ``paper`` parameter set of chapter 2.
"""

import time

import numpy as np
import torch
import torch.nn.functional as F

from attention_geometry.majority import (
    MajoritySetup,
    counts_to_tokens,
    init_majority_params,
    majority_dataset,
    majority_forward,
    majority_forward_counts,
    majority_loss,
)

SEEDS, BATCH, REPEATS, TOKEN_SEEDS = list(range(10)), 6000, 5, 2
SETUP = MajoritySetup()


def token_loss(params, tokens, labels):
    logits = majority_forward(params, tokens, "layernorm").logits  # (S, N, n, C)
    C = logits.shape[-1]
    target = labels[:, :, None].expand(tokens.shape)
    return F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), reduction="none").view(len(tokens), -1).mean(-1)


def all_classes_loss(params, counts, labels):
    logits = majority_forward_counts(params, counts, "layernorm").logits  # (S, N, C, C)
    S, N, C, _ = logits.shape
    ce = F.cross_entropy(logits.reshape(-1, C), labels[:, :, None].expand(S, N, C).reshape(-1),
                         reduction="none").view(S, N, C)
    return (ce * counts).sum((1, 2)) / counts.sum((1, 2))


def pairs_loss(params, counts, labels):
    return majority_loss(params, counts, labels, "layernorm")


def time_steps(loss_fn, params, data, labels):
    opt = torch.optim.Adam(params.values(), lr=1e-3)
    t = time.process_time()
    for _ in range(REPEATS):
        opt.zero_grad(set_to_none=True)
        loss_fn(params, data, labels).sum().backward()
        opt.step()
    return (time.process_time() - t) / REPEATS


def main():
    torch.set_num_threads(1)
    data = [majority_dataset(s, SETUP) for s in SEEDS]
    counts = torch.stack([d[0][:BATCH] for d in data]).float()
    labels = torch.stack([d[1][:BATCH] for d in data])
    fresh = lambda seeds: init_majority_params(20, 8, [torch.Generator().manual_seed(s) for s in seeds])  # noqa: E731
    p = fresh(SEEDS)
    tokens = torch.stack([counts_to_tokens(c.long()) for c in counts[:TOKEN_SEEDS]])
    with torch.no_grad():
        ref = token_loss({k: v[:TOKEN_SEEDS] for k, v in p.items()}, tokens, labels[:TOKEN_SEEDS])
        err_all = float((all_classes_loss(p, counts, labels)[:TOKEN_SEEDS] - ref).abs().max())
        err_pairs = float((pairs_loss(p, counts, labels)[:TOKEN_SEEDS] - ref).abs().max())
    one_seed = [time_steps(token_loss, fresh([s]), tokens[i:i + 1], labels[i:i + 1]) for i, s in
                enumerate(SEEDS[:TOKEN_SEEDS])]
    rows = [
        ("tokens, per-seed loop (reference)", len(SEEDS) * float(np.mean(one_seed))),
        ("counts, every class, seeds batched", time_steps(all_classes_loss, fresh(SEEDS), counts, labels)),
        ("counts, occurring pairs, batched (library)", time_steps(pairs_loss, fresh(SEEDS), counts, labels)),
    ]
    size = f"{len(SEEDS)} seeds x {BATCH} seqs, n=50, C=20, d=8"
    ref_t = rows[0][1]
    print(f"{'operation':<46} {'size':<36} {'CPU s/step':>10} {'ratio vs reference':>19}")
    for name, t in rows:
        print(f"{name:<46} {size:<36} {t:>10.3f} {ref_t / t:>19.1f}")
    print(f"(the reference is timed on {TOKEN_SEEDS} seeds and scaled to {len(SEEDS)})")
    print(f"max |loss difference| vs tokens: every class {err_all:.1e}, occurring pairs {err_pairs:.1e}")
    per_step = rows[-1][1]
    print(f"paper preset estimate: 3 variants x {SETUP.steps:,} steps x {per_step:.3f} s = "
          f"{3 * SETUP.steps * per_step / 3600:.1f} h of CPU time, plus evaluations and the d = 3 runs")


if __name__ == "__main__":
    main()
