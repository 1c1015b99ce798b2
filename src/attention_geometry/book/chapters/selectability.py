"""Chapter 3, *Scaling makes every key selectable* (``book/03_selectability.md``): its parameters."""

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

__all__ = ["SelectabilityParams"]


class SelectabilityParams(ChapterParams):
    """The parameters of chapter ``selectability``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    grid_n_min: int = Field(3, ge=1, le=500,
        description="smallest number of keys n in the heat map (the original: 3)")
    grid_n_max: int = Field(60, ge=1, le=500,
        description="largest number of keys n in the heat map (the original: 60)")
    grid_d_min: int = Field(3, ge=2, le=200, description="smallest key dimension d in the heat map (the original: 3)")
    grid_d_max: int = Field(15, ge=2, le=200,
        description="largest key dimension d in the heat map (the original: 15)")
    grid_sets: int = Field(100, ge=1, le=10_000, description="random key sets per heat-map cell (the original: 100)")
    check_sets: int = Field(40, ge=4, le=2000,
        description="random sets on which the fast test meets the LP reference")
    growth_sets: int = Field(4, ge=2, le=10_000,
        description="Gaussian sets per size in the growth figure (up to 1,024 keys)")
    tiny_steps: int = Field(450, ge=1, le=1_000_000,
        description="training steps of each tiny decoder (the original: 50,000)")
    tiny_schedule_steps: int = Field(0, ge=0, le=1_000_000,
        description="step at which the learning rate reaches 0 (the original: 50,000); 0: tiny_steps")
    tiny_batch: int = Field(16, ge=1, le=1024, description="sequences per training step (the original: 16)")
    tiny_seq_len: int = Field(128, ge=4, le=1024,
        description="bytes per training sequence (the original: 1,024 tokens)")
    tiny_lr: float = Field(0.01, gt=0.0, le=1.0, description="initial AdamW learning rate (the original: 5e-5)")
    lm_windows: int = Field(64, ge=2, le=100_000,
        description="held-out windows for the language-modelling comparison (the original: 1,000)")
    table_sets: int = Field(24, ge=2, le=100_000,
        description="key sets (held-out windows) for Tables 1-2 (the original: 1,000)")
    table_n_min: int = Field(96, ge=2, le=1024, description="fewest keys per set for Tables 1-2 (the original: 768)")
    table_n_max: int = Field(128, ge=2, le=1024, description="most keys per set for Tables 1-2 (the original: 1,024)")
    short_sets: int = Field(32, ge=2, le=100_000, description="key sets for Table 3 (the original: 1,000)")
    short_n_min: int = Field(8, ge=2, le=1024, description="fewest keys per set for Table 3")
    short_n_max: int = Field(128, ge=2, le=1024, description="most keys per set for Table 3 (the original: 128)")
    pretrained_sequences: int = Field(1, ge=1, le=256, description="text windows measured in SmolLM2")
    pretrained_seq_len: int = Field(600, ge=8, le=2048, description="tokens per window (keys per set) in SmolLM2")

    @model_validator(mode="after")
    def _ranges_are_not_empty(self):
        for low, high in [("grid_n_min", "grid_n_max"), ("grid_d_min", "grid_d_max"), ("table_n_min", "table_n_max"),
                          ("short_n_min", "short_n_max")]:
            if getattr(self, low) > getattr(self, high):
                raise self.reject(low, f"is above {high} = {getattr(self, high)}", f"at most {high}")
        return self

    smoke = {"grid_n_max": 8, "grid_d_max": 5, "grid_sets": 4, "check_sets": 4, "growth_sets": 2, "tiny_steps": 3,
             "tiny_batch": 2, "tiny_seq_len": 32, "lm_windows": 4, "table_sets": 3, "table_n_min": 16,
             "table_n_max": 32, "short_sets": 3, "short_n_min": 8, "short_n_max": 32,
             "pretrained_sequences": 1, "pretrained_seq_len": 16}
    # unselectable_experiments.sh: Fig. 1c-d (unselectable_figure.py), train_GPT2.py at max_steps 50,000
    # (here the first 1,000 steps of that schedule, for each of the two norms: 1.5-1.8 s per step on
    # one core beside another paper run), Tables 1-2 (--min_sample_size 768 --max_sample_size 1024;
    # 300 of the original's 1,000 samples: about 0.3 s per set of 900 keys in d = 8, per layer and
    # model), Table 3 (at most 128 tokens): the largest run that fits about 80 min on 2 cores
    # beside chapter 4's paper run
    presets = {
        "paper": {"grid_n_min": 3, "grid_n_max": 60, "grid_d_min": 3, "grid_d_max": 15, "grid_sets": 100,
                  "growth_sets": 100, "tiny_steps": 1000, "tiny_schedule_steps": 50_000,
                  "tiny_batch": 16, "tiny_seq_len": 1024, "tiny_lr": 5e-5, "lm_windows": 1000,
                  "table_sets": 300, "table_n_min": 768, "table_n_max": 1024, "short_sets": 1000,
                  "short_n_min": 8, "short_n_max": 128},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(116, (
        (0.3, {"grid_sets": 1, "grid_n_max": 2, "grid_d_max": 1}),
        (0.3, {"tiny_steps": 1, "tiny_batch": 1, "tiny_seq_len": 1}),
        (0.2, {"table_sets": 1, "table_n_max": 2}),
        (0.1, {"pretrained_sequences": 1, "pretrained_seq_len": 1}),
    ))
