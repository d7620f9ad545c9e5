"""Streamlit glue of the Reliability page: its URL parameters and its data choice.

The page diagnoses one of four data sources (seed 003's scenario, the real NQ-open answers,
the seed-000 resolvers' cached predictions, an uploaded CSV); each chooses its rules with its
own widget (the options depend on the data), so a link keeps the rules of each.
:func:`rule_frames` draws that data's widgets and returns the rule frames
(:func:`~pages._shared.seed003.rule_frame`) with a small key that determines them, which
the cached results of :mod:`pages._shared.seed003` are keyed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.figures.calibration import rule_colors
from core.figures.style import METHOD_SHORT
from core.glossary import tip
from core.store import StoreError
from core.testbed.questions import SOURCE_LABELS, SOURCES
from core.urlparams import ChoiceParam, FlagParam, NumberParam

from .params import url_multiselect, url_select
from .seed003 import (
    BRIDGE_METHODS,
    NQ_CONSTANT_RULES,
    NQ_LOCATION_RULES,
    default_scenario_knobs,
    example_upload,
    load_bridge,
    load_scenario,
    nq_answers_or_stop,
    read_upload,
    rule_frame,
    scenario_controls,
    scenario_params,
)
from .store import public_message, store_guard
from .ui import csv_bytes, escape_markdown

__all__ = ["COLORS", "DATA", "PARAMS", "P_BANDS", "P_BINS", "P_DATA", "P_LABEL", "P_STRATEGY",
           "RULE_NAMES", "RuleData", "rule_frames"]

DATA = {"scenario": "Scenario", "nq": "NQ-open", "resolvers": "Resolvers", "upload": "Upload"}
SCN_RULES = ("native", "eg")
NQ_RULES = ("agreement", *NQ_LOCATION_RULES, *NQ_CONSTANT_RULES)
RES_RULES = (*BRIDGE_METHODS, "tier prior")
UP_RULES = ("p", "p_b")
RULE_NAMES = {"native": "native", "eg": "EG", "tier prior": "tier prior", **METHOD_SHORT}
COLORS = rule_colors([*SCN_RULES, *NQ_RULES, *RES_RULES, *UP_RULES])

P_DATA = ChoiceParam("rel_data", "data choice", tuple(DATA), default="scenario",
                     tokens=tuple(DATA.values()))
P_LABEL = ChoiceParam("rel_label", "label source", ("Y", "Z"), default="Y")
P_BINS = NumberParam("rel_bins", "number of bins", 2, 30, 1, 10, integer=True)
P_STRATEGY = ChoiceParam("rel_strategy", "binning", ("uniform", "quantile"), default="uniform")
P_BANDS = FlagParam("rel_bands", "bands", True)
P_SCN = ChoiceParam("rel_rules_scn", "scenario rule", SCN_RULES, default=SCN_RULES, multi=True)
P_NQ = ChoiceParam("rel_rules_nq", "NQ-open rule", NQ_RULES, default=("agreement", "const@0.50"),
                   multi=True)
P_RES = ChoiceParam("rel_rules_res", "resolver", RES_RULES, default=("dsnbf", "nbf"),
                    tokens=tuple(RULE_NAMES[m] for m in RES_RULES), multi=True)
P_UP = ChoiceParam("rel_rules_up", "column", UP_RULES, default=UP_RULES, multi=True)
P_REF = ChoiceParam("rel_ref", "reference source", SOURCES, default="daily_self_report",
                    tokens=tuple(SOURCE_LABELS[s] for s in SOURCES))
#: Every URL parameter of the page.
PARAMS = [P_DATA, P_LABEL, P_BINS, P_STRATEGY, P_BANDS, P_SCN, P_NQ, P_RES, P_UP, P_REF,
          *scenario_params("rel")]


@dataclass(frozen=True, eq=False)
class RuleData:
    """The data a Reliability view diagnoses.

    Attributes
    ----------
    frames : rule → :func:`~pages._shared.seed003.rule_frame` (every rule the data offer).
    chosen : the rules the reader chose, in the data's order.
    key : the small values that determine ``frames`` (the cache key of every result).
    events : what the label says happened, under Y and under Z (for the headline).
    default_scenario : the data are seed 003's default scenario.
    """

    frames: Mapping[str, pd.DataFrame]
    chosen: tuple[str, ...]
    key: tuple
    events: tuple[str, str]
    default_scenario: bool = False

    @property
    def rules(self) -> tuple[str, ...]:
        """The chosen rules that have a frame."""
        return tuple(r for r in self.frames if r in self.chosen)


def rule_frames(data: str, *, path: str, stamp: int) -> RuleData:
    """Draw the widgets of data choice ``data`` and return its :class:`RuleData`.

    Stops the script (``st.stop``) with one plain message when there is nothing to show yet:
    no upload, or no resolver predictions in the store.
    """
    frames, default = {}, False
    if data == "scenario":
        with st.expander("Scenario settings (the answer-key paper's scenario by default)"):
            knobs = scenario_controls("rel", columns=4)
        chosen = url_multiselect(P_SCN, "Rules", format_func={
            "native": "native (the model's own confidence)",
            "eg": "EG (a frozen prior per kind of evidence)"}.get,
            help=tip("EG", "Both rules score the same beliefs."))
        frame = load_scenario(**knobs)
        for r in SCN_RULES:
            frames[r] = rule_frame(frame[r], frame["y"], frame["z"], frame["weight"])
        key, default = ("scenario", *(float(v) for v in knobs.values())), \
            default_scenario_knobs(knobs)
        target = ("belief literally true", "belief matched by the reference")
    elif data == "nq":
        chosen = url_multiselect(P_NQ, "Rules", help=tip("agreement"))
        answers = nq_answers_or_stop(path, stamp)
        for r in NQ_RULES:
            frames[r] = rule_frame(answers[r], answers["y"], answers["z"])
        key, target = ("nq", path, stamp), ("humans accept the answer",
                                                 "answer exactly matches a gold answer")
    elif data == "resolvers":
        r1, r2 = st.columns([3, 1])
        with r2:
            ref = url_select(P_REF, "Reference source (for Z)", format_func=SOURCE_LABELS.get,
                             help="Z = the answer equals this source's direct readout; a "
                                  "missing atom or another value counts as false.")
        with r1:
            chosen = url_multiselect(P_RES, "Resolvers", format_func=RULE_NAMES.get,
                                     help="Each resolver's confidence in its own answer (test "
                                          "split of every seed). 'tier prior': the frozen "
                                          "source-tier prior on DSNBF's answers.")
        for r in chosen:
            with store_guard():
                try:
                    items, _ = load_bridge(path, stamp,
                                           "dsnbf" if r == "tier prior" else r, ref)
                except (StoreError, ValueError) as exc:
                    st.error(f"No resolver predictions to show: {public_message(exc)}",
                             icon=":material/database:")
                    st.stop()
            p = items["c_b"] if r == "tier prior" else items["c_a"]
            frames[r] = rule_frame(p, items["y"], items["z"])
        key = ("resolvers", path, stamp, ref)
        target = ("answer = ground truth", f"answer = {SOURCE_LABELS[ref]}'s readout")
    else:
        got = read_upload(st.file_uploader(
            "CSV with columns p (forecast in [0, 1]) and y (0/1); optional z (0/1 reference "
            "label), p_b (a second rule), cluster, weight (> 0)", type=["csv"],
            key="rel_upload"), key="rel_upload")
        if got is None:
            st.info("Upload a CSV to diagnose your own forecasts. The example file below is "
                    "the answer-key paper's default scenario (native as p, EG as p_b).",
                    icon=":material/upload:")
            st.download_button("Example CSV", lambda: csv_bytes(example_upload()),
                               file_name="seed003_scenario_example.csv", mime="text/csv",
                               on_click="ignore", key="rel_example", icon=":material/download:")
            st.stop()
        up, up_name, digest = got
        st.caption(f"Using the file {escape_markdown(up_name)}: {len(up):,} rows; columns "
                   f"{escape_markdown(', '.join(up.columns))}.")
        chosen = url_multiselect(P_UP, "Columns to diagnose")
        w = up["weight"] if "weight" in up.columns else None
        for r in (r for r in UP_RULES if r in up.columns):
            frames[r] = rule_frame(up[r], up["y"], up["z"] if "z" in up.columns else None, w)
        key, target = ("upload", digest), ("y = 1", "z = 1")
    return RuleData(frames=frames, chosen=tuple(chosen), key=key, events=target,
                    default_scenario=default)


