"""The paraphrase error profile: our extractor's measured errors on reworded prose, per cell.

The wording-robustness benchmark (:mod:`core.prose.paraphrase`, issue 19) rewords our render
and reads it again. This module counts, for every (question, source) cell, how the atoms the
extractor reads from our render (the round trip) fare on the reworded prose: the same label,
another label (**wrong**) or ⊥ (**empty**). Those counts are the profile the noise panel
offers as "our extractor on reworded prose" (:meth:`core.prose.noise.NoiseProfile.paraphrase`:
wrong → a flip, empty → a drop; seed 000 §12.5's flip, §8.8's faithfulness).

Measuring it renders and reads 480 people twice (several seconds), so the result is frozen
in ``data/prose/paraphrase_profile.json`` (:data:`SHIPPED`, counts only, so a fresh
computation compares exactly) and rebuilt with::

    python -m core.prose.paraphrase_profile [--out PATH] [--check]

Setting (:data:`SETTING`): the default testbed (seeds 20260321–24, 160 people per difficulty
class), its test split (the people the paper extracts, 480), paraphrase rate 0.1 per kind of
rewrite (the Extraction page's), paraphrase seed 0, the extractor's unread-day rule.
``tests/test_prose_paraphrase_profile.py`` recomputes the file and compares.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ..testbed.config import TestbedConfig
from ..testbed.generate import generate
from ..testbed.questions import QIDS, SOURCES
from ..testbed.schema import Testbed
from .extract import UNREAD_RULES, extract
from .paraphrase import paraphrase
from .render import render

__all__ = ["SETTING", "SHIPPED", "load_paraphrase_profile", "main", "measure_paraphrase_profile",
           "profile_rates", "profile_words"]

#: the shipped file
SHIPPED = Path(__file__).resolve().parents[2] / "data" / "prose" / "paraphrase_profile.json"
#: the setting of the shipped file (module docstring)
SETTING = {"rate": 0.1, "seed": 0, "split": "test", "unread": "day"}
_SHAPE = (len(QIDS), len(SOURCES))
_COUNTS = ("atoms", "wrong", "empty")


def measure_paraphrase_profile(tb: Testbed, *, rate: float, seed: int, split: str | None,
                               unread: str = "day", config: dict | None = None) -> dict:
    """Count the round trip's atoms and what the paraphrase made of them, per cell.

    Parameters
    ----------
    tb : the testbed whose sources are rendered.
    rate, seed : the paraphrase's rate per kind and the seed of its generator
        (:func:`core.prose.paraphrase.paraphrase`).
    split : the split whose people are counted (``None``: everyone).
    unread : the extractor's unread rule (:data:`core.prose.extract.UNREAD_RULES`).
    config : the testbed's configuration, recorded in the result.

    Returns
    -------
    dict
        Plain JSON: the setting, ``n_personas``, ``questions``, ``sources`` and three
        ``(18, 5)`` integer tables: ``atoms`` (non-null atoms of the round trip), ``wrong``
        (of those, another label on the paraphrase) and ``empty`` (⊥ on the paraphrase); and
        ``created``, cells the round trip left ⊥ that the paraphrase filled (a profile cannot
        create atoms). ``ValueError`` for an unknown split or unread rule.
    """
    if unread not in UNREAD_RULES:
        raise ValueError(f"unread must be one of {', '.join(UNREAD_RULES)}, got {unread!r}")
    splits = tb.personas["split"].to_numpy()
    if split is not None and split not in set(splits):
        raise ValueError(f"no persona of split {split!r} (the testbed has "
                         f"{', '.join(sorted(set(splits)))})")
    pick = np.ones(tb.n, dtype=bool) if split is None else splits == split
    r = render(tb.subset(pick))
    ids = list(r.persona_ids)
    base = extract(r.texts, persona_ids=ids, unread=unread).atoms
    para = paraphrase(r.texts, rate=rate, rng=np.random.default_rng(seed))
    got = extract(para.texts, persona_ids=ids, unread=unread).atoms
    has = base >= 0
    return {
        "what": "our extractor's atoms on our render (the round trip) and on a paraphrase of "
                "it, per question x source: atoms = non-null round-trip atoms, wrong = of "
                "those another label on the paraphrase, empty = of those null",
        "generator": "python -m core.prose.paraphrase_profile",
        "testbed": config, "split": split, "rate": float(rate), "seed": int(seed),
        "unread": unread, "n_personas": int(pick.sum()),
        "questions": list(QIDS), "sources": list(SOURCES),
        "atoms": has.sum(0).tolist(),
        "wrong": (has & (got >= 0) & (got != base)).sum(0).tolist(),
        "empty": (has & (got < 0)).sum(0).tolist(),
        "created": int((~has & (got >= 0)).sum()),
    }


def profile_rates(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(wrong / atoms, empty / atoms)`` per cell, 0 where the round trip has no atom."""
    atoms, wrong, empty = (np.asarray(data[k], dtype=float) for k in _COUNTS)
    den = np.where(atoms > 0, atoms, 1.0)
    return wrong / den, empty / den


