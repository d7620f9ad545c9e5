"""Arbiter: home page (the three stories, what each page teaches, the store).

Run with ``streamlit run app.py``. Pages live in ``pages/`` (Streamlit's pages-directory
convention: ``pages/1_Walkthrough.py`` is served at ``/Walkthrough``); shared Streamlit glue
is the package ``pages/_shared``; the logic is in ``core`` (no Streamlit there).
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from pages._shared import ensure_store, load_store_info, store_guard, store_stamp

st.set_page_config(layout="wide", page_title="Arbiter", page_icon=":material/balance:")

st.title("Arbiter")
st.markdown(
    "#### When evidence sources disagree, who settles it — and who checks the settler?"
)
st.markdown(
    "* **Sources conflict.** A person's plans, self-reports, payment logs and wearable each "
    "record the same days, each with its own bias, blind spots and lost days.\n"
    "* **Resolvers settle or abstain.** Fusion rules (majority vote, confusion-matrix "
    "models, LLM judges) pick an answer, and the good ones know when not to.\n"
    "* **Labels decide the ranking.** Score the same methods against a cheaper label source "
    "and the order of the leaderboard can flip."
)

path = ensure_store()

st.subheader("Three stories")
s1, s2, s3 = st.columns(3)
with s1, st.container(border=True, height="stretch"):
    st.markdown("**Seed 000 · Multi-source memory benchmark**")
    st.caption("4 seeds × 480 synthetic people × 30 days × 5 sources × 18 survey questions, "
               "with a ground truth computed from the latent days.")
    st.badge("available", color="green", icon=":material/check:")
    st.page_link("pages/1_Walkthrough.py", label="Start with the walkthrough",
                 icon=":material/arrow_forward:")
with s2, st.container(border=True, height="stretch"):
    st.markdown("**Seed 002 · Personal records with validity intervals**")
    st.caption("One person's records, source tiers, as-of dates, a conflict policy, "
               "disclosure and write-back.")
    st.badge("coming", color="gray", icon=":material/schedule:")
with s3, st.container(border=True, height="stretch"):
    st.markdown("**Seed 003 · The label-source effect**")
    st.caption("Does a cheap label source reverse the ranking of two confidence rules, and "
               "how many human labels settle it?")
    st.badge("available", color="green", icon=":material/check:")
    st.page_link("pages/6_Ranking_reversal.py", label="See a ranking reverse",
                 icon=":material/arrow_forward:")

st.subheader("Pages")
#: (page file, title, icon, what it teaches) — one card each, in menu order.
PAGES = (
    ("pages/1_Walkthrough.py", "Walkthrough", ":material/route:",
     "Follow one persona and one question from the latent days through five "
     "biased sources to atoms and the ground truth, and see which distortion "
     "moved each source's answer."),
    ("pages/2_Leaderboard.py", "Leaderboard", ":material/leaderboard:",
     "Every resolver — majority vote, BCF, ABF, NBF, DSNBF, unsupervised "
     "Dawid–Skene — with 95 % intervals beside the paper's numbers, by reasoning "
     "type and difficulty, and the per-source reliability that explains them."),
    ("pages/3_Bias_lab.py", "Bias lab", ":material/science:",
     "Drag the bias and dropout sliders or change the difficulty mix: one seed is "
     "regenerated and every resolver refitted, and a panel says what broke."),
    ("pages/4_Selective_QA.py", "Selective QA", ":material/tune:",
     "Move a resolver's abstention threshold and watch coverage, selective "
     "accuracy, F0.5 and the risk–coverage curve, with the calibrated "
     "threshold marked."),
    ("pages/5_Reliability.py", "Reliability", ":material/show_chart:",
     "Binned, CORP and smooth reliability diagrams with consistency bands and the "
     "MCB − DSC + UNC decomposition — for seed-000 resolvers, a belief-store "
     "scenario, the real NQ-open case or your own CSV — under truth (Y) or a "
     "finite reference (Z)."),
    ("pages/6_Ranking_reversal.py", "Ranking reversal", ":material/swap_vert:",
     "Slide the prevalence across the crossover (a + b)/2 and watch a strictly "
     "proper score change its mind; the exact T_omit / T_fp decomposition, the "
     "four scoring protocols, the memory-testbed bridge and the NQ-open systems "
     "ranked by exact match versus humans."),
    ("pages/7_Pilot_budget.py", "Pilot budget", ":material/savings:",
     "How many human labels settle the question: simulated pilots (human-only "
     "versus TriSource-Restore), one pilot walked through select → repair → "
     "escalate → gate, and the same budgets on real held-back human labels."),
    ("pages/8_Glossary.py", "Glossary", ":material/menu_book:",
     "Every term, short form and symbol the pages use, in plain words, with where it "
     "comes from, and how the pages sign a gap between two rules."),
)
for page, title, icon, teaches in PAGES:
    with st.container(border=True):
        st.page_link(page, label=f"**{title}**", icon=icon)
        st.markdown(teaches)

st.subheader("The store")
with st.container(border=True):
    with store_guard():
        info = load_store_info(str(path), store_stamp(path))
    config = info.get("config") or {}
    a, b, c, d = st.columns(4)
    a.metric("Origin", str(info["origin"]).split(":", 1)[0] or "?")
    b.metric("Seeds", len(info["seeds"]), help=", ".join(map(str, info["seeds"])))
    c.metric("Personas", info["n_personas"])
    built = str(info["built_at"])
    d.metric("Built on", built.split("T")[0] or "?", help=built or None)
    st.caption(f"Seeds {', '.join(map(str, info['seeds']))} · {info['n_ground_truth']} "
               f"ground-truth labels · schema {info['schema_version']}"
               + (f" · {config.get('personas_per_difficulty')} personas per difficulty"
                  if "personas_per_difficulty" in config else ""))
