"""Walkthrough: one persona and one question through every stage of seed 000 (§8.6).

Thin glue: widgets → ``core`` (through the cached loaders of ``pages._shared``) → figures
built by ``core.figures.walkthrough``. Seed, persona and question live in the URL
(``?seed=…&persona=…&q=…``); see ``pages/_shared/params.py`` for why this page handles
``st.query_params`` explicitly instead of ``bind="query-params"``.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import pandas as pd
import streamlit as st

from core.evaluation.walkthrough import (
    GT_RULES,
    MARGIN_WINDOW,
    PENDING_FILTERS,
    REFERENCE_NAMES,
    SOURCE_ROLES,
    TOPIC_FIELDS,
    atom_grid_table,
    atom_verdicts,
    day_views,
    difficulty_note,
    latent_days,
    persona_day_table,
    profile_vs_actual,
    resolver_table,
)
from core.figures.walkthrough import atom_grid_figure, source_days_figure, timeline_figure
from core.testbed.questions import QIDS, SOURCE_LABELS, SOURCES
from core.testbed.questions import question as get_question
from core.testbed.vocab import DIFFICULTIES, SPLITS, minutes_to_clock
from pages._shared import (
    URL_KEYS,
    csv_bytes,
    default_choice,
    ensure_store,
    init_from_url,
    load_persona,
    load_personas,
    load_selection_pool,
    plotly_config,
    source_chip,
    store_guard,
    store_stamp,
    sync_url,
    table_height,
)
from pages._shared.cache import cached_figure, cached_result
from pages._shared.evaluation import load_persona_predictions

st.set_page_config(layout="wide", page_title="Walkthrough · Arbiter",
                   page_icon=":material/route:")

DIFFICULTY_SHORT = {"stable": "stable", "temporal_shift": "temporal shift",
                    "stated_vs_revealed": "stated vs revealed"}
STATUS_MARK = {"agree": "✓ agrees", "disagree": "✗ disagrees", "null": "∅ no atom"}
OUTCOME_MARK = {"correct": "✓ correct", "wrong": "✗ wrong",
                "abstains (would be right)": "○ abstains (would be right)",
                "abstains (would be wrong)": "○ abstains (would be wrong)"}

path = ensure_store()
stamp = store_stamp(path)
with store_guard():
    personas = load_personas(str(path), stamp)
    pool = load_selection_pool(str(path), stamp)

st.title("Walkthrough: one persona, one question")
st.caption(
    "Follow one instance of the seed-000 benchmark through its stages (the paper's §8.6): "
    "a persona's 30 latent days, five sources that each see those days through their own "
    "distortion, one atom per source, the ground truth the label function derives, and "
    "how every resolver settles the conflict — or abstains."
)

init_from_url(personas, pool)
seeds = sorted(int(s) for s in personas["seed"].unique())
if st.session_state.get(URL_KEYS["seed"]) not in seeds:
    st.session_state[URL_KEYS["seed"]] = seeds[0]


def _reset_to_pick() -> None:
    pick = default_choice(personas, pool)
    st.session_state[URL_KEYS["seed"]] = pick.seed
    st.session_state[URL_KEYS["persona"]] = pick.persona
    st.session_state[URL_KEYS["q"]] = pick.qid
    st.session_state["wt_search"] = ""
    st.session_state["wt_difficulty"] = list(DIFFICULTIES)
    st.session_state["wt_split"] = list(SPLITS)


# ---------------------------------------------------------------- controls (sidebar)
with st.sidebar:
    st.header("Choose an instance")
    seed = st.selectbox(
        "Seed", seeds, key=URL_KEYS["seed"],
        format_func=lambda s: f"{s} (seed {seeds.index(s) + 1})",
        help="The generator seed. Persona ids repeat across seeds, with different days.")
    in_seed = personas[personas["seed"] == seed]
    search = st.text_input("Search persona id", key="wt_search",
                           placeholder="e.g. shift_121 or ellis")
    # filters start with everything selected (state set before the widgets, no default=)
    if "wt_difficulty" not in st.session_state:
        st.session_state["wt_difficulty"] = list(DIFFICULTIES)
    if "wt_split" not in st.session_state:
        st.session_state["wt_split"] = list(SPLITS)
    difficulty = st.pills("Difficulty", list(DIFFICULTIES), selection_mode="multi",
                          key="wt_difficulty", format_func=DIFFICULTY_SHORT.get,
                          help="Empty selection = no filter.")
    split = st.pills("Split", list(SPLITS), selection_mode="multi", key="wt_split",
                     help="The selection protocol ranks test personas only.")
    mask = pd.Series(True, index=in_seed.index)
    if search.strip():
        mask &= in_seed["persona_id"].str.contains(search.strip().lower(), regex=False)
    if difficulty:
        mask &= in_seed["difficulty"].isin(difficulty)
    if split:
        mask &= in_seed["split"].isin(split)
    options = in_seed.loc[mask, "persona_id"].tolist()
    current = st.session_state.get(URL_KEYS["persona"])
    if not options:
        st.caption("No persona matches these filters; keeping the current one.")
        keep = current if current in set(in_seed["persona_id"]) else None
        options = [keep or default_choice(personas, pool, seed=seed).persona]
    if current not in options:
        preferred = default_choice(personas, pool, seed=seed).persona
        st.session_state[URL_KEYS["persona"]] = preferred if preferred in options else options[0]
    split_of = dict(zip(in_seed["persona_id"], in_seed["split"], strict=True))
    persona_id = st.selectbox(
        f"Persona ({len(options)} of {len(in_seed)})", options, key=URL_KEYS["persona"],
        format_func=lambda p: f"{p} · {split_of.get(p, '')}")
    if st.session_state.get(URL_KEYS["q"]) not in QIDS:
        st.session_state[URL_KEYS["q"]] = default_choice(personas, pool, seed=seed,
                                                         persona=persona_id).qid
    qid = st.selectbox(
        "Question", list(QIDS), key=URL_KEYS["q"],
        format_func=lambda q: f"{q} · {get_question(q).title} ({get_question(q).topic})")
    st.button("Back to the protocol's pick", on_click=_reset_to_pick, icon=":material/restart_alt:",
              help="The instance the adapted §8.7 selection protocol ranks first.")
    st.caption("The address bar keeps seed, persona and question: copy it to share this view.")

sync_url(seed=seed, persona=persona_id, qid=qid)

with store_guard():
    bundle = load_persona(str(path), stamp, seed, persona_id)
tb = bundle.testbed
person = tb.personas.iloc[0]
q = get_question(qid)
j = QIDS.index(qid)
gt_label = q.labels[int(bundle.gt[j])]
anchor_end = int(tb.profile["anchor_end"][0])

# ---------------------------------------------------------------- header
def _headline(col, label: str, value: str, note: str | None = None) -> None:
    with col:
        st.caption(label)
        st.subheader(value, anchor=False)
        if note:
            st.caption(note)


c1, c2, c3, c4 = st.columns([2, 1.3, 2.4, 1.6])
_headline(c1, "Persona", str(person["name"]),
          f"`{persona_id}` · seed {seed} · {person['split']} split")
_headline(c2, "Difficulty", DIFFICULTY_SHORT.get(str(person["difficulty"]), "?"))
_headline(c3, "Question", f"{qid} · {q.title}",
          f"{q.topic} · last {q.window} days · {'ordinal' if q.ordinal else 'nominal'}")
_headline(c4, "Ground truth", gt_label.replace("_", "_\u200b"))  # wrap at underscores
st.markdown(f"> **{qid}.** {q.text}  \n> Answer space: "
            + " · ".join(f"`{lab}`" for lab in q.labels))

pair = pool[(pool["seed"] == seed) & (pool["persona_id"] == persona_id)
            & (pool["question_id"] == qid)]
qualifying = pool[pool["rank"] > 0]
full_protocol = "f_dsnbf" in pool.columns
with st.expander("Why this instance? The selection protocol (paper §8.7"
                 + (")" if full_protocol else ", adapted)")):
    intro = ("The paper picks its example by a deterministic protocol over the **test "
             "split**, here on the direct readout μ*. Hard filters:\n"
             "* **(i)** at least 4 of 5 sources give an atom, and planner, daily self-report "
             "and objective log are among them;\n")
    if full_protocol:
        reference = str(pool["reference"].iloc[0]) if len(pool) else "majority_vote"
        lo_m, hi_m = MARGIN_WINDOW
        st.markdown(
            intro + "* **(ii)** DSNBF's arg max equals GT;\n"
            f"* **(iii)** {REFERENCE_NAMES[reference]};\n"
            "* **(iv)** the atoms span at least two distinct values;\n"
            f"* **(v)** DSNBF's posterior margin p(top1) − p(top2) lies in [{lo_m}, {hi_m}] — "
            "neither trivial nor a coin toss.\n\n"
            "Ranked by the soft preferences met — planner shifted in its bias direction, "
            "self-report shifted in its bias direction, GPT and Gemini disagree (only with "
            "both), at least one other fusion method (MV, BCF, ABF, NBF) also correct — then "
            "by (persona id, seed, question order)."
        )
        if reference != "llm":
            st.info("This store holds no frontier-LLM answers (only an imported release "
                    "carries them), so filter (iii) uses **Majority Vote is wrong** as a "
                    "stand-in: the instance must be one that naive aggregation gets wrong.",
                    icon=":material/swap_horiz:")
    else:
        st.markdown(
            intro + "* **(iv)** the atoms span at least two distinct values;\n"
            "* **(new)** at least one atom disagrees with GT (standing in for the resolver "
            "filters below).\n\n"
            "Ranked by the soft preferences met: planner shifted in its bias direction, "
            "self-report shifted in its bias direction, at least one source agrees with GT; "
            "ties broken by (persona id, seed, question order)."
        )
        st.markdown("**Waiting for the resolvers** (the store has no cached predictions): "
                    + "; ".join(f"({k}) {v}" for k, v in PENDING_FILTERS.items()) + ".")
    n_test = pool[pool["question_id"] == qid]
    passed = n_test["f_coverage"] & n_test["f_spread"]
    counts = [(f"{qid}: test pairs", len(n_test)), ("pass (i)", int(n_test["f_coverage"].sum())),
              ("+ (iv)", int(passed.sum()))]
    if full_protocol:
        for name, col in (("+ (ii)", "f_dsnbf"), ("+ (iii)", "f_reference"),
                          ("+ (v)", "f_margin")):
            passed = passed & n_test[col]
            counts.append((name, int(passed.sum())))
    counts.append(("qualify", int(n_test["qualifies"].sum())))
    for col, (label, value) in zip(st.columns(len(counts)), counts, strict=True):
        col.metric(label, value)
    if pair.empty:
        st.info("This persona is not in the test split, so the protocol does not rank it.")
    else:
        row = pair.iloc[0]
        checks = [("(i) coverage", row["f_coverage"]), ("(iv) spread", row["f_spread"])]
        if full_protocol:
            margin_txt = ("no margin" if pd.isna(row["dsnbf_margin"])
                          else f"margin {row['dsnbf_margin']:.2f}")
            checks += [("(ii) DSNBF correct", row["f_dsnbf"]),
                       ("(iii) " + ("an LLM wrong" if row.get("reference") == "llm"
                                    else "MV wrong"), row["f_reference"]),
                       (f"(v) {margin_txt}", row["f_margin"]),
                       ("planner shift", row["planner_shift"]),
                       ("self-report shift", row["self_shift"]),
                       ("another fusion method correct", row["pref_fusion"])]
        else:
            checks += [("disagreement", row["f_disagree"]),
                       ("planner shift", row["planner_shift"]),
                       ("self-report shift", row["self_shift"]),
                       (f"{int(row['n_agree'])} source(s) agree", row["pref_agree"])]
        verdict = (f"ranked **{int(row['rank'])}** of {len(qualifying)} over all questions"
                   if row["rank"] > 0 else "**does not qualify**")
        st.markdown(f"This pair {verdict}: "
                    + " · ".join(f"{'✓' if ok else '✗'} {name}" for name, ok in checks))
    st.caption("The ten best-ranked pairs over all questions:")
    top_cols = ["rank", "seed", "persona_id", "question_id", "n_sources", "planner_shift",
                "self_shift"]
    top_cols += (["dsnbf_margin", "pref_fusion", "n_prefs"] if full_protocol
                 else ["n_agree", "n_prefs"])
    st.dataframe(
        qualifying.head(10)[top_cols],
        hide_index=True, width="stretch",
        column_config={"persona_id": "persona", "question_id": "question",
                       "n_sources": "atoms", "planner_shift": "planner shift",
                       "self_shift": "self-report shift", "n_agree": "sources = GT",
                       "dsnbf_margin": st.column_config.NumberColumn("DSNBF margin",
                                                                     format="%.2f"),
                       "pref_fusion": "other fusion correct",
                       "n_prefs": "preferences met"})

# ---------------------------------------------------------------- stage 1: persona
st.header("1 · The persona (L1)")
left, right = st.columns([1, 1.6])
with left:
    traits = {
        "age": person["age"], "occupation": person["occupation"], "city": person["city"],
        "relationship": person["relationship"], "diet": person["dietary_restriction"],
        "social preference": person["social_preference"],
        "close friends": person["close_friends"], "primary exercise": person["primary_exercise"],
    }
    if person["difficulty"] == "temporal_shift":
        traits["scenario"] = str(person["scenario"] or "not recorded").replace("_", " ")
        traits["shift day"] = int(person["shift_day"])
    st.dataframe(pd.DataFrame({"trait": list(traits), "value": [str(v) for v in traits.values()]}),
                 hide_index=True, width="stretch")
with right:
    st.info(difficulty_note(person, anchor_end=anchor_end), icon=":material/psychology:")
    if person["difficulty"] == "stated_vs_revealed":
        st.markdown("**Stated vs revealed.** What the person *says* (the profile) and what "
                    "they *do* (the latent days) differ on purpose: sources that trust the "
                    "narrative inherit its optimism.")
    pva = profile_vs_actual(tb)
    shift_day = int(person["shift_day"] or 0)
    names = {"habit": "habit", "profile": f"profile says (days 1–{anchor_end})",
             "actual_30d": "30 days show", "before_shift": f"days 1–{shift_day - 1}",
             "after_shift": f"days {shift_day}–30"}
    shown = pva.copy()
    for col in shown.columns[1:]:
        shown[col] = [("—" if pd.isna(v) else minutes_to_clock(round(v * 60))
                       if habit == "bedtime" else f"{v:.1f}")
                      for habit, v in zip(shown["habit"], shown[col], strict=True)]
    st.dataframe(shown.rename(columns=names), hide_index=True, width="stretch")

# ---------------------------------------------------------------- stage 2: latent days
st.header("2 · The latent days (L2)")
topic_fields = ", ".join(label for _, label in TOPIC_FIELDS[q.topic])
st.caption(f"The simulated truth for the **{q.topic}** topic ({topic_fields}). No source sees "
           "this table directly; the ground truth is computed from it.")
instance = (str(path), stamp, seed, persona_id, qid)
views = cached_result("wt_views", instance, lambda: day_views(tb, qid=qid))
st.plotly_chart(
    cached_figure("wt_timeline", instance, lambda: timeline_figure(
        latent_days(tb), topic=q.topic, shift_day=views.shift_day,
        threshold=views.threshold if q.topic in ("sleep", "work") else None,
        threshold_label=f"{qid} threshold")),
    key="wt_timeline", config=plotly_config(f"days_{persona_id}_{q.topic}"))

# ---------------------------------------------------------------- stage 3: sources
st.header("3 · Five sources, the same days (L3)")
st.caption(f"Each row is one source's record of **{views.title.lower()}** — the quantity "
           f"{qid} reads. Grey ticks mark the truth where a source reports the same quantity; "
           "grey bands with ✕ are days whose record was lost (device and objective logs "
           "drop whole days).")
st.plotly_chart(cached_figure("wt_sources", instance, lambda: source_days_figure(views)),
                key="wt_sources",
                config=plotly_config(f"sources_{persona_id}_{qid}"))
with st.expander("What each source distorts, and why", expanded=True):
    knobs = tb.knobs.iloc[0] if len(tb.knobs) else pd.Series(dtype=float)
    lost = {"objective_log": int((~tb.objective["available"][0]).sum()),
            "device_log": int((~tb.device["available"][0]).sum())}
    for src in SOURCES:
        extra = ""
        if src in lost:
            extra = f" This persona lost **{lost[src]} of 30** days."
        elif src == "profile_ltm":
            extra = f" This profile summarises days 1–{anchor_end}."
        elif src == "daily_self_report" and "self_report_conflict_rate" in knobs:
            rate = float(knobs["self_report_conflict_rate"])
            extra = f" Conflict rate for this persona: {rate:.0%}."
        elif src == "planner" and "planner_optimism_bias" in knobs:
            optimism = float(knobs["planner_optimism_bias"])
            extra = f" Optimism for this persona: {optimism:.2f}."
        st.markdown(f"{source_chip(src)} — {SOURCE_ROLES[src]}{extra}", unsafe_allow_html=True)

# ---------------------------------------------------------------- stage 6': atoms
st.header("4 · Atoms μ* beside the ground truth")
st.caption("One atom per (question, source): the source's own records read by a fixed rule "
           "(the paper's direct readout μ*, no LLM). Green ✓ agrees with GT, red ✗ "
           "disagrees, ∅ means the source had nothing to read, — that the source is not "
           f"informative for the question. The framed row is {qid}.")
st.plotly_chart(cached_figure("wt_grid", instance,
                              lambda: atom_grid_figure(bundle.gt, bundle.atoms, highlight=qid)),
                key="wt_grid",
                config=plotly_config(f"atoms_{persona_id}"))

# ---------------------------------------------------------------- stage 7: GT and verdicts
st.header(f"5 · How the ground truth of {qid} is derived")
g1, g2 = st.columns([1.4, 1])
with g1:
    st.markdown(f"**Rule (f_{qid}).** {GT_RULES[qid]}")
    st.markdown(f"**This persona:** `{bundle.details[qid]}`")
    st.success(f"Ground truth: **{gt_label}**", icon=":material/verified:")
with g2:
    stats = bundle.stats[qid]
    st.dataframe(pd.DataFrame({"statistic": list(stats),
                               "value": [f"{v:.3f}" if isinstance(v, float) else str(v)
                                         for v in stats.values()]}),
                 hide_index=True, width="stretch")

st.subheader("What each source says, and why")
verdicts = atom_verdicts(qid, int(bundle.gt[j]), bundle.atoms[j])
for _, v in verdicts.iterrows():
    if v["source"] not in q.informative and v["atom"] is None:
        st.markdown(f"{source_chip(v['source'])} · — not informative for {qid} "
                    "(spec §2.4): the source records nothing this question reads.",
                    unsafe_allow_html=True)
        continue
    atom = v["atom"] if v["atom"] is not None else "⊥"
    bias = ("nominal question" if not q.ordinal else "no directional bias" if v["bias"] == 0
            else f"bias {v['bias']:+d}".replace("-", "−"))
    st.markdown(
        f"{source_chip(v['source'])} · μ* = `{atom}` · **{STATUS_MARK[v['status']]}** "
        f"({bias}) — {v['explained']}.<br><span style='opacity:0.75'>Readout: "
        f"{v['rule']}.</span>", unsafe_allow_html=True)

# ---------------------------------------------------------------- stages 8–9: resolvers
st.header(f"6 · How the resolvers settle {qid}")
if person["split"] != "test":
    role = {"train": "the resolvers learn their tables and weights from it",
            "calibration": "the resolvers choose their temperatures and skip thresholds on it",
            "dev": "it is held out and never used"}.get(str(person["split"]), "")
    st.info(f"Resolvers answer **test** personas only. This persona is in the "
            f"**{person['split']}** split" + (f": {role}." if role else ".")
            + " Pick a test persona (Split filter in the sidebar) to see every resolver's "
            "answer.", icon=":material/school:")
else:
    with store_guard():
        preds = load_persona_predictions(str(path), stamp, seed, persona_id)
    if preds.empty:
        st.info("The store has no cached predictions for this persona; build them with "
                "`python -m core evaluate --db …`.", icon=":material/database:")
    else:
        answers = resolver_table(preds, qid=qid, gt_label=gt_label)
        forced = answers[~answers["selective"] & (answers["method"] != "source_reachability")]
        skips = answers[answers["selective"] & answers["skipped"]]
        r1, r2, r3 = st.columns(3)
        r1.metric("Forced methods right", f"{int(forced['correct'].sum())} of {len(forced)}",
                  help="Source Reachability (GT-aided) left out.")
        r2.metric("Selective variants abstaining",
                  f"{len(skips)} of {int(answers['selective'].sum())}")
        dsnbf = answers.set_index("method").get("margin", pd.Series(dtype=float))
        margin = dsnbf.get("dsnbf", float("nan"))
        r3.metric("DSNBF posterior margin", "—" if pd.isna(margin) else f"{margin:.2f}",
                  help="p(top1) − p(top2); DSNBF+SKIP abstains below its calibrated θ.")
        shown_answers = answers.assign(
            outcome=answers["outcome"].map(OUTCOME_MARK).fillna(answers["outcome"]),
            margin=[("—" if pd.isna(v) else f"{v:.2f}") for v in answers["margin"]])
        st.dataframe(
            shown_answers[["label", "answer", "outcome", "confidence", "margin"]],
            hide_index=True, width="stretch", height=table_height(len(shown_answers)),
            column_config={
                "label": st.column_config.TextColumn("resolver", width=290),
                "answer": f"answer (GT: {gt_label})",
                "outcome": st.column_config.TextColumn("outcome", width="medium"),
                "confidence": st.column_config.ProgressColumn(
                    "confidence", min_value=0.0, max_value=1.0, format="%.2f"),
                "margin": "posterior margin"})
        st.caption("Stage 8: each resolver reads only the five atoms above (never the persona "
                   "id or its difficulty) and answers with a confidence; +SKIP variants may "
                   "abstain, and their answer before abstaining is shown. Stage 9: the answer "
                   "is scored against GT. Majority Vote equals seed 000's equal-weight ArgRAG "
                   "adaptation; Dawid–Skene learns without labels; Source Reachability is "
                   "GT-aided.")

# ---------------------------------------------------------------- downloads and next steps
st.header("Downloads")
d1, d2 = st.columns(2)
d1.download_button(
    "Atom grid (CSV)", lambda: csv_bytes(atom_grid_table(bundle.gt, bundle.atoms)),
    file_name=f"atoms_{seed}_{persona_id}.csv", mime="text/csv", on_click="ignore",
    icon=":material/grid_on:", key="wt_dl_atoms")
d2.download_button(
    "The persona's 30 days, all sources (CSV)", lambda: csv_bytes(persona_day_table(tb)),
    file_name=f"days_{seed}_{persona_id}.csv", mime="text/csv", on_click="ignore",
    icon=":material/calendar_month:", key="wt_dl_days")
st.caption("All resolvers over all test personas: the Leaderboard page; move the skip "
           "thresholds on Selective QA; break the sources in the Bias lab. Sources: "
           + ", ".join(SOURCE_LABELS[s] for s in SOURCES) + ".")
