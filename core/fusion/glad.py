"""GLAD: source abilities and item difficulties (Whitehill et al., NIPS 2009).

Model (Whitehill, Ruvolo, Wu, Bergsma and Movellan, "Whose vote should count more",
NIPS 2009, eqs. 1–2, in crowd-kit's multi-class form): source s is right on item i with
probability σ(α_s · exp(β_i)) — α_s ∈ ℝ its ability, exp(β_i) > 0 the item's inverse
difficulty — and otherwise says one of the n_i other candidates uniformly
(n_i = K − 1 under the global scope, the item's distinct claims − 1 under the item scope).
Priors: α_s ~ N(1, 1), β_i ~ N(1, 1); the class prior is uniform and fixed.

EM with crowd-kit 1.4.2's ``GLAD`` semantics (read for parity): α = β = 1 to start;
E-step: q_ic ∝ π_c Π_r [σ if l_r = c else (1 − σ)/n_i] (log σ = −softplus(−x), softplus
cut at |x| > 30 as crowd-kit cuts it); M-step: ``scipy.optimize.minimize(method="CG",
tol=1e-2, maxiter=25)`` of −Q, Q = Σ_r Σ_c q_ic log P(l_r | c) + Σ log N(α_s − 1) +
Σ log N(β_i − 1), from the current (α, β), with its analytic gradient; stop when Q per
(claim, candidate) pair improves by less than ``tol`` (1e−5), at most ``n_iter`` (100)
rounds (the first comparison is against the unnormalised Q of the start, as crowd-kit
does). Labels and posteriors are those of the last E-step (before the last M-step).

Why GLAD rather than MACE: both explain "why is this source trusted"; GLAD also gives each
item a difficulty, which the page can show beside the conflict, and crowd-kit's GLAD is
deterministic, so parity within 1e−6 is meaningful. crowd-kit's MACE draws its restarts
from one fixed seed (all restarts identical), multiplies raw probabilities per item (underflow
on long items) and indexes its strategy counts in sorted worker order but its parameters in
first-seen order, so its answers are not a reference worth matching.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from core.fusion._em import Gold, check_gold, check_prior
from core.fusion._numeric import dot
from core.fusion.claims import Claims
from core.fusion.result import FusionResult, make_result

__all__ = ["glad"]

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def _softplus(x: np.ndarray, limit: float = 30.0) -> np.ndarray:
    """log(1 + e^x), cut as crowd-kit cuts it: x above ``limit``, 0 below −``limit`` (the
    M-step's conjugate gradients amplify even 1e−16 differences, so parity needs the cut)."""
    inside = np.abs(x) <= limit
    return np.where(inside, np.log1p(np.exp(np.where(inside, x, 0.0))),
                    np.where(x > limit, x, 0.0))


def _first_seen(codes: np.ndarray, n: int) -> np.ndarray:
    """The codes 0..n−1 in order of first appearance in ``codes`` (unseen ones last)."""
    first = np.full(n, codes.size, np.int64)
    np.minimum.at(first, codes, np.arange(codes.size))
    return np.lexsort((np.arange(n), first))


def glad(claims: Claims, *, scope: str | None = None, n_iter: int = 100, tol: float = 1e-5,
         m_step_max_iter: int = 25, m_step_tol: float = 1e-2, gold=None, prior=None,
         tie: str = "smallest") -> FusionResult:
    """Fit GLAD by EM (see the module docstring).

    Parameters
    ----------
    claims : Claims
    scope : {"global", "item"}, optional
    n_iter, tol : EM cap and tolerance on Q per (claim, candidate) pair.
    m_step_max_iter, m_step_tol : the conjugate-gradient M-step's options.
    gold : bool mask, indices or True, optional
        Items clamped to their truth after every E-step.
    prior : array of K floats, optional
        Class prior (default uniform, as in crowd-kit).
    tie : {"smallest", "first_seen"}
        crowd-kit's GLAD reads labels from a frame with sorted columns: smallest.

    Returns
    -------
    FusionResult
        ``params``: ``alpha`` (S,) abilities, ``beta`` (I,) log inverse difficulties,
        ``difficulty`` (I,) = exp(−β), ``prior`` (K,).
    """
    if n_iter < 1:
        raise ValueError("n_iter must be at least 1")
    gold = check_gold(claims, gold)
    prior = check_prior(claims, prior)
    cand = claims.candidates(scope, with_truth=gold is not None)
    clamp = Gold(cand, claims, gold)
    K = claims.n_classes
    pri = np.full(K, 1.0 / K) if prior is None else prior
    log_pi = np.log(np.where(pri > 0, pri, 1e-300))[cand.cls]
    S, I = claims.n_sources, claims.n_items
    src, itm, w = claims.source, claims.item, claims.row_weight()
    log_nf = np.log(np.maximum(cand.width - 1, 1).astype(float))[itm]
    q_tot_rows = None
    n_pairs = float(dot(w, cand.width[itm]))  # crowd-kit's len(data) after the melt
    mu_a, mu_b = 1.0, 1.0

    def e_step(a, b):
        x = a[src] * np.exp(b[itm])
        ls, l1s = -_softplus(-x), -_softplus(x)  # log σ(x), log(1 − σ(x))
        votes = np.bincount(cand.row, weights=w * (ls - l1s + log_nf), minlength=cand.size)
        return clamp(cand.softmax(log_pi + votes))

    def loglik(x, q_own, q_tot):
        ls, l1s = -_softplus(-x), -_softplus(x)
        return dot(w, q_own * ls + (q_tot - q_own) * (l1s - log_nf))

    def q_value(a, b, q_own, q_tot):
        ll = loglik(a[src] * np.exp(b[itm]), q_own, q_tot)
        return float(ll - dot(a - mu_a, a - mu_a) / 2 - S * _LOG_SQRT_2PI
                     - dot(b - mu_b, b - mu_b) / 2 - I * _LOG_SQRT_2PI)

    def objective(z, q_own, q_tot):
        a, b = z[:S], z[S:]
        eb = np.exp(b[itm])
        x = a[src] * eb
        f = loglik(x, q_own, q_tot) - dot(a - mu_a, a - mu_a) / 2 - dot(b - mu_b, b - mu_b) / 2
        g = w * (q_own - expit(x) * q_tot)
        ga = np.bincount(src, weights=g * eb, minlength=S) - (a - mu_a)
        gb = np.bincount(itm, weights=g * a[src] * eb, minlength=I) - (b - mu_b)
        return -(f - (S + I) * _LOG_SQRT_2PI), -np.concatenate([ga, gb])

    # the M-step's vector in crowd-kit's order (sources, then items, by first appearance):
    # conjugate gradients amplify the rounding of permuted dot products
    order = np.r_[_first_seen(src, S), S + _first_seen(itm, I)]
    back = np.empty_like(order)
    back[order] = np.arange(order.size)

    def objective_ck(z, q_own, q_tot):
        f, g = objective(z[back], q_own, q_tot)
        return f, g[order]

    alpha, beta = np.ones(S), np.ones(I)
    q = e_step(alpha, beta)
    q_tot_rows = cand.segment_sum(q)[itm]
    Q = q_value(alpha, beta, q[cand.row], q_tot_rows)
    trace: list[float] = []
    converged, it = False, 0
    while it < n_iter:
        it += 1
        last = Q
        q = e_step(alpha, beta)
        q_own, q_tot_rows = q[cand.row], cand.segment_sum(q)[itm]
        res = minimize(objective_ck, np.concatenate([alpha, beta])[order],
                       args=(q_own, q_tot_rows), method="CG", jac=True, tol=m_step_tol,
                       options={"maxiter": m_step_max_iter})
        z = res.x[back]
        alpha, beta = z[:S].copy(), z[S:].copy()
        Q = q_value(alpha, beta, q_own, q_tot_rows) / n_pairs
        trace.append(Q)
        if Q - last < tol:
            converged = True
            break
    params = {"alpha": alpha, "beta": beta, "difficulty": np.exp(-beta), "prior": pri}
    if gold is not None:
        params["gold"] = gold
    return make_result(
        "glad", "GLAD (Whitehill et al. 2009): P(right) = σ(ability × exp(β_item)), wrong "
        "claims uniform over the other candidates, N(1, 1) priors, uniform class prior "
        "(crowd-kit GLAD semantics).", claims, cand, q, tie=tie, iterations=it,
        converged=converged, trace=trace,
        objective="Q per (claim, candidate) pair (crowd-kit convention)", params=params)
