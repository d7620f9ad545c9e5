"""Which confidence map to deploy after a pilot, chosen on labels the maps never saw.

Seed 003 §3 (Algorithm 1 step 4: repair the selected rule; A.11: the monotone repair) says
*how* to repair; issue 18 showed that always deploying the TriSource repair is not honest: on
issue 8's stress case (1,500 answers, 50 pilot labels, 40 % of true answers matched) it scored
worse than the unrepaired rule in 24 % of pilots and worse than a plain Platt fit on the
pilot's labels in 70 %. This module chooses among

* ``"unrepaired"``: the rule's own confidence (σ(0 + 1·logit c), nothing fitted);
* ``"pilot_platt"``: pilot-only Platt, a logistic map σ(α + γ·logit c), γ ≥ 0, fitted to the
  pilot's human labels alone, each weighted by ``w/ρ`` (Table 5 panel B's map; a degenerate
  fit falls back like the repair's);
* ``"trisource"``: the TriSource monotone repair (:func:`~core.calibration.restore.monotone_repair`)
  or its fallback, with the reason the repair gives,

by a stated cross-fitted criterion.

The criterion
-------------
The pilot's usable labels are split into ``folds`` folds within each stratum (seeded). Every
candidate that fits something is refitted without fold k (inclusion probabilities of the
remaining labels: ``n'_h / N_h``) and predicts fold k, so each label is scored by maps that
never saw it. Two candidates are compared by the out-of-fold estimate of their Brier gap
(:func:`_paired`: the plain design estimate, or the aux-corrected one of Eq. 3, whichever has
the smaller stratified standard error) in three steps:

1. start from pilot-only Platt (the simplest map that uses the labels);
2. take the unrepaired rule instead when it does better by more than ``z_unrepaired``
   standard errors (0.84, one-sided 80 %);
3. take the TriSource repair instead of the choice so far when it does better by more than
   ``z_repair`` standard errors (1.645, one-sided 95 %).

The map deployed is the chosen candidate fitted on *all* the labels given.

Why these hurdles, measured (10 folds): on issue 8's stress case (seeds 0–399) the deployed
map is worse than the unrepaired rule in 5.0 % of pilots and worse than pilot-only Platt in
8.25 % (always deploying the repair: 24 % and 70 %; the plain argmin of the out-of-fold Brier:
8.3 % and 36 %). No rule measured is good everywhere: 50 labels cannot always tell which
simple map is better, and pilot-only Platt itself is worse than the unrepaired rule in 7 % of
those pilots. On seed 003's scenario (200 pilots of 50 attempted labels) the deployed map is
worse than the unrepaired rule in 7 % / 28 % / 11 % of pilots at discrimination .23 / 1 / 2
(there the unrepaired rule is best on average and pilot-only Platt worst), and worse than
pilot-only Platt in 14 % / 18 % / 11 %.

Invariant (``tests/test_map_choice.py``): the deployed map is one of the candidates' full-pilot
maps, named by ``chosen``; the out-of-fold Brier of every candidate is a weighted mean of
losses of maps fitted without the label scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from core.calibration._checks import as_float_array, check_probabilities, check_weights
from core.calibration.restore import (
    CAUSE_NONE,
    CAUSE_WORDS,
    MonotoneMap,
    _cause,
    _intercept_for_mean,
    design_variance,
    fit_monotone_batch,
    monotone_repair,
    safe_logit,
)

__all__ = ["CANDIDATE_LABELS", "CandidateMap", "MapChoice", "choose_map", "pilot_platt"]

#: Display names of the candidates, in the order of the criterion.
CANDIDATE_LABELS = {"pilot_platt": "pilot-only Platt", "unrepaired": "unrepaired rule",
                    "trisource": "TriSource repair"}
_MAX_GAMMA = 4.0


def _platt_cause(alpha: float, gamma: float, converged: bool) -> int:
    """The repair's own definition of a degenerate fit, for pilot-only Platt."""
    return int(_cause(np.array([alpha]), np.array([gamma]), np.array([converged]), 50.0,
                      _MAX_GAMMA)[0])


