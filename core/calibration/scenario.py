"""Belief-store scenario generator for the label-source effect (seed 003).

One row per audited belief emitted by an open-ended Theory-of-Mind tracker. Each belief carries
two confidence rules on fixed content (native elicited confidence and the frozen source prior EG,
seed 003 §3 Eq. 4), its adjudicated literal truth ``Y``, the reference-derived label ``Z``
(finite reference + matcher; unmatched counts as false), the matcher flags the scoring protocols
of Table 3 need, ``K`` frozen automatic judges ``Q`` and the cluster/weight structure of the
audit (items in stores, stores in scenarios). See the label-source notes.

Generative model (all draws vectorised, one seeded ``numpy.random.Generator``)
------------------------------------------------------------------------------
* Stores are split evenly over scenarios; items over stores (``n_items // n_stores`` each, the
  remainder to randomly chosen stores). ``weight`` is a population (store-frame) weight,
  log-normal per store with sd ``weight_sd`` and rescaled to mean 1 over items.
* ``provenance`` ∈ {claim, inference, direct} with probabilities ``provenance_mix``;
  ``revision`` ∈ {weakened, unrevised, reinforced} with ``revision_mix``; the revision
  multiplier is ``revision_multipliers[revision]`` and is applied by *both* rules.
* Truth: latent logit ``truth_type_effect[prov] + truth_revision_effect[rev] + u_scn`` plus
  logistic noise; the intercept is chosen so that the *realised* weighted prevalence
  ``E_w[Y]`` is as close to ``prevalence`` as the weights allow (the ``k`` highest latent
  values are true).
* Native confidence: ``clip(σ(μ + discrimination·(Y − ½) + native_type_effect[prov]
  + native_spread·ε)·multiplier, clip_lo, clip_hi)``; ``μ`` is solved by bisection so that the
  realised ``E_w[native] = native_mean``.
* EG (Eq. 4): ``clip(source_prior[prov]·multiplier, clip_lo, clip_hi)`` with the frozen
  ``(r_claim, r_inference, r_direct) = (.20, .35, .55)``.
* Reference labels: among true items the ``1 − omission_rate`` share (weighted, realised) with the
  highest match propensity (``match_type_effect[prov] + v_scn`` + logistic noise) is matched
  (``Z = 1``); among false items the ``false_match_rate`` share is falsely matched to a true
  reference proposition (``Z = 1``). So ``omission_rate = P_w(Z = 0 | Y = 1)`` and
  ``false_match_rate = P_w(Z = 1 | Y = 0)`` hold for the realised sample.
* Protocol flags: ``in_reference`` says the belief's proposition is in the finite reference
  (true or false proposition); ``matched`` says the matcher paired it with a reference
  proposition. True matched beliefs are in the reference; a ``matcher_miss_share`` of unmatched
  true beliefs are matcher false negatives on a present proposition; a
  ``false_in_reference_rate`` of the other false beliefs are planted false propositions that the
  reference lists and the matcher pairs correctly (``matched``, ``Z = 0``); false matches are
  matched but not in the reference.
* Judges (confidence-blind, never see either rule): ``logit Q_k = judge_bias
  + 2.5·q_k·(2Y − 1) + judge_reference_tilt·(2Z − 1) + judge_shared_noise·ν + ε_k`` with
  ``ν, ε_k ~ N(0, 1)`` and ``q_k`` the judge quality (0 = uninformative). Q is clipped like the
  confidences.

``DEFAULT_SCENARIO`` was tuned once, offline (not at import time): a Nelder–Mead search over
``discrimination, native_spread, truth_type_effect, truth_revision_effect, match_type_effect,
false_match_rate, provenance_mix`` minimised the squared, tolerance-scaled distance of the
40-seed average of the Table 2 statistics to the seed's values, then the generator seed with the
smallest worst-case deviation that reverses in all six scenarios was kept (seed 3). The judge
quality (.4, unbiased) was then set so that TriSource-Restore narrows the 50-label interval by
about the seed's 37 % (Table 5). ``tests/test_scenario.py`` checks the achieved marginals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import expit

from core.frozen import FrozenDict

__all__ = [
    "DEFAULT_SCENARIO",
    "PROVENANCE_TYPES",
    "REVISION_STATES",
    "ScenarioConfig",
    "generate_scenario",
    "judge_columns",
    "scenario_from_attrs",
    "transfer_config",
]

#: provenance types of a belief, in the order of ``source_prior`` (seed 003 Eq. 4)
PROVENANCE_TYPES = ("claim", "inference", "direct")
#: revision states, in the order of ``revision_multipliers``
REVISION_STATES = ("weakened", "unrevised", "reinforced")


def _tuple3(name: str, v) -> tuple[float, float, float]:
    t = tuple(float(x) for x in v)
    if len(t) != 3 or not all(np.isfinite(t)):
        raise ValueError(f"{name} must be three finite numbers, got {v!r}")
    return t  # type: ignore[return-value]


@dataclass(frozen=True, kw_only=True)
class ScenarioConfig:
    """What belief-store scenario to generate (seed 003 §4; label-source-notes "Objects").

    Parameters
    ----------
    n_items, n_stores, n_scenarios : audited beliefs, frozen stores (the clusters) and authored
        scenarios. Seed: 259, 30, 6.
    prevalence : realised weighted truth rate ``E_w[Y]`` (seed .783).
    omission_rate : realised ``P_w(Z = 0 | Y = 1)``: true beliefs left unmatched.
    false_match_rate : realised ``P_w(Z = 1 | Y = 0)``: false beliefs matched to a true reference
        proposition.
    native_mean : realised ``E_w[native]`` (seed .767).
    discrimination : logit shift of native confidence between true and false beliefs.
    native_spread : sd of the item-level logit noise of native confidence.
    native_type_effect : logit offsets of native confidence by provenance type.
    provenance_mix, revision_mix : category probabilities (each sums to 1).
    source_prior : EG's frozen ``(r_claim, r_inference, r_direct)`` (Eq. 4).
    revision_multipliers : multipliers of (weakened, unrevised, reinforced), shared by both rules.
    truth_type_effect, truth_revision_effect : logit effects on truth.
    match_type_effect : logit effects on the matcher finding a true belief.
    scenario_sd : sd of the scenario-level logit offsets of truth and matching.
    weight_sd : sd of the log store weight (0 = unweighted).
    matcher_miss_share, false_in_reference_rate : protocol-flag rates (see module docstring).
    n_judges : number K of frozen automatic judges.
    judge_quality : one quality in [0, 1] for all judges, or one per judge.
    judge_bias : logit offset of every judge (0 = no lean towards "true").
    judge_reference_tilt : how far judges lean towards the reference label (logit units).
    judge_shared_noise : sd of the judges' shared item-level error.
    clip_lo, clip_hi : confidences are clipped to [clip_lo, clip_hi].
    seed : seed of the ``numpy.random.Generator``.
    """

    n_items: int = 259
    n_stores: int = 30
    n_scenarios: int = 6
    prevalence: float = 0.783
    omission_rate: float = 0.655
    false_match_rate: float = 0.14
    native_mean: float = 0.767
    discrimination: float = 0.23
    native_spread: float = 0.8
    native_type_effect: tuple[float, float, float] = (0.0, 0.0, 0.0)
    provenance_mix: tuple[float, float, float] = (0.22, 0.37, 0.41)
    revision_mix: tuple[float, float, float] = (0.15, 0.60, 0.25)
    source_prior: tuple[float, float, float] = (0.20, 0.35, 0.55)
    revision_multipliers: tuple[float, float, float] = (0.75, 1.0, 1.15)
    truth_type_effect: tuple[float, float, float] = (-0.18, 0.0, 0.18)
    truth_revision_effect: tuple[float, float, float] = (-0.29, 0.0, 0.115)
    match_type_effect: tuple[float, float, float] = (-0.79, -0.275, 0.79)
    scenario_sd: float = 0.2
    weight_sd: float = 0.35
    matcher_miss_share: float = 0.15
    false_in_reference_rate: float = 0.4
    n_judges: int = 2
    judge_quality: float | tuple[float, ...] = 0.4
    judge_bias: float = 0.0
    judge_reference_tilt: float = 0.3
    judge_shared_noise: float = 0.3
    clip_lo: float = 0.01
    clip_hi: float = 0.99
    seed: int = 3

    def __post_init__(self) -> None:
        for name in ("n_items", "n_stores", "n_scenarios", "n_judges", "seed"):
            object.__setattr__(self, name, int(getattr(self, name)))
        if not 1 <= self.n_scenarios <= self.n_stores <= self.n_items:
            raise ValueError("need 1 <= n_scenarios <= n_stores <= n_items")
        if self.n_judges < 0:
            raise ValueError("n_judges must be >= 0")
        if not 0 <= self.seed < 2**63:
            raise ValueError("seed must be a non-negative integer")
        for name in ("prevalence", "omission_rate", "false_match_rate", "matcher_miss_share",
                     "false_in_reference_rate"):
            v = float(getattr(self, name))
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v}")
            object.__setattr__(self, name, v)
        for name in ("discrimination", "native_spread", "scenario_sd", "weight_sd", "judge_bias",
                     "judge_reference_tilt", "judge_shared_noise", "clip_lo", "clip_hi",
                     "native_mean"):
            v = float(getattr(self, name))
            if not np.isfinite(v):
                raise ValueError(f"{name} must be finite")
            object.__setattr__(self, name, v)
        if not 0.0 < self.clip_lo < self.clip_hi < 1.0:
            raise ValueError("need 0 < clip_lo < clip_hi < 1")
        if not self.clip_lo < self.native_mean < self.clip_hi:
            raise ValueError("native_mean must lie inside (clip_lo, clip_hi)")
        for name in ("native_spread", "scenario_sd", "weight_sd", "judge_shared_noise"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        for name in ("native_type_effect", "provenance_mix", "revision_mix", "source_prior",
                     "revision_multipliers", "truth_type_effect", "truth_revision_effect",
                     "match_type_effect"):
            object.__setattr__(self, name, _tuple3(name, getattr(self, name)))
        for name in ("provenance_mix", "revision_mix"):
            mix = np.asarray(getattr(self, name))
            if np.any(mix < 0) or abs(mix.sum() - 1.0) > 1e-9:
                raise ValueError(f"{name} must be non-negative and sum to 1")
        if any(not 0.0 < r < 1.0 for r in self.source_prior):
            raise ValueError("source_prior values must lie in (0, 1)")
        if any(m <= 0 for m in self.revision_multipliers):
            raise ValueError("revision_multipliers must be positive")
        q = self.judge_quality
        if np.isscalar(q):
            object.__setattr__(self, "judge_quality", float(q))
        else:
            object.__setattr__(self, "judge_quality", tuple(float(x) for x in q))
            if len(self.judge_quality) != self.n_judges:
                raise ValueError("judge_quality needs one value or one per judge")
        if any(not 0.0 <= x <= 1.0 for x in self.judge_qualities):
            raise ValueError("judge_quality values must lie in [0, 1]")

    @property
    def judge_qualities(self) -> tuple[float, ...]:
        """One quality per judge (a scalar ``judge_quality`` is broadcast)."""
        q = self.judge_quality
        return (q,) * self.n_judges if isinstance(q, float) else q

    def to_dict(self) -> dict:
        """Plain form (tuples kept), also stored in ``frame.attrs['scenario_config']``."""
        return asdict(self)


#: The default scenario, tuned to seed 003 Table 2 (259 beliefs, 30 stores, 6 scenarios).
DEFAULT_SCENARIO = ScenarioConfig()


def transfer_config(config: ScenarioConfig, *, seed_offset: int = 1009) -> ScenarioConfig:
    """The "other audited dataset" used to learn transfer weights β (seed 003 §3).

    Same frozen judges and rules, an independent draw (``seed + seed_offset``) and a shifted
    reference (omission rate +0.1, capped at .95), as the seed's OpenToM audit differs from the
    local one.
    """
    return replace(config, seed=config.seed + int(seed_offset),
                   omission_rate=min(0.95, config.omission_rate + 0.1))


def scenario_from_attrs(frame: pd.DataFrame) -> ScenarioConfig | None:
    """The :class:`ScenarioConfig` stored in ``frame.attrs`` by :func:`generate_scenario`."""
    d = frame.attrs.get("scenario_config")
    return None if d is None else ScenarioConfig(**d)


def judge_columns(frame: pd.DataFrame) -> list[str]:
    """Names of the judge columns ``q_1 .. q_K`` of a scenario frame, in order."""
    cols = [c for c in frame.columns if isinstance(c, str) and c.startswith("q_")]
    return sorted(cols, key=lambda c: int(c[2:]))


def _top_weighted(score: np.ndarray, w: np.ndarray, share: float) -> np.ndarray:
    """Boolean mask of the highest-``score`` items whose weight share is closest to ``share``."""
    n = score.size
    out = np.zeros(n, bool)
    if n == 0:
        return out
    order = np.argsort(-score, kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(w[order])]) / w.sum()
    k = int(np.argmin(np.abs(cum - share)))
    out[order[:k]] = True
    return out


def _logistic(rng: np.random.Generator, n: int) -> np.ndarray:
    u = rng.random(n)
    return np.log(u) - np.log1p(-u)


def generate_scenario(config: ScenarioConfig = DEFAULT_SCENARIO) -> pd.DataFrame:
    """Generate one audited belief population (one row per belief).

    Parameters
    ----------
    config : the :class:`ScenarioConfig`.

    Returns
    -------
    pandas.DataFrame
        Columns ``item_id, scenario, store, cluster (= store), weight, provenance, revision,
        multiplier, native, eg, y, z, matched, in_reference, q_1 .. q_K``. ``y``/``z`` are
        int8 in {0, 1}; ``matched``/``in_reference`` bool; confidences and judges float in
        (0, 1). ``frame.attrs['scenario_config']`` holds ``config.to_dict()``.

    Notes
    -----
    Deterministic in ``config``: one ``numpy.random.default_rng(config.seed)`` drives every draw
    in a fixed order.
    """
    c = config
    rng = np.random.default_rng(c.seed)
    n, s_n, g_n = c.n_items, c.n_stores, c.n_scenarios

    # structure: stores -> scenarios, items -> stores, store weights
    store_scenario = (np.arange(s_n) * g_n) // s_n
    counts = np.full(s_n, n // s_n)
    counts[rng.choice(s_n, size=n % s_n, replace=False)] += 1
    store = np.repeat(np.arange(s_n), counts)
    scenario = store_scenario[store]
    w_store = np.exp(c.weight_sd * rng.standard_normal(s_n))
    weight = w_store[store]
    weight = weight / weight.mean()

    prov = rng.choice(3, size=n, p=np.asarray(c.provenance_mix))
    rev = rng.choice(3, size=n, p=np.asarray(c.revision_mix))
    mult = np.asarray(c.revision_multipliers)[rev]
    u_truth = c.scenario_sd * rng.standard_normal(g_n)
    u_match = c.scenario_sd * rng.standard_normal(g_n)

    # truth: the top weighted share of the latent truth propensity is true
    latent = (np.asarray(c.truth_type_effect)[prov] + np.asarray(c.truth_revision_effect)[rev]
              + u_truth[scenario] + _logistic(rng, n))
    y = _top_weighted(latent, weight, c.prevalence)

    # native confidence with its intercept solved for the realised weighted mean
    base = (c.discrimination * (y - 0.5) + np.asarray(c.native_type_effect)[prov]
            + c.native_spread * rng.standard_normal(n))

    def native_at(mu: float) -> np.ndarray:
        return np.clip(expit(mu + base) * mult, c.clip_lo, c.clip_hi)

    lo, hi = -20.0, 20.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if np.average(native_at(mid), weights=weight) < c.native_mean:
            lo = mid
        else:
            hi = mid
    native = native_at(0.5 * (lo + hi))
    eg = np.clip(np.asarray(c.source_prior)[prov] * mult, c.clip_lo, c.clip_hi)

    # reference labels and protocol flags
    propensity = np.asarray(c.match_type_effect)[prov] + u_match[scenario] + _logistic(rng, n)
    z = np.zeros(n, bool)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    z[pos[_top_weighted(propensity[pos], weight[pos], 1.0 - c.omission_rate)]] = True
    fp_noise = _logistic(rng, n)
    z[neg[_top_weighted(fp_noise[neg], weight[neg], c.false_match_rate)]] = True
    u_flag = rng.random(n)
    false_match = z & ~y
    planted = ~y & ~z & (u_flag < c.false_in_reference_rate)
    missed = y & ~z & (u_flag < c.matcher_miss_share)
    matched = (y & z) | false_match | planted
    in_reference = (y & z) | planted | missed

    # frozen confidence-blind judges
    k = c.n_judges
    qual = np.asarray(c.judge_qualities, float).reshape(k)
    shared = c.judge_shared_noise * rng.standard_normal(n)
    eps = rng.standard_normal((n, k))
    logit_q = (c.judge_bias
               + 2.5 * qual[None, :] * (2.0 * y[:, None] - 1.0)
               + c.judge_reference_tilt * (2.0 * z[:, None] - 1.0) + shared[:, None] + eps)
    q = np.clip(expit(logit_q), c.clip_lo, c.clip_hi)

    frame = pd.DataFrame({
        "item_id": np.arange(n),
        "scenario": scenario,
        "store": store,
        "cluster": store,
        "weight": weight,
        "provenance": pd.Categorical.from_codes(prov, categories=list(PROVENANCE_TYPES)),
        "revision": pd.Categorical.from_codes(rev, categories=list(REVISION_STATES)),
        "multiplier": mult,
        "native": native,
        "eg": eg,
        "y": y.astype(np.int8),
        "z": z.astype(np.int8),
        "matched": matched,
        "in_reference": in_reference,
    })
    for j in range(k):
        frame[f"q_{j + 1}"] = q[:, j]
    frame.attrs["scenario_config"] = FrozenDict(c.to_dict())  # cheap to copy (core.frozen)
    return frame
