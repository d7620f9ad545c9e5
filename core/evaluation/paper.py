"""Reference numbers of seed 000 (the benchmark specification §2.14), as data.

``PAPER`` values are the paper's (μ*, pooled over 4 seeds, %); ``REGEN`` values are the
released code re-run on regenerated data (§2.14B), the fairer target for a reimplementation.
Keys use the method names of the design card §4.
"""

from __future__ import annotations

__all__ = [
    "GRID_METHODS",
    "PAPER_FORCED",
    "PAPER_GRID",
    "PAPER_NOISE",
    "PAPER_PER_SEED",
    "PAPER_PER_TYPE",
    "PAPER_SELECTIVE",
    "PAPER_SLICES",
    "PAPER_TRAIN_SIZE",
    "REGEN_FORCED",
    "REGEN_PER_QUESTION_DSNBF",
    "REGEN_SELECTIVE",
]

PAPER_FORCED = {
    "random": 30.1, "majority_class": 57.1, "ssb": 79.0, "majority_vote": 69.5, "bcf": 69.8,
    "nbf": 82.1, "dsnbf": 82.3, "abf": 72.0, "source_reachability": 93.2,
}
REGEN_FORCED = {
    "random": 29.8, "majority_class": 57.6, "ssb": 78.5, "majority_vote": 69.1, "bcf": 69.5,
    "nbf": 81.6, "dsnbf": 81.8, "abf": 71.9, "source_reachability": 92.8,
}
# (selective accuracy %, coverage %), per-seed then mean
PAPER_SELECTIVE = {
    "ssb_skip": (81.6, 83.6), "nbf_skip": (88.5, 77.9), "dsnbf_skip": (88.8, 77.2),
    "abf_skip": (83.4, 60.2), "source_reachability_skip": (100.0, 93.2),
}
REGEN_SELECTIVE = {
    "ssb_skip": (81.3, 83.7), "nbf_skip": (86.5, 81.0), "dsnbf_skip": (88.3, 76.3),
    "abf_skip": (81.8, 65.0),
}
PAPER_PER_SEED = {
    "dsnbf": (83.0, 81.4, 82.8, 82.2), "nbf": (82.9, 81.0, 81.7, 82.6),
}
# question family -> {method: %}, μ* pooled
PAPER_PER_TYPE = {
    "identity": {"dsnbf": 96.8, "nbf": 96.8, "ssb": 96.4, "source_reachability": 99.7},
    "arbitration": {"dsnbf": 87.5, "nbf": 86.9, "ssb": 76.7, "source_reachability": 94.1},
    "control": {"dsnbf": 85.7, "nbf": 86.1, "ssb": 86.5, "source_reachability": 96.0},
    "causal": {"dsnbf": 83.1, "nbf": 80.9, "ssb": 76.6, "source_reachability": 95.0},
    "trend": {"dsnbf": 82.2, "nbf": 77.7, "ssb": 76.7, "source_reachability": 90.0},
    "plan_reality": {"dsnbf": 81.6, "nbf": 82.8, "ssb": 81.9, "source_reachability": 94.8},
    "missing_data": {"dsnbf": 77.9, "nbf": 78.6, "ssb": 78.3, "source_reachability": 92.0},
    "annotation": {"dsnbf": 63.5, "nbf": 65.7, "ssb": 60.8, "source_reachability": 83.7},
}
# (full, GT-present, GT-absent) forced %, μ*
PAPER_SLICES = {"dsnbf": (82.3, 85.7, 36.0), "nbf": (82.0, 86.0, 27.7)}
GRID_METHODS = ("dsnbf", "nbf", "abf", "bcf", "majority_vote", "ssb_global",
                "source_reachability")