def profile_words(data: dict) -> str:
    """The profile in plain words for a student (the Extraction page's noise panel)."""
    flips, drops = profile_rates(data)
    atoms = int(np.sum(data["atoms"]))
    wrong, empty = int(np.sum(data["wrong"])), int(np.sum(data["empty"]))
    worst = np.unravel_index(np.argmax(flips + drops), flips.shape)
    where = ("the default testbed" if data.get("testbed") == TestbedConfig().to_dict()
             else "a generated testbed")
    cell = (f"{data['questions'][worst[0]]} from the "
            f"{data['sources'][worst[1]].replace('_', ' ')}")
    return (
        f"Measured, not assumed: our extractor read the prose of the {data['n_personas']:,} "
        f"{data['split'] or ''} people of {where} once as written and once with "
        f"{100 * data['rate']:g} % of the lines reworded by each kind of rewrite (seed "
        f"{data['seed']}, the setting of the figure above). Of the {atoms:,} answers it gave "
        f"on the prose as written, {wrong:,} came out as another answer on the reworded prose "
        f"and {empty:,} came out empty. Each question and source keeps its own two shares: "
        "here an atom is changed to another answer, or emptied, with those chances (the "
        f"largest: {cell}, {100 * (flips + drops)[worst]:.0f} %). A change here moves an "
        "answer to a neighbouring one (an answer with no order to any other) and never touches "
        "an edge answer such as \"no late nights\", so the "
        "profile copies how often our extractor erred, not exactly how. It is fixed, so ε "
        "does not apply.")


def load_paraphrase_profile(path: str | Path | None = None) -> dict:
    """The shipped profile (or the file at ``path``), checked: ``ValueError`` naming the file
    when it is missing, not JSON, or its tables are not ``(18, 5)`` counts with
    ``wrong + empty <= atoms`` in the questions' and sources' order."""
    p = Path(SHIPPED if path is None else path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{p}: no paraphrase profile (rebuild it with python -m "
                         "core.prose.paraphrase_profile)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a JSON object")
    if data.get("questions") != list(QIDS) or data.get("sources") != list(SOURCES):
        raise ValueError(f"{p}: questions and sources are not the benchmark's, in its order")
    try:
        atoms, wrong, empty = (np.asarray(data[k], dtype=np.int64) for k in _COUNTS)
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{p}: needs integer tables {', '.join(_COUNTS)}") from None
    if not atoms.shape == wrong.shape == empty.shape == _SHAPE:
        raise ValueError(f"{p}: tables must have shape {_SHAPE}")
    if (wrong < 0).any() or (empty < 0).any() or (wrong + empty > atoms).any():
        raise ValueError(f"{p}: counts must satisfy 0 <= wrong + empty <= atoms in every cell")
    return data


def _shipped_setting() -> tuple[TestbedConfig, dict]:
    return TestbedConfig(), dict(SETTING)


def main(argv: list[str] | None = None) -> int:
    """Rebuild the shipped file, or with ``--check`` compare it with a fresh computation
    (exit 1 when they differ)."""
    ap = argparse.ArgumentParser(prog="python -m core.prose.paraphrase_profile",
                                 description="Measure the paraphrase error profile.")
    ap.add_argument("--out", type=Path, default=SHIPPED, help="where to write (default: the "
                    "shipped file)")
    ap.add_argument("--check", action="store_true",
                    help="compare the shipped file with a fresh computation; write nothing")
    args = ap.parse_args(argv)
    config, setting = _shipped_setting()
    fresh = measure_paraphrase_profile(generate(config), config=config.to_dict(), **setting)
    if args.check:
        same = load_paraphrase_profile() == fresh
        print(f"{SHIPPED}: {'equal to' if same else 'DIFFERS from'} a fresh computation")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(fresh, indent=1) + "\n", encoding="utf-8")
    flips, drops = profile_rates(fresh)
    print(f"wrote {args.out}: {fresh['n_personas']} people, mean wrong rate "
          f"{100 * flips.mean():.2f} %, mean empty rate {100 * drops.mean():.2f} % per cell")
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    sys.exit(main())
