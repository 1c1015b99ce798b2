"""Chapter 8, *Jacobians of real decoders* (``book/08_jacobians.md``): its parameters."""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

__all__ = ["JacobiansParams"]


class JacobiansParams(ChapterParams):
    """The parameters of chapter ``jacobians``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_layers: int = Field(24, ge=1, le=128, description="depth H of the Qwen2-shaped decoders (the paper: 24)")
    width: int = Field(64, ge=8, le=4096, description="width d of the Qwen2-shaped decoders (the paper: 896)")
    n_heads: int = Field(4, ge=1, le=64, description="query heads of the Qwen2-shaped decoders (the paper: 14)")
    n_kv_heads: int = Field(2, ge=1, le=64, description="key/value heads of the Qwen2-shaped decoders (the paper: 2)")
    seq_len: int = Field(256, ge=8, le=32_768,
        description="sequence length L of the Qwen2-shaped profiles (the paper: 2048)")
    init_stds: list[Annotated[float, Field(gt=0.0, le=1.0)]] = Field([0.02], min_length=1, max_length=4,
        description="initialisation scales sigma of the Qwen2-shaped decoders (transformers and the paper: 0.02)")
    width_standin: bool = Field(True,
        description="add the stand-in sigma = 0.02 sqrt(896/d) (768 for GPT-2), which gives a width-d decoder the "
                    "paper's score spread")
    gpt2_layers: int = Field(12, ge=1, le=128, description="depth of the GPT-2-shaped decoder (GPT-2 small: 12)")
    gpt2_width: int = Field(64, ge=8, le=4096, description="width of the GPT-2-shaped decoder (GPT-2 small: 768)")
    gpt2_heads: int = Field(4, ge=1, le=64, description="heads of the GPT-2-shaped decoder (GPT-2 small: 12)")
    gpt2_seq_len: int = Field(256, ge=8, le=1024,
        description="sequence length of the GPT-2-shaped profiles (GPT-2: 1024)")
    n_sequences: int = Field(16, ge=4, le=10_000, description="sequences per random-init profile (the paper: 200)")
    probes: int = Field(2, ge=1, le=4096, description="orthogonal probes per sequence (the estimator's k)")
    batch_size: int = Field(16, ge=1, le=1024,
        description="sequences per forward/backward pass (memory against speed)")
    n_boot: int = Field(40, ge=10, le=100_000, description="bootstrap replicates over sequences for every interval")
    mc_draws: int = Field(4000, ge=10, le=1_000_000,
        description="Monte Carlo draws of the linear model (derived expectation check)")
    est_layers: int = Field(4, ge=1, le=24, description="depth of the small decoder of the estimator study")
    est_width: int = Field(32, ge=8, le=256, description="width of the small decoder of the estimator study")
    est_seq_len: int = Field(64, ge=8, le=1024, description="sequence length of the estimator study")
    est_k: int = Field(8, ge=1, le=256, description="probes per orthogonal estimate in the estimator study")
    n_probe_draws: int = Field(200, ge=8, le=100_000,
        description="Gaussian probes / orthogonal draws in the estimator study")
    pathway_widths: list[Annotated[int, Field(ge=8, le=4096)]] = Field([16, 32, 64, 128], min_length=1, max_length=8,
        description="widths of the score-pathway study (multiples of 8; at least 3 for a slope)")
    pathway_layers: int = Field(4, ge=1, le=48, description="depth of the score-pathway study")
    pathway_seq_len: int = Field(64, ge=8, le=4096, description="sequence length of the score-pathway study")
    heads_list: list[Annotated[int, Field(ge=1, le=64)]] = Field([1, 2, 4, 8], min_length=1, max_length=8,
        description="head counts of the heads study (each dividing heads_width; at least 3)")
    heads_width: int = Field(32, ge=8, le=1024, description="width of the heads study")
    heads_layers: int = Field(4, ge=1, le=48, description="depth of the heads study")
    heads_seq_len: int = Field(32, ge=4, le=1024, description="sequence length of the heads study")
    n_inits: int = Field(8, ge=3, le=1000, description="initialisations per head count (verdicts decide on 8 or more)")
    pretrained_sequences: int = Field(16, ge=4, le=1024,
        description="text windows fed to SmolLM2 and its random-init twin")
    pretrained_seq_len: int = Field(48, ge=16, le=8192, description="tokens per window for SmolLM2 (the paper: 2048)")
    pretrained_probes: int = Field(1, ge=1, le=1024,
        description="orthogonal probes per window for SmolLM2 and its twin")
    chunk_len: int = Field(12, ge=4, le=4096, description="tokens per chunk of the chunked windows (the paper: 300)")
    toy_layers: int = Field(4, ge=1, le=48, description="depth of the toy decoder trained for the paper's Fig. 3")
    toy_width: int = Field(64, ge=8, le=1024, description="width of the toy decoder (a multiple of 8)")
    toy_seq_len: int = Field(64, ge=8, le=4096, description="bytes per training and held-out window of the toy")
    toy_steps: int = Field(100, ge=1, le=100_000, description="training steps of the toy (the paper: 100)")
    toy_eval_sequences: int = Field(8, ge=2, le=1024,
        description="held-out windows measured during training (the paper: 10)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="where the decoders run")
    n_draws: int = Field(8, ge=2, le=1024,
        description="independent weight draws of every random-init decoder (and of SmolLM2's twin), the sequences "
                    "spread over them; verdicts decide on 8 or more")

    @model_validator(mode="after")
    def _heads_fit_the_widths(self):
        # the Qwen2-shaped decoders: whole heads, each of even width (the rotary embedding turns pairs of
        # coordinates), and whole groups of query heads per key/value head
        if self.width % (2 * self.n_heads):
            raise self.reject("width", f"is not a multiple of 2 n_heads = {2 * self.n_heads}", "a multiple of 2 n_heads")
        if self.n_heads % self.n_kv_heads:
            raise self.reject("n_heads", f"is not a multiple of n_kv_heads = {self.n_kv_heads}",
                              "a multiple of n_kv_heads")
        if self.gpt2_width % self.gpt2_heads:
            raise self.reject("gpt2_width", f"is not a multiple of gpt2_heads = {self.gpt2_heads}",
                              "a multiple of gpt2_heads")
        if any(self.heads_width % h for h in self.heads_list):
            raise self.reject("heads_list", "holds a head count that does not divide heads_width = "
                              f"{self.heads_width}", "head counts that divide heads_width")
        if any(w % 8 for w in self.pathway_widths):
            raise self.reject("pathway_widths", "holds a width that is not a multiple of 8", "multiples of 8")
        if self.toy_width % 8:
            raise self.reject("toy_width", "is not a multiple of 8", "a multiple of 8")
        # the sequences are spread over the draws, and the draws left in when one is left out (the
        # jackknife over draws) keep 4 sequences for the noise ceiling and the late minimum
        if self.n_draws > min(self.n_sequences, self.pretrained_sequences):
            raise self.reject("n_draws", "is more than n_sequences or pretrained_sequences",
                              "at most min(n_sequences, pretrained_sequences)")
        if self.n_sequences - -(-self.n_sequences // self.n_draws) < 4:
            raise self.reject("n_draws", f"leaves fewer than 4 of n_sequences = {self.n_sequences} when one draw "
                              "is left out", "a number of draws that leaves 4 sequences when one is left out")
        return self

    smoke = {"n_layers": 2, "width": 16, "n_heads": 2, "n_kv_heads": 1, "seq_len": 16, "gpt2_layers": 2,
             "gpt2_width": 16, "gpt2_heads": 2, "gpt2_seq_len": 16, "n_sequences": 8, "probes": 1,
             "batch_size": 4, "n_boot": 10, "mc_draws": 50, "est_layers": 1, "est_width": 8,
             "est_seq_len": 8, "est_k": 2, "n_probe_draws": 8, "pathway_widths": [16, 32, 64],
             "pathway_layers": 1, "pathway_seq_len": 8, "heads_list": [1, 2, 4], "heads_width": 16,
             "heads_layers": 1, "heads_seq_len": 8, "n_inits": 3, "pretrained_sequences": 4,
             "pretrained_seq_len": 24, "pretrained_probes": 1, "chunk_len": 8, "toy_layers": 1,
             "toy_width": 16, "toy_seq_len": 16, "toy_steps": 4, "toy_eval_sequences": 2, "n_draws": 2}
    # The paper's shapes (Qwen2-0.5B; GPT-2 small), sigma = 0.02, 16 sequences: the largest
    # faithful subset on 2 CPU cores (the paper: exact profiles of 200 sequences).
    presets = {
        "paper": {"n_layers": 24, "width": 896, "n_heads": 14, "n_kv_heads": 2, "seq_len": 2048,
                  "init_stds": [0.02], "width_standin": True, "gpt2_layers": 12,
                  "gpt2_width": 768, "gpt2_heads": 12, "gpt2_seq_len": 1024, "n_sequences": 16,
                  "probes": 4, "batch_size": 1, "n_boot": 200, "mc_draws": 20_000,
                  "pathway_widths": [64, 128, 256, 512, 896], "n_inits": 16,
                  "pretrained_sequences": 16, "pretrained_seq_len": 2048, "pretrained_probes": 2,
                  "chunk_len": 300, "toy_layers": 12, "toy_width": 128, "toy_seq_len": 512,
                  "toy_steps": 100, "toy_eval_sequences": 10},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(69, (
        (0.4, {"n_layers": 1, "width": 2, "seq_len": 2, "n_sequences": 1, "probes": 1}),
        (0.2, {"pretrained_sequences": 1, "pretrained_seq_len": 2, "pretrained_probes": 1}),
        (0.1, {"toy_steps": 1, "toy_width": 2}),
        (0.1, {"n_probe_draws": 1, "est_seq_len": 1}),
    ))