# (bias_scale, dropout_scale) -> values in GRID_METHODS order, 4-seed mean %
PAPER_GRID = {
    (0.5, 0.5): (84.4, 83.7, 74.5, 71.6, 73.0, 76.2, 93.7),
    (0.5, 1.0): (83.1, 82.7, 74.5, 70.2, 72.4, 77.4, 94.0),
    (0.5, 2.0): (83.6, 83.0, 73.9, 68.3, 71.5, 78.6, 94.1),
    (1.0, 0.5): (84.2, 83.7, 74.3, 71.3, 69.8, 68.9, 92.9),
    (1.0, 1.0): (82.3, 82.0, 72.0, 69.8, 69.5, 70.1, 93.2),
    (1.0, 2.0): (81.4, 80.6, 70.5, 68.0, 68.6, 71.4, 92.8),
    (2.0, 0.5): (84.0, 83.0, 71.3, 70.6, 63.4, 57.3, 91.5),
    (2.0, 1.0): (82.4, 80.7, 70.3, 69.4, 63.0, 58.5, 91.2),
    (2.0, 2.0): (80.8, 79.1, 68.6, 67.9, 62.6, 59.7, 90.5),
}
PAPER_GRID_TAU = 0.77
PAPER_GRID_DSNBF_WINS = (32, 36)
# ε -> (dsnbf, nbf, abf, bcf, majority_vote)
PAPER_NOISE = {
    0.0: (82.3, 82.0, 72.0, 69.8, 69.5), 0.1: (74.8, 75.5, 68.0, 64.8, 65.6),
    0.2: (67.0, 68.5, 63.0, 60.5, 61.0), 0.3: (59.7, 62.3, 58.0, 55.9, 55.9),
    0.5: (42.3, 47.0, 46.4, 44.7, 45.2),
}
NOISE_METHODS = ("dsnbf", "nbf", "abf", "bcf", "majority_vote")
PAPER_TRAIN_SIZE = {"dsnbf": {50: 80.9, 100: 82.0, 150: 82.3, 216: 82.3},
                    "ssb": {50: 78.2, 216: 79.0}, "abf": {216: 71.8}}
REGEN_PER_QUESTION_DSNBF = {
    "A1": 90.4, "A2": 91.5, "A3": 79.8, "B2": 94.0, "B3": 98.1, "C2": 79.2, "C3": 83.8,
    "D1": 66.0, "D2": 96.0, "E1": 81.7, "E2": 84.0, "F1": 73.1, "F2": 70.4, "F3": 88.5,
    "G1": 75.4, "G2": 47.7, "Ctrl1": 84.8, "Ctrl2": 87.9,
}
# GPT-5.4 extraction faithfulness P(μ̂ = μ*), % of (persona, seed, question, source) cells of
# the test split, both-⊥ counted equal (seed 000 §8.8; the benchmark specification §2.10)
PAPER_EXTRACTION = {
    "overall": 93.08,
    "by_source": {"profile_ltm": 91.24, "planner": 96.28, "daily_self_report": 96.20,
                  "objective_log": 86.46, "device_log": 95.20},
    "by_question": {"F2": 81.3, "A2": 83.6},  # the worst two questions
}
__all__ += ["NOISE_METHODS", "PAPER_EXTRACTION", "PAPER_GRID_DSNBF_WINS", "PAPER_GRID_TAU"]
# The μ̂ column of the main forced table (GPT-5.4 extracted test atoms, mixed mode: fit and
# calibrate on μ*, test on μ̂; the benchmark specification §2.14A), pooled %
PAPER_FORCED_EXTRACTED = {
    "random": 30.1, "majority_class": 57.1,  # atom-independent: listed in the μ̂ column only
    "ssb": 77.3, "majority_vote": 68.8, "bcf": 69.2, "nbf": 79.8, "dsnbf": 80.3, "abf": 72.0,
}
# Selective QA on μ̂ (the benchmark specification §2.14A, per-seed then mean): (selective
# accuracy %, coverage %), mixed mode as above
PAPER_SELECTIVE_EXTRACTED = {
    "ssb_skip": (80.8, 82.9), "nbf_skip": (85.9, 77.5), "dsnbf_skip": (85.3, 78.3),
    "abf_skip": (83.0, 62.0),
}
# Seed 000 §4.2, the 2 × 2 of resolver (DSNBF vs GPT-5.4 on the structured atom grid, the
# release's "struct_llm") × input: (resolver, input) -> (accuracy, CI low, CI high), pooled %;
# the paper reads the split as 81 % resolver, 19 % input, interaction about −0.1 pp
PAPER_FACTORIAL = {
    ("dsnbf", "readout"): (82.3, 81.6, 83.1), ("struct_llm", "readout"): (73.5, 72.6, 74.4),
    ("dsnbf", "extracted"): (80.3, 79.5, 81.2), ("struct_llm", "extracted"): (71.4, 70.4, 72.3),
}
# (full, GT-present, GT-absent) forced % on μ̂, the slices defined by μ* (8,049 / 591 instances)
PAPER_SLICES_EXTRACTED = {
    "dsnbf": (80.3, 82.3, 53.5), "nbf": (79.8, 82.6, 42.1), "ssb": (77.2, 81.9, 13.2),
    "majority_vote": (68.8, 73.4, 5.8), "bcf": (69.2, 73.1, 15.2), "abf": (72.0, 76.5, 10.7),
}
# GPT-5.4 on the μ* grid, same slices (the other μ* rows are in PAPER_SLICES)
PAPER_SLICES_STRUCT_LLM = (73.5, 78.8, 1.2)
# Table 22's Majority Class column (seed 000 §12.5): it ignores the atoms, so every ε
PAPER_NOISE_MAJORITY_CLASS = 57.1
__all__ += ["PAPER_FACTORIAL", "PAPER_FORCED_EXTRACTED", "PAPER_NOISE_MAJORITY_CLASS",
            "PAPER_SELECTIVE_EXTRACTED", "PAPER_SLICES_EXTRACTED", "PAPER_SLICES_STRUCT_LLM"]
