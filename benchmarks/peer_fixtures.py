"""Freeze crowd-kit 1.4.2's outputs as parity fixtures for ``core.fusion`` (issue 21, point 3).

NOT part of the test suite and NOT runnable in the project's ``.venv`` (crowd-kit is not
installed there, on purpose: it pulls transformers, nltk and pyarrow, ~785 MB). The tests
(``tests/test_crowdkit_fixtures.py`` and ``core.fusion``'s parity tests) only read what this
script writes.

How to regenerate (from the repository root; the venv lives outside the repository)::

    python3 -m venv /tmp/peer-venv
    /tmp/peer-venv/bin/pip install -r benchmarks/requirements-peer.txt
    /tmp/peer-venv/bin/python benchmarks/peer_fixtures.py            # every run, ≈ 30–45 min
    /tmp/peer-venv/bin/python benchmarks/peer_fixtures.py --datasets mozafari_binary \
        --methods DawidSkene                                         # one run, merged in

It (re)writes ``tests/fixtures/crowdkit/`` (< 6 MB in all); a partial run replaces only the
entries it ran and keeps the others in ``manifest.json``. Each (dataset, method) runs in its own
child process, one at a time, with ``--timeout`` seconds (default 3600). The synthetic claim
tables are drawn from ``numpy.random.default_rng(SEED + k)`` and are themselves written as
fixtures (``synthetic/<name>.csv.gz``, same long format ``item,source,claim,truth`` as the
shipped sets), so the tests read exactly the claims crowd-kit saw; their sha256 and those of the
shipped CSVs are in the manifest. Reruns with the pinned versions give identical files (gzip
``mtime`` 0, floats printed with ``%.17g``).

Input convention. Every CSV is read with ``dtype=str, keep_default_na=False`` and fed to
crowd-kit as ``task=item, worker=source, label=claim``: labels are *strings* (mozafari's
``"0"``/``"1"`` too) and one label set is shared by all items (Flight's times and gates form one
set of 831 labels, 2,271 on the whole day). Defaults of every method are used (recorded per run
in ``manifest.json`` under ``params``), except ``MACE(n_restarts=1)`` where noted: all of
crowd-kit's restarts re-seed with the same ``random_state``, so they are identical and one gives
bit-for-bit the same output (checked on the small sets, see ``--check-mace-restarts``).

Outputs per (dataset, method), under ``tests/fixtures/crowdkit/<dataset>/``:

* ``<Method>.labels.csv.gz``: ``item,label,p`` — crowd-kit's ``labels_`` and its posterior.
* ``<Method>.proba.csv.gz``: ``item,label,p`` — ``probas_`` in long form, rows with p > 1e-12;
  for DawidSkene / OneCoinDawidSkene the entries equal to crowd-kit's floor ``1e-10`` are also
  left out (see below). Omitted (``"proba": "top"`` in the manifest) when its gzip would exceed
  ~2 MB: then only the labels file's ``p`` is kept.
* ``<Method>.workers.csv.gz`` (skills: MV accuracy against its own labels, one-coin skill,
  GLAD alpha, MACE spamming probabilities), ``<Method>.priors.csv.gz`` (DS, one-coin),
  ``<Method>.errors.csv.gz`` (DS confusion matrices, ≤ 10 labels), ``GLAD.items.csv.gz``
  (beta), ``MACE.thetas.csv.gz`` (≤ 10 labels).

MajorityVote's tie rule (crowd-kit 1.4.2, ``classification/majority_vote.py``)::

    scores = data[["task", "label"]].value_counts()
    probas_ = normalize_rows(scores.unstack("label", fill_value=0))   # count / n claims
    labels_ = probas_.idxmax(axis="columns")

``idxmax`` returns the *first column* holding the row maximum, so a tie goes to whichever tied
label comes first in the column order of the ``unstack``. That order is a pandas detail, not a
crowd-kit choice: with pandas 2.3.3 (pinned here) ``unstack`` sorts the label level, so the tie
goes to the smallest label in Python string order (code points: ``"09:59" < "10:00"``,
``"12" < "9"``, upper case before lower case) — the same rule as
``data/conflict/scripts/metrics.py``, hence Flight MV .818 (21 ties on the gold file, 294 on the
whole day). With pandas 3.x (``value_counts`` keeps first-appearance order) the columns follow the
order in which labels first appear *anywhere in the input table*, not per item; that gives the
.812 quoted in the issue (107 of the whole day's items, 9 of the gold file's, change label).
DawidSkene, OneCoinDawidSkene and GLAD also break exact ties by ``idxmax`` over sorted label
columns; MACE over labels in first-appearance order (``pd.factorize``).

DawidSkene (``n_iter=100, tol=1e-5``), exactly as crowd-kit 1.4.2 computes it:

1. ``probas = MajorityVote().fit_predict_proba(data)`` (vote fractions), ``priors = probas.mean()``
   over tasks, then one M-step from these probas.
2. M-step: ``errors[w, y, c] = Σ_{claims of w with label y} probas[task, c]``; only the
   (worker, label) rows a worker actually used exist; ``clip(lower=1e-10)``; each (worker, c)
   column divided by its sum over that worker's rows. No smoothing, no prior.
3. Loop ``n_iter`` times: E-step ``log2 post[t, c] = log2 clip(priors, 1e-10)[c] +
   Σ_claims log2 errors[w, y, c]``, normalised after subtracting the row max (``exp2``);
   ``priors = probas.mean()``; M-step as in 2; ``loss = ELBO / n_claims`` (natural log:
   Σ_claims Σ_c post·(ln errors + ln priors) + entropy of post, the entropy with post clipped at
   1e-10); stop when ``loss - previous_loss < tol`` (a *decrease* stops it too; the first
   iteration compares with -inf). Note the pseudo-ELBO adds ln prior once *per claim*, not
   once per item, so it is not monotone and can stop EM early (adultcontent2: it falls at the
   2nd iteration, so DS stops after 2). ``len(loss_history_)`` = iterations run (manifest:
   ``iterations``, ``loss_history``).
4. The returned ``probas_`` is the last E-step's output, *clipped in place to ≥ 1e-10 by the
   ELBO and not renormalised* (rows sum to 1 + (#labels below 1e-10)·1e-10); ``priors_`` and
   ``errors_`` come from the M-step after it.

OneCoinDawidSkene: the same loop, but the M-step is ``skill_w = mean over w's claims of
probas[task, claimed label]`` and ``errors[w, y, c] = skill_w if c == y else (1 - skill_w) /
(K - 1)`` with K the number of labels in the whole table, clipped to [1e-10, 1 - 1e-10] (not
renormalised); the first M-step uses the MV vote fractions. Same stopping rule and in-place clip.
Both are restated in ~40 lines of numpy in ``tests/test_crowdkit_fixtures.py::crowdkit_em``, which
reproduces every DS and one-coin fixture (posteriors within 1e-12, same iteration counts).

GLAD (``n_iter=100, tol=1e-5, m_step_max_iter=25, m_step_tol=1e-2``): labels = ``pd.unique``
(first appearance), uniform label prior, alpha (worker) and beta (item, used as exp(beta)) start
at 1 with N(1, 1) priors; M-step = ``scipy.optimize.minimize(method="CG", jac=..., tol=1e-2,
maxiter=25)`` on -Q over [alphas, betas]; the first convergence test compares Q / (claims × labels)
with the *unnormalised* initial Q, later ones Q / (claims × labels) with the previous one.

MACE (``n_restarts=10, n_iter=50, method="vb", alpha=beta=0.5, default_noise=0.5,
random_state=0``): workers and labels coded by ``pd.factorize`` (first appearance), uniform truth
prior; ``spamming_[:, 0]`` is P(spam), ``[:, 1]`` P(knows); both start as row-normalised
``scipy.stats.uniform(1, 1.5).rvs(random_state=0)`` draws, U[1, 2.5] (every restart is identical);
VB M-step ``exp(digamma(counts + prior)) / exp(digamma(row sum))`` with priors (0.5, 0.5) on
spamming and 10.0 on every strategy entry; exactly 50 iterations, no tolerance. Quirk: the
strategy counts come from ``groupby(["worker", "label"]).unstack()``, i.e. rows in *sorted*
worker order and columns in *sorted* label order, but are stored into ``thetas_`` that is indexed
by factorize (first-appearance) codes; ``MACE.thetas.csv.gz`` names rows and columns as the
E-step uses them (factorize order).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import platform
import resource
import subprocess
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "conflict"
OUT = ROOT / "tests" / "fixtures" / "crowdkit"
SEED = 20261201
PROBA_MIN = 1e-12  # rows of probas_ kept in <Method>.proba.csv.gz
CK_FLOOR = float(np.float_power(10, -10))  # crowd-kit's _EPS (DawidSkene's clip floor)
PROBA_MAX_GZ = 2_000_000  # bytes; above this only the top label's p is kept
SMALL_K = 10  # write confusion matrices / thetas only up to this many labels
FLOAT = "%.17g"

SHIPPED = {
    "flight": "flight-2011-12-01/flight_2011-12-01.csv",
    "flight_all": "flight-2011-12-01/flight_2011-12-01_all.csv",
    "mozafari_binary": "gal-mozafari-binary/mozafari_binary.csv",
    "adultcontent2": "gal-adultcontent2/adultcontent2_gold_items.csv",
}
SYNTHETIC = ("synth_ds3", "synth_copy3", "synth_ragged4")
DATASETS = (*SHIPPED, *SYNTHETIC)
METHODS = ("MajorityVote", "DawidSkene", "OneCoinDawidSkene", "GLAD", "MACE")

# Runs not made, and why (estimated from the gold-file runs on this 2-core machine; --force runs
# them). GLAD on Flight's gold file (7 M melted rows) takes ~6 min and 2.5 GB.
SKIP = {
    ("flight_all", "OneCoinDawidSkene"): "its M-step fills the 30,659 (worker, label) rows x "
    "2,271 columns of the error matrix in a Python loop (DataFrame.apply): on the gold file "
    "(6,867 x 831) it took 739 s for 9 M-steps, so about 17 min per M-step here",
    ("flight_all", "GLAD"): "GLAD melts claims x labels = 89,839 x 2,271 = 204 M rows",
    ("flight_all", "MACE"): "MACE's E-step runs one groupby-product per label (2,271) over "
    "all 89,839 claims: on the gold file (831 labels, 8,428 claims) 51 E-steps took 118 s, "
    "so about an hour here even with n_restarts=1",
}
# MACE's n_restarts: 1 where the default 10 would take long (identical output, see docstring).
MACE_ONE_RESTART = {"flight"}


# --------------------------------------------------------------------------- data


def _gz_bytes(text: str) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as fh:
        fh.write(text.encode("utf-8"))
    return buf.getvalue()


def write_csv_gz(df: pd.DataFrame, path: Path) -> int:
    """Write ``df`` as a deterministic gzip'd CSV; return its size in bytes."""
    data = _gz_bytes(df.to_csv(index=False, float_format=FLOAT, lineterminator="\n"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def _distinct_workers(rng: np.random.Generator, n_workers: int, k: int,
                      p: np.ndarray | None = None) -> np.ndarray:
    return rng.choice(n_workers, size=k, replace=False, p=p)


def _frame(rows: list[tuple[int, int, int]], truth: np.ndarray, labels: list[str]) -> pd.DataFrame:
    arr = np.asarray(rows, dtype=np.int64)
    return pd.DataFrame({
        "item": [f"t{i:04d}" for i in arr[:, 0]],
        "source": [f"w{w:02d}" for w in arr[:, 1]],
        "claim": [labels[c] for c in arr[:, 2]],
        "truth": [labels[truth[i]] for i in arr[:, 0]],
    })


def _confusions(rng: np.random.Generator, n_workers: int, k: int, lo: float,
                hi: float) -> np.ndarray:
    """Full confusion matrices conf[w, true, observed]: diagonal U(lo, hi), rest Dirichlet(1)."""
    conf = np.zeros((n_workers, k, k))
    for w in range(n_workers):
        for c in range(k):
            d = rng.uniform(lo, hi)
            off = rng.dirichlet(np.ones(k - 1)) * (1 - d)
            conf[w, c] = np.insert(off, c, d)
    return conf


def synth_ds3() -> pd.DataFrame:
    """500 items, 20 workers with full confusion matrices, 3 classes, 5 distinct workers an item.

    Class priors (.5, .3, .2) over ``["pos", "neg", "neu"]`` (so sorted label order differs from
    class order); worker w19 is a spammer (uniform answers)."""
    rng = np.random.default_rng(SEED + 1)
    labels, n_items, n_workers, k = ["pos", "neg", "neu"], 500, 20, 3
    truth = rng.choice(k, size=n_items, p=[0.5, 0.3, 0.2])
    conf = _confusions(rng, n_workers, k, 0.5, 0.9)
    conf[19] = 1.0 / k
    rows = []
    for i in range(n_items):
        for w in _distinct_workers(rng, n_workers, 5):
            rows.append((i, int(w), int(rng.choice(k, p=conf[w, truth[i]]))))
    return _frame(rows, truth, labels)


def synth_copy3() -> pd.DataFrame:
    """500 items, 20 workers, 3 classes, 5 distinct workers an item, with a copy cluster.

    w00-w04 copy one latent answer per item (right with p .45, else one wrong label fixed per
    item) with p .95, else answer alone with accuracy .45; w05-w19 are independent one-coin
    workers, accuracy U(.6, .8), wrong answers uniform. Half the items get 3 cluster members and
    2 independents, the rest 5 workers uniformly at random."""
    rng = np.random.default_rng(SEED + 2)
    labels, n_items, n_workers, k = ["A", "B", "C"], 500, 20, 3
    truth = rng.integers(0, k, size=n_items)
    acc = np.concatenate([np.full(5, 0.45), rng.uniform(0.6, 0.8, size=15)])

    def answer(c: int, a: float) -> int:
        if rng.random() < a:
            return c
        return int((c + rng.integers(1, k)) % k)

    latent = np.array([answer(int(c), 0.45) for c in truth])
    rows = []
    for i in range(n_items):
        if rng.random() < 0.5:
            ws = np.concatenate([rng.choice(5, 3, replace=False),
                                 5 + rng.choice(15, 2, replace=False)])
        else:
            ws = _distinct_workers(rng, n_workers, 5)
        for w in ws:
            if w < 5 and rng.random() < 0.95:
                rows.append((i, int(w), int(latent[i])))
            else:
                rows.append((i, int(w), answer(int(truth[i]), acc[w])))
    return _frame(rows, truth, labels)


def synth_ragged4() -> pd.DataFrame:
    """400 items, 30 workers, 4 classes, 1-8 claims an item (single-claim items included).

    Labels ``["cat", "dog", "owl", "ant"]`` with priors (.4, .3, .2, .1); workers chosen with
    Zipf-like activity 1/(j+1)^0.8; w00 always says "dog"; w01 is adversarial (shifts the class
    by one with p .8); the others have full confusion matrices, diagonal U(.4, .95)."""
    rng = np.random.default_rng(SEED + 3)
    labels, n_items, n_workers, k = ["cat", "dog", "owl", "ant"], 400, 30, 4
    truth = rng.choice(k, size=n_items, p=[0.4, 0.3, 0.2, 0.1])
    conf = _confusions(rng, n_workers, k, 0.4, 0.95)
    conf[0] = np.eye(k)[1]
    conf[1] = 0.2 * np.eye(k) + 0.8 * np.roll(np.eye(k), 1, axis=1)
    act = 1.0 / np.arange(1, n_workers + 1) ** 0.8
    act /= act.sum()
    rows = []
    for i in range(n_items):
        n = int(rng.integers(1, 9))
        for w in _distinct_workers(rng, n_workers, n, act):
            rows.append((i, int(w), int(rng.choice(k, p=conf[w, truth[i]]))))
    return _frame(rows, truth, labels)


def synthetic_path(name: str) -> Path:
    return OUT / "synthetic" / f"{name}.csv.gz"


def dataset_path(name: str) -> Path:
    return DATA / SHIPPED[name] if name in SHIPPED else synthetic_path(name)


def read_claims(name: str) -> pd.DataFrame:
    return pd.read_csv(dataset_path(name), dtype=str, keep_default_na=False)


def write_synthetic() -> dict[str, int]:
    gens = {"synth_ds3": synth_ds3, "synth_copy3": synth_copy3, "synth_ragged4": synth_ragged4}
    return {name: write_csv_gz(gen(), synthetic_path(name)) for name, gen in gens.items()}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dataset_info(name: str) -> dict:
    d = read_claims(name)
    gold = d[d.truth != ""]
    info = {
        "path": str(dataset_path(name).relative_to(ROOT)),
        "sha256": sha256(dataset_path(name)),
        "rows": len(d), "items": int(d.item.nunique()), "sources": int(d.source.nunique()),
        "labels": int(d.claim.nunique()), "gold_items": int(gold.item.nunique()),
    }
    if name in SYNTHETIC:
        gen = {"synth_ds3": synth_ds3, "synth_copy3": synth_copy3,
               "synth_ragged4": synth_ragged4}[name]
        info["generator"] = f"benchmarks/peer_fixtures.py:{name}"
        info["seed"] = SEED + SYNTHETIC.index(name) + 1
        info["description"] = " ".join((gen.__doc__ or "").split())
    return info


# --------------------------------------------------------------------------- one run


def _params(model) -> dict:
    import attr

    out = {}
    for a in attr.fields(type(model)):
        if a.init:
            v = getattr(model, a.name)
            if v is None or isinstance(v, bool | int | float | str):
                out[a.name] = v
    return out


def _long_proba(probas: pd.DataFrame, drop_floor: bool) -> pd.DataFrame:
    vals = probas.to_numpy(dtype=float)
    keep = vals > PROBA_MIN
    if drop_floor:
        keep &= vals != CK_FLOOR
    r, c = np.nonzero(keep)
    out = pd.DataFrame({"item": probas.index.to_numpy()[r].astype(str),
                        "label": probas.columns.to_numpy()[c].astype(str), "p": vals[r, c]})
    return out.sort_values(["item", "label"], kind="stable").reset_index(drop=True)


def run_one(dataset: str, method: str) -> dict:
    """Fit one crowd-kit method on one dataset, write its files, return its manifest entry."""
    import crowdkit.aggregation as agg

    # GLAD's `data[labels] = 0` inserts one column per label: one warning per column
    warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
    d = read_claims(dataset)
    data = pd.DataFrame({"task": d.item.astype(object), "worker": d.source.astype(object),
                         "label": d.claim.astype(object)})
    kwargs = {"n_restarts": 1} if method == "MACE" and dataset in MACE_ONE_RESTART else {}
    model = getattr(agg, method)(**kwargs)
    t0 = time.perf_counter()
    model.fit(data)
    seconds = time.perf_counter() - t0

    probas = model.probas_
    probas = probas.loc[:, sorted(probas.columns, key=str)] if method != "MACE" else probas
    labels = model.labels_.astype(str)
    outdir = OUT / dataset
    files: dict[str, int] = {}
    p_top = np.array([probas.at[t, lab] for t, lab in zip(model.labels_.index,
                                                            model.labels_.to_numpy(), strict=True)])
    lab_df = pd.DataFrame({"item": labels.index.astype(str), "label": labels.to_numpy(),
                           "p": p_top}).sort_values("item", kind="stable")
    files["labels"] = write_csv_gz(lab_df, outdir / f"{method}.labels.csv.gz")

    floor = method in ("DawidSkene", "OneCoinDawidSkene")
    long = _long_proba(probas, drop_floor=floor)
    gz = _gz_bytes(long.to_csv(index=False, float_format=FLOAT, lineterminator="\n"))
    proba_kind = "top"
    if len(gz) <= PROBA_MAX_GZ:
        files["proba"] = write_csv_gz(long, outdir / f"{method}.proba.csv.gz")
        proba_kind = "full"
    else:
        (outdir / f"{method}.proba.csv.gz").unlink(missing_ok=True)

    k = probas.shape[1]
    extra: dict = {}
    if method == "MajorityVote":
        sk = model.skills_
        files["workers"] = write_csv_gz(pd.DataFrame({"worker": sk.index.astype(str),
                                                      "skill": sk.to_numpy(float)}),
                                        outdir / f"{method}.workers.csv.gz")
    if method in ("DawidSkene", "OneCoinDawidSkene"):
        pr = model.priors_
        files["priors"] = write_csv_gz(pd.DataFrame({"label": pr.index.astype(str),
                                                     "prior": pr.to_numpy(float)})
                                       .sort_values("label"), outdir / f"{method}.priors.csv.gz")
        extra["loss_history"] = [float(x) for x in model.loss_history_]
        extra["iterations"] = len(model.loss_history_)
    if method == "DawidSkene" and k <= SMALL_K:
        e = model.errors_.stack()
        err = pd.DataFrame({"worker": e.index.get_level_values(0).astype(str),
                            "observed": e.index.get_level_values(1).astype(str),
                            "true": e.index.get_level_values(2).astype(str),
                            "p": e.to_numpy(float)}).sort_values(["worker", "observed", "true"])
        files["errors"] = write_csv_gz(err, outdir / f"{method}.errors.csv.gz")
    if method == "OneCoinDawidSkene":
        sk = model.skills_
        files["workers"] = write_csv_gz(pd.DataFrame({"worker": sk.index.astype(str),
                                                      "skill": sk.to_numpy(float)})
                                        .sort_values("worker"), outdir / f"{method}.workers.csv.gz")
    if method == "GLAD":
        files["workers"] = write_csv_gz(pd.DataFrame({"worker": model.alphas_.index.astype(str),
                                                      "alpha": model.alphas_.to_numpy(float)})
                                        .sort_values("worker"), outdir / f"{method}.workers.csv.gz")
        files["items"] = write_csv_gz(pd.DataFrame({"item": model.betas_.index.astype(str),
                                                    "beta": model.betas_.to_numpy(float)})
                                      .sort_values("item"), outdir / f"{method}.items.csv.gz")
        extra["loss_history"] = [float(x) for x in model.loss_history_]
        extra["iterations"] = len(model.loss_history_)
    if method == "MACE":
        worker_names = pd.unique(data.worker)  # = pd.factorize order, MACE's row order
        label_names = pd.unique(data.label)
        files["workers"] = write_csv_gz(pd.DataFrame({
            "worker": worker_names.astype(str), "p_spam": model.spamming_[:, 0],
            "p_know": model.spamming_[:, 1]}).sort_values("worker"),
            outdir / f"{method}.workers.csv.gz")
        if k <= SMALL_K:
            th = pd.DataFrame(model.thetas_, index=worker_names.astype(str),
                              columns=label_names.astype(str)).stack()
            files["thetas"] = write_csv_gz(pd.DataFrame({
                "worker": th.index.get_level_values(0), "label": th.index.get_level_values(1),
                "theta": th.to_numpy(float)}).sort_values(["worker", "label"]),
                outdir / f"{method}.thetas.csv.gz")
        extra["label_order"] = [str(x) for x in label_names] if k <= SMALL_K else None

    vals = probas.to_numpy(dtype=float)
    ties = int(((vals == vals.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum())
    gold = d[d.truth != ""].groupby("item").truth.first()
    pred = labels.reindex(gold.index)
    n_correct = int((pred == gold).sum())
    return {
        "dataset": dataset, "method": method, "params": _params(model),
        "seconds": round(seconds, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "items": len(labels), "labels": k, "tied_items": ties,
        "n_gold": len(gold), "n_correct": n_correct,
        "accuracy": n_correct / len(gold) if len(gold) else None,
        "proba": proba_kind, "proba_rows": len(long) if proba_kind == "full" else None,
        "files": {kind: f"{dataset}/{method}.{kind}.csv.gz" for kind in files},
        "bytes": files, **extra,
    }


def check_mace_restarts(dataset: str) -> bool:
    """True when MACE(n_restarts=10) and MACE(n_restarts=1) give identical probas_."""
    import crowdkit.aggregation as agg

    d = read_claims(dataset)
    data = pd.DataFrame({"task": d.item, "worker": d.source, "label": d.claim})
    a = agg.MACE().fit(data).probas_
    b = agg.MACE(n_restarts=1).fit(data).probas_
    return bool(a.equals(b))


# --------------------------------------------------------------------------- driver


def versions() -> dict:
    return {"crowd-kit": version("crowd-kit"), "scikit-learn": version("scikit-learn"),
            "numpy": version("numpy"), "pandas": version("pandas"), "scipy": version("scipy"),
            "python": platform.python_version()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--force", action="store_true", help="also run the runs listed in SKIP")
    ap.add_argument("--check-mace-restarts", action="store_true",
                    help="only check that MACE's 10 restarts equal 1 on the small sets")
    ap.add_argument("--one", nargs=2, metavar=("DATASET", "METHOD"), help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.one:
        entry = run_one(*args.one)
        args.result.write_text(json.dumps(entry))
        return 0
    if args.check_mace_restarts:
        res = {n: check_mace_restarts(n) for n in ("mozafari_binary", "adultcontent2", *SYNTHETIC)}
        print(json.dumps(res))
        return 0 if all(res.values()) else 1

    OUT.mkdir(parents=True, exist_ok=True)
    sizes = write_synthetic()
    print("synthetic:", sizes, flush=True)
    mpath = OUT / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {}
    if manifest.get("versions") not in (None, versions()):
        print("versions changed: starting a fresh manifest", flush=True)
        manifest = {}
    runs = manifest.get("runs", {})
    skipped = manifest.get("skipped", {})
    manifest.update({
        "generator": "benchmarks/peer_fixtures.py",
        "regenerate": "python3 -m venv /tmp/peer-venv && /tmp/peer-venv/bin/pip install -r "
                      "benchmarks/requirements-peer.txt && /tmp/peer-venv/bin/python "
                      "benchmarks/peer_fixtures.py",
        "versions": versions(),
        "input": "read_csv(dtype=str, keep_default_na=False); task=item, worker=source, "
                 "label=claim (string labels)",
        "proba_min": PROBA_MIN, "crowdkit_floor": CK_FLOOR, "proba_max_gz_bytes": PROBA_MAX_GZ,
        "float_format": FLOAT,
        "mv_tie_rule": "idxmax over the unstacked label columns; with pandas 2.3.3 they are "
                       "sorted, so a tie goes to the smallest label in Python string order",
        "datasets": {**manifest.get("datasets", {}),
                     **{n: dataset_info(n) for n in DATASETS}},
    })
    for ds in args.datasets:
        for m in args.methods:
            key = f"{ds}/{m}"
            if (ds, m) in SKIP and not args.force:
                skipped[key] = SKIP[(ds, m)]
                runs.pop(key, None)
                print(f"{key}: skipped ({SKIP[(ds, m)]})", flush=True)
                continue
            res = OUT / f".{ds}.{m}.json"
            cmd = [sys.executable, __file__, "--one", ds, m, "--result", str(res)]
            try:
                subprocess.run(cmd, check=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                skipped[key] = f"timed out after {args.timeout:.0f} s on this machine"
                runs.pop(key, None)
                print(f"{key}: TIMEOUT", flush=True)
                continue
            entry = json.loads(res.read_text())
            res.unlink()
            runs[key] = entry
            skipped.pop(key, None)
            acc = entry["accuracy"]
            print(f"{key}: acc={acc if acc is None else round(acc, 4)} "
                  f"{entry['seconds']:.2f} s {entry['peak_rss_mb']:.0f} MB "
                  f"proba={entry['proba']}", flush=True)
            manifest["runs"] = dict(sorted(runs.items()))
            manifest["skipped"] = dict(sorted(skipped.items()))
            mpath.write_text(json.dumps(manifest, indent=1) + "\n")
    manifest["runs"] = dict(sorted(runs.items()))
    manifest["skipped"] = dict(sorted(skipped.items()))
    mpath.write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"total fixture size: {total / 1e6:.2f} MB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