def pilot_platt(c, pilot_y, pilot_mask, rho, *, weights=None) -> MonotoneMap:
    """Pilot-only Platt: ``σ(α + γ·logit c)``, γ ≥ 0, fitted to the pilot's labels alone.

    Each pilot label ``Y_i`` has weight ``w_i·k_i/ρ_i`` (``k_i`` its draw count), the
    inverse-probability weight of Table 5 panel B's "pilot-only Platt". A degenerate fit
    (no finite minimum, γ above 4, or flat) is replaced by the rule's own confidence shifted
    so its weighted mean on the pilot equals the pilot's weighted truth rate (slope 1), with
    the reason in words; ``converged`` is then False.
    """
    cc = check_probabilities(as_float_array(c, "c"), "c")
    n = cc.shape[0]
    counts = np.asarray(pilot_mask).astype(float)
    w = check_weights(weights, n)
    s = counts > 0
    if not s.any():
        raise ValueError("pilot-only Platt needs at least one pilot label")
    x = safe_logit(cc)[s]
    y = np.asarray(pilot_y, float)[s]
    v = w[s] * counts[s] / np.asarray(rho, float)[s]
    v = v / v.sum()
    a, g, conv = fit_monotone_batch(x, v, np.array([v @ y]), np.array([v @ (y * x)]))
    cause = _platt_cause(float(a[0]), float(g[0]), bool(conv[0]))
    if cause == CAUSE_NONE:
        return MonotoneMap(alpha=float(a[0]), gamma=float(g[0]), n_pilot=int(counts.sum()))
    floor = 1.0 / (float(counts.sum()) + 2.0)  # the repair's rule of succession
    goal = float(np.clip(v @ y, floor, 1 - floor))
    alpha = _intercept_for_mean(x, v[None, :], np.ones(1), np.array([goal]))[0]
    return MonotoneMap(alpha=float(alpha), gamma=1.0, n_pilot=int(counts.sum()),
                       converged=False,
                       reason=f"fallback: {CAUSE_WORDS[cause]}, so the rule's own confidence "
                              "was shifted to the pilot's truth rate (slope 1)")


@dataclass(frozen=True)
class CandidateMap:
    """One candidate of :func:`choose_map`: its full-pilot map and its out-of-fold Brier.

    ``advantage`` is the out-of-fold Brier of the map it was compared with minus its own
    (> 0: it did better) and ``se`` that difference's standard error; both NaN for the
    starting candidate (pilot-only Platt).
    """

    name: str
    label: str
    map: MonotoneMap
    oof_brier: float
    advantage: float
    se: float
    hurdle: float


@dataclass(frozen=True, eq=False)
class MapChoice:
    """The deployed map and how it was chosen (see the module docstring).

    Attributes
    ----------
    chosen : str
        ``"unrepaired"``, ``"pilot_platt"`` or ``"trisource"``.
    map : MonotoneMap
        The chosen candidate's map fitted on every label given (the one deployed).
    candidates : tuple of CandidateMap
    folds : int
        Folds used (fewer than asked when the pilot is small).
    n_labels : int
    reason : str
        Why this map, in words, from the numbers.
    """

    chosen: str
    map: MonotoneMap
    candidates: tuple[CandidateMap, ...]
    folds: int
    n_labels: int
    reason: str

    @property
    def label(self) -> str:
        return CANDIDATE_LABELS[self.chosen]

    def table(self) -> pd.DataFrame:
        """``map, α, γ, out-of-fold Brier, advantage, se, hurdle, fit, deployed``."""
        return pd.DataFrame({
            "map": [m.label for m in self.candidates],
            "α": [m.map.alpha for m in self.candidates],
            "γ": [m.map.gamma for m in self.candidates],
            "out-of-fold Brier": [m.oof_brier for m in self.candidates],
            "advantage": [m.advantage for m in self.candidates],
            "se": [m.se for m in self.candidates],
            "hurdle (se)": [m.hurdle for m in self.candidates],
            "fit": [m.map.reason for m in self.candidates],
            "deployed": [m.name == self.chosen for m in self.candidates]})


def _folds(mask: np.ndarray, strata: np.ndarray, k: int, rng) -> np.ndarray:
    """Fold of every pilot item (−1 elsewhere), dealt round-robin in a random order per
    stratum so that folds are as equal as possible within each stratum."""
    fold = np.full(mask.size, -1, np.int64)
    offset = 0
    for h in np.unique(strata[mask]):
        idx = rng.permutation(np.flatnonzero(mask & (strata == h)))
        fold[idx] = (np.arange(idx.size) + offset) % k
        offset += idx.size
    return fold