# The LLM baselines on the NL memory (T3), forced macro accuracy %, pooled over 4 seeds: seed 000
# §4.1 (Table 2's T3 rows; "DSNBF leads Direct prompting by 11.7–38.2 pp") and the benchmark
# specification §2.14A. Keys are (model folder of the release's method_outputs, prompt
# variant); GPT-5.4 on the structured atom grid ("struct_llm", variants "oracle" = μ*,
# "extracted" = μ̂) is the LLM column of the 2 × 2 of seed 000 §4.2 (PAPER_FACTORIAL).
PAPER_LLM_FORCED = {
    ("gpt-5.4", "direct"): 68.6, ("gpt-5.4", "schema-aware"): 69.7,
    ("gemini_p2", "direct"): 67.8, ("gemini_p2", "schema-aware"): 70.0,
    ("deepseek-v3.2", "direct"): 56.1, ("deepseek-v3.2", "schema-aware"): 56.9,
    ("qwen3-235b-a22b-2507", "direct"): 42.1, ("qwen3-235b-a22b-2507", "schema-aware"): 48.0,
    ("struct_llm", "oracle"): PAPER_FACTORIAL[("struct_llm", "readout")][0],
    ("struct_llm", "extracted"): PAPER_FACTORIAL[("struct_llm", "extracted")][0],
}
# The same LLMs answering or skipping by their own would_skip flag: (selective accuracy %,
# coverage %), per seed then mean; seed 000 Appendix 10.1 (Table 10) and §10.2 ("GPT-5.4
# Direct covers 92.3% but achieves only 70.3%"), the benchmark specification §2.14A. The paper
# reports no selective numbers of struct_llm.
PAPER_LLM_SELECTIVE = {
    ("gpt-5.4", "direct"): (70.3, 92.3), ("gpt-5.4", "schema-aware"): (71.0, 95.4),
    ("gemini_p2", "direct"): (68.4, 98.5), ("gemini_p2", "schema-aware"): (70.4, 99.2),
    ("deepseek-v3.2", "direct"): (56.1, 100.0), ("deepseek-v3.2", "schema-aware"): (56.9, 100.0),
    ("qwen3-235b-a22b-2507", "direct"): (42.2, 99.3),
    ("qwen3-235b-a22b-2507", "schema-aware"): (48.0, 98.8),
}
__all__ += ["PAPER_LLM_FORCED", "PAPER_LLM_SELECTIVE"]

# Seed 000 §12.6 (Table 24 and the text after it): where Gemini 3.1 Pro extracts worse (> 0) or
# better (< 0) than GPT-5.4, P(μ̂ = μ*) on the non-null cells, in pp, by question. Our copy of the
# paper states these gaps in words only (Table 24's body is missing), as ranges over the three
# difficulty classes; each value is the midpoint of the stated range (Ctrl1 −17 to −21, E1 −12
# to −15, F2 −8 to −11, F3 −6 to −9 on two classes, B3 about −9.5 on stated-vs-revealed only,
# A3 +6.7 on stated-vs-revealed only, A2 +5.4 / +6.4 / −0.9), a class with no stated gap
# counting 0. Every other question: no stated gap. The paper's overall deficit is 2.0–2.3 pp.
PAPER_GEMINI_EXTRACTION_GAP = {"Ctrl1": 19.0, "E1": 13.5, "F2": 9.5, "F3": 5.0, "B3": 3.2,
                               "A3": -2.2, "A2": -3.6}
__all__ += ["PAPER_GEMINI_EXTRACTION_GAP"]
