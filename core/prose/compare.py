"""Line-by-line comparison of two renders of one persona (ours against the released one).

Both documents are cut into their ``##`` sections; inside a section every line is keyed by
its dated block (0 for the undated profile) and by the sentence template it matches
(:func:`core.prose.extract.template_of`; a line no template reads is keyed by its text up to
the first colon). Two lines with the same key state the same (day, field), so they should
carry the same values: the comparison reports, per section, how many keys both documents
have, how many of those lines are identical, and the keys only one side has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..testbed.vocab import DATES
from .extract import template_of
from .render import SECTIONS

__all__ = ["RenderComparison", "compare_renders", "release_renders"]

_DAY = {d: i + 1 for i, d in enumerate(DATES)}
_DAY_HEAD = re.compile(r"#### (\d{4}-\d{2}-\d{2}) \(\w+\)")


@dataclass(frozen=True)
class RenderComparison:
    """Per-section agreement of two renders.

    Attributes
    ----------
    headings_equal : both documents have the same ``##`` headings in the same order.
    table : ``section, shared, identical, only_ours, only_theirs, share_identical``.
    differences : ``section, day_index, ours, theirs`` for every shared key whose lines differ.
    """

    headings_equal: bool
    table: pd.DataFrame
    differences: pd.DataFrame

    @property
    def share_identical(self) -> float:
        """Identical lines over shared keys, all sections together."""
        shared = int(self.table["shared"].sum())
        return int(self.table["identical"].sum()) / shared if shared else float("nan")


def _keyed(doc: str) -> tuple[list[str], dict[str, dict[tuple, str]]]:
    headings: list[str] = []
    out: dict[str, dict[tuple, str]] = {}
    section, day = None, 0
    for line in doc.splitlines():
        if line.startswith("## "):
            section, day = line[3:].strip(), 0
            headings.append(section)
            out.setdefault(section, {})
            continue
        m = _DAY_HEAD.fullmatch(line)
        if m:
            day = _DAY.get(m[1], 0)
            continue
        if section is None or not line.strip():
            continue
        k = template_of(SECTIONS.index(section), line) if section in SECTIONS else None
        key = (day, k if k is not None else line.partition(":")[0])
        out[section][key] = line
    return headings, out


def compare_renders(ours: str, theirs: str) -> RenderComparison:
    """Compare two renders of the same persona, section by section (module docstring)."""
    h_ours, a = _keyed(ours)
    h_theirs, b = _keyed(theirs)
    rows, diffs = [], []
    for section in dict.fromkeys([*h_theirs, *h_ours]):
        x, y = a.get(section, {}), b.get(section, {})
        shared = [k for k in y if k in x]
        same = sum(x[k] == y[k] for k in shared)
        diffs += [{"section": section, "day_index": k[0], "ours": x[k], "theirs": y[k]}
                  for k in shared if x[k] != y[k]]
        rows.append({"section": section, "shared": len(shared), "identical": same,
                     "only_ours": len(set(x) - set(y)), "only_theirs": len(set(y) - set(x)),
                     "share_identical": same / len(shared) if shared else float("nan")})
    return RenderComparison(h_ours == h_theirs, pd.DataFrame(rows),
                            pd.DataFrame(diffs, columns=["section", "day_index", "ours",
                                                         "theirs"]))


def release_renders(path: str | Path, personas: pd.DataFrame) -> dict[str, str]:
    """The released NL renders (``nl_renders/<persona_id>.md``, spec §3) of ``personas``.

    ``path`` is a release root (with ``benchmark/seeds/``) or one ``benchmark/seeds/<seed>``
    folder; ``personas`` has the ``seed`` and ``persona_id`` columns of a testbed. Personas
    without a render file are left out.
    """
    root = Path(path)
    out: dict[str, str] = {}
    for seed, pid in personas[["seed", "persona_id"]].itertuples(index=False):
        for folder in (root / "benchmark" / "seeds" / f"s{seed}", root / f"s{seed}", root):
            f = folder / "nl_renders" / f"{pid}.md"
            if f.is_file():
                out[str(pid)] = f.read_text(encoding="utf-8")
                break
    return out