def _rho_of(mask: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Inclusion probabilities ``n_h / N_h`` of a stratified SRS ``mask`` (1 where unused)."""
    n_h = np.bincount(strata)
    m_h = np.bincount(strata[mask], minlength=n_h.size)
    return np.maximum(m_h, 1)[strata] / n_h[strata]


def _fit(name: str, c, aux, y_s, mask, rho, w) -> MonotoneMap:
    if name == "unrepaired":
        return MonotoneMap(alpha=0.0, gamma=1.0, n_pilot=0, reason="nothing fitted")
    if name == "pilot_platt":
        return pilot_platt(c, y_s, mask, rho, weights=w)
    return monotone_repair(c, aux, y_s, mask, rho, weights=w)


def _paired(pa, pb, pa_folds, pb_folds, y, aux, mask, rho, strata, w) -> tuple[float, float]:
    """Out-of-fold estimate of ``R_Y(a) − R_Y(b)`` (Brier) and its standard error.

    The Brier difference of two maps is linear in the label, ``d(L) = p_a² − p_b² −
    2(p_a − p_b)L``, so besides the plain design estimate ``Σ_S w d(Y)/(Wρ)`` there is the
    aux-corrected one ``mean_k W⁻¹Σ w d_k(aux) + Σ_S w [d(Y) − d(aux)]/(Wρ)`` (the fold maps'
    full-frame difference under the auxiliary label plus the pilot's correction, as in
    Eq. 3). Both are unbiased for the out-of-fold maps; the one with the smaller standard
    error (stratified design variance) is used.
    """
    W = w.sum()
    d_y = pa**2 - pb**2 - 2.0 * (pa - pb) * np.nan_to_num(y)
    d_a = pa**2 - pb**2 - 2.0 * (pa - pb) * aux
    shift = float(np.mean([w @ (fa**2 - fb**2 - 2.0 * (fa - fb) * aux) / W
                           for fa, fb in zip(pa_folds, pb_folds, strict=True)]))
    best = (float("nan"), float("inf"))
    for lam in (0.0, 1.0):
        t = np.where(mask, w * (d_y - lam * d_a) / (W * rho), 0.0)
        var, _, _ = design_variance(t, mask.astype(np.int64), strata=strata)
        se = float(np.sqrt(max(var[0], 0.0)))
        if se < best[1]:
            best = (lam * shift + float(t.sum()), se)
    return best


def choose_map(c, aux, pilot_y, pilot_mask, *, strata=None, weights=None, folds: int = 10,
               seed: int = 0, z_unrepaired: float = 0.84, z_repair: float = 1.645) -> MapChoice:
    """Choose the confidence map to deploy by out-of-fold Brier (module docstring).

    Parameters
    ----------
    c : array_like, shape (n,)
        Confidence of the selected rule on the full frame.
    aux : array_like, shape (n,)
        The repair's full-frame auxiliary label in [0, 1].
    pilot_y : array_like, shape (n,)
        Human truth, read where ``pilot_mask`` (NaN allowed elsewhere).
    pilot_mask : array_like of bool, shape (n,)
        The pilot's usable labels: a stratified SRS within ``strata`` (one stratum if None).
    strata : array_like of int, shape (n,), optional
    weights : array_like, shape (n,), optional
        Population weights.
    folds : int
        Folds of the cross-fit (at most half the number of labels; at least 2).
    seed : int
        Seed of the fold split.
    z_unrepaired, z_repair : float
        Hurdles in standard errors (≥ 0) for leaving pilot-only Platt for the unrepaired rule,
        and for taking the TriSource repair instead of the current choice.

    Returns
    -------
    MapChoice

    Raises
    ------
    ValueError
        With fewer than 4 pilot labels (two folds of two), bad lengths or hurdles.
    """
    cc = check_probabilities(as_float_array(c, "c"), "c")
    n = cc.shape[0]
    aux = check_probabilities(as_float_array(aux, "aux"), "aux")
    mask = np.asarray(pilot_mask, bool)
    y = np.asarray(pilot_y, float)
    if mask.shape != (n,) or y.shape != (n,) or aux.shape != (n,):
        raise ValueError(f"c, aux, pilot_y and pilot_mask need one length ({n})")
    if not (z_unrepaired >= 0 and z_repair >= 0):
        raise ValueError(f"hurdles must be >= 0, got {z_unrepaired!r}, {z_repair!r}")
    k_labels = int(mask.sum())
    if k_labels < 4:
        raise ValueError(f"choosing a map out of fold needs at least 4 pilot labels, got "
                         f"{k_labels}")
    if np.any(~np.isin(y[mask], (0.0, 1.0))):
        raise ValueError("pilot labels must be 0 or 1")
    st = np.zeros(n, np.int64) if strata is None else np.unique(
        np.asarray(strata), return_inverse=True)[1].astype(np.int64)
    w = check_weights(weights, n)
    k = int(min(max(int(folds), 2), k_labels // 2))
    fold = _folds(mask, st, k, np.random.default_rng([int(seed), 18]))
    rho = _rho_of(mask, st)
    names = ("pilot_platt", "unrepaired", "trisource")
    x = safe_logit(cc)
    oof = {m: np.zeros(n) for m in names}  # each label's prediction by a map that never saw it
    per_fold = {m: [] for m in names}  # each fold map on the whole frame
    for f in range(k):
        fit_on = mask & (fold != f)
        r = _rho_of(fit_on, st)
        for m in names:
            mp = _fit(m, cc, aux, np.where(fit_on, y, np.nan), fit_on, r, w)
            p = expit(mp.alpha + mp.gamma * x)
            per_fold[m].append(p)
            oof[m][fold == f] = p[fold == f]
    u = np.where(mask, w / rho, 0.0)
    brier = {m: float(u @ np.where(mask, (oof[m] - np.nan_to_num(y)) ** 2, 0.0) / u.sum())
             for m in names}
    full = {m: _fit(m, cc, aux, np.where(mask, y, np.nan), mask, rho, w) for m in names}

    def advantage(cur: str, other: str) -> tuple[float, float]:
        """R(cur) − R(other) out of fold (> 0: other is better) and its se."""
        return _paired(oof[cur], oof[other], per_fold[cur], per_fold[other], y, aux, mask,
                       rho, st, w)

    chosen = "pilot_platt"
    adv, se = {}, {}
    adv["unrepaired"], se["unrepaired"] = advantage("pilot_platt", "unrepaired")
    if adv["unrepaired"] > max(z_unrepaired * se["unrepaired"], 0.0):
        chosen = "unrepaired"
    adv["trisource"], se["trisource"] = advantage(chosen, "trisource")
    if adv["trisource"] > max(z_repair * se["trisource"], 0.0):
        chosen = "trisource"
    hurdles = {"pilot_platt": float("nan"), "unrepaired": float(z_unrepaired),
               "trisource": float(z_repair)}
    cands = tuple(CandidateMap(
        name=m, label=CANDIDATE_LABELS[m], map=full[m], oof_brier=brier[m],
        advantage=adv.get(m, float("nan")), se=se.get(m, float("nan")), hurdle=hurdles[m])
        for m in names)
    reason = _reason(chosen, adv, se, z_unrepaired, z_repair, k, k_labels)
    return MapChoice(chosen=chosen, map=full[chosen], candidates=cands, folds=k,
                     n_labels=k_labels, reason=reason)


def _reason(chosen, adv, se, z_u, z_r, k, n) -> str:
    def by(name: str) -> str:
        d, e = adv[name], se[name]
        return f"{d:+.4f} (se {e:.4f})"

    head = f"Out of fold ({k} folds over {n} labels), "
    step1 = (f"the unrepaired rule beat pilot-only Platt by {by('unrepaired')}, more than "
             f"{z_u:g} se" if adv["unrepaired"] > z_u * se["unrepaired"] and adv["unrepaired"] > 0
             else f"the unrepaired rule's advantage over pilot-only Platt, "
                  f"{by('unrepaired')}, was not above {z_u:g} se")
    prev = "unrepaired rule" if step1.startswith("the unrepaired rule beat") else \
        "pilot-only Platt"
    took = chosen == "trisource"
    step2 = (f"; the TriSource repair beat the {prev} by {by('trisource')}, more than {z_r:g} "
             "se" if took else
             f"; the TriSource repair's advantage over the {prev}, {by('trisource')}, was not "
             f"above {z_r:g} se")
    return head + step1 + step2 + f": deploy the {CANDIDATE_LABELS[chosen]}."
