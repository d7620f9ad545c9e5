"""Personal records: one person's facts, their dates and sources, and which record to believe.

Glue over :mod:`core.records.views` (through ``pages._shared.records``): the timeline and the
answers on an as-of date are one :class:`AsOfView`; the arms one ``ArmsView``; the item
browser one ``ItemView``; disclosure one ``DisclosureView``; write-back one ``WritebackView``;
the scores one ``ScoreView``; an uploaded decision file one ``DisclosureScore`` and an
uploaded write-back file one ``WritebackScore`` (``core.records.disclosure``,
``core.records.writeback``: every upload goes through ``core.records.inputs``, the command
line's reader). The figure comes from ``core.figures.records``.

URL state (:mod:`core.urlparams`): ``pr_asof``, ``pr_policy``, ``pr_arm``, ``pr_family``,
``pr_item``, ``pr_cond``, ``pr_update``, ``pr_apply``. Every interactive panel is a fragment.
The item box is dependent (its options follow the family), so it is drawn here with the
URL helpers of ``pages._shared.params``. About 350 lines, longer than the 150 a page aims
for: eight fragments (the timeline, the as-of date and the rule share one; three uploads)
and the closing statement, each with its widgets and its sentence; every number and table
comes from ``core.records``.
"""

from __future__ import annotations

import pages._shared.preload  # noqa: F401  (first: imports everything in one order)

import streamlit as st

from core.figures.records import timeline_figure
from core.glossary import tip
from core.pages_registry import page
from core.records.disclosure import CONDITIONS
from core.records.items import FAMILIES
from core.records.render import ARM_NAMES, ARMS
from core.records.views import FAMILY_NAMES, HEADERS, SHOWN_POLICIES, change_dates, items_in
from core.records.world import RUN_DATE
from core.records.writeback import load_updates
from core.urlparams import ChoiceParam, FlagParam
from pages._shared import open_page, url_segmented, url_select, url_toggle
from pages._shared.cache import cached_figure
from pages._shared.params import current, url_sync
from pages._shared.records import (
    REQUESTER,
    UPLOAD_MB,
    WRAP_ROW,
    arms_of,
    as_of_of,
    base_of,
    decision_example_bytes,
    disclosure_of,
    example_bytes,
    fitted_table,
    item_of,
    read_decision_upload,
    read_response_upload,
    read_writeback_upload,
    reference_decision_score,
    reference_score,
    reference_writeback_score,
    url_select_slider,
    with_interval,
    writeback_example_bytes,
    writeback_of,
)
from pages._shared.seed003 import show_figure
from pages._shared.ui import (
    FAVICON,
    escape_markdown,
    glossary_link,
    num_columns,
    table_height,
)

ME = page("pages/9_Personal_records.py")
st.set_page_config(layout="wide", page_title=f"{ME.title} · Arbiter", page_icon=FAVICON)

TODAY = RUN_DATE.isoformat()
base = base_of(TODAY)
UPDATES = {u.update_id: u.what for u in load_updates()}
QUESTIONS = {i.item_id: i.question for i in base.items}
COND = {"none": "no policy", "prose": "policy as prose", "structured": "classification records"}
OK = {True: "✓", False: "✗"}
#: columns printed with their sign (a difference shows which side it is on)
SIGNED = ("Δ", "difference")
FAMILY = {"all": "all 43 items", **{f: f"{f} · {n}" for f, n in FAMILY_NAMES.items()}}
DECIDED = {"condition": "policy", "decisions": "decisions", "released": "released",
           "entitled": "entitled", "M9": "precision (M9)", "M10": "recall (M10)",
           "M11": "critical errors (M11)", "M11_per_replicate": "M11 per replicate"}
RECORDED = {"new_value": "new value right", "start": "start right",
            "closes": "closed records right", "end": "end date right"}

st.title("Personal records: which record should an assistant believe?")
st.caption(
    "One invented person, Mara, and 34 facts about her: addresses, phone numbers, salary, "
    "documents, health. Each fact holds between two dates and comes from a source that is "
    "more or less trusted. Some records disagree, some have expired, three friends share a "
    "first name. Move the date, switch the rule, and see what an assistant should answer.")
glossary_link()

P_ASOF = ChoiceParam("pr_asof", "as-of date",
                     tuple(d.isoformat() for d in change_dates(base.world, today=base.today)),
                     default=TODAY)
P_POLICY = ChoiceParam("pr_policy", "rule", SHOWN_POLICIES, default="CP-01",
                       tokens=("cp01", "recency"))
P_ARM = ChoiceParam("pr_arm", "arm", ARMS, default="D")
P_FAMILY = ChoiceParam("pr_family", "item family", ("all", *FAMILIES), default="all")
P_ITEM = ChoiceParam("pr_item", "item", items_in(base, "all"), default="CONF-1")
P_COND = ChoiceParam("pr_cond", "policy condition", CONDITIONS, default="structured")
P_UPDATE = ChoiceParam("pr_update", "update", tuple(UPDATES), default="U1")
P_APPLY = FlagParam("pr_apply", "apply the update", default=False)
open_page("records", [P_ASOF, P_POLICY, P_ARM, P_FAMILY, P_ITEM, P_COND, P_UPDATE, P_APPLY])


@st.fragment
def records_panel() -> None:
    """As-of date and rule → the timeline and what the engine answers on that date."""
    st.header("The records on a timeline")
    c1, c2 = st.columns([3, 1])
    as_of = url_select_slider(P_ASOF, "As of (the days on which some record starts or ends)",
                              where=c1, help=tip("as-of date"))
    policy = url_segmented(P_POLICY, "When records disagree", where=c2, help=tip("CP-01"),
                           format_func={"CP-01": "CP-01", "naive recency": "naive recency"}.get)
    view = as_of_of(TODAY, as_of, policy)
    fig = cached_figure("pr_timeline", (TODAY, as_of), lambda: timeline_figure(
        view.facts, as_of=view.as_of, today=view.today,
        title="Each bar: one record, from the day it became true to the day it ended"))
    show_figure(fig, key="pr_timeline", stem=f"records_timeline_{as_of}",
                alt="Validity intervals of every record, coloured by source tier")
    st.caption("Colour: how trusted the source is (source tier 1 is a document scan, 4 a "
               "self-reported note). Crosses: records that hold on the as-of date but "
               "disagree. Bars running to the right edge are still true.")
    with st.container(key="pr_summary"):
        st.metric("Home address that day", view.answer("home_address") or "no record",
                  border=True, help=f"Under {policy}.")
        m = st.columns(3)
        m[0].metric("Recorded", view.n_answered, border=True,
                    help="Attributes with a record that holds on the as-of date.")
        m[1].metric("Disagreeing", len(view.conflicts), border=True,
                    help="Attributes whose records both hold that day and differ. "
                         + tip("source tier"))
        m[2].metric("Recency differs", len(view.changed), border=True,
                    help="Answers naive recency gives differently from CP-01. "
                         + tip("naive recency"))
    changed = ", ".join(view.answers.set_index("attribute").loc[list(view.changed), "label"])
    st.markdown(f"On **{as_of}** the records of {len(view.conflicts)} attributes disagree. "
                + (f"Naive recency gives a different answer on {len(view.changed)} of them "
                   f"({escape_markdown(changed)}): a later self-reported note beats a more "
                   "trusted record." if view.changed else
                   "Naive recency and CP-01 give the same answers on this date."))
    shown = view.table()
    fitted_table(shown, height=table_height(len(shown)))
    with st.expander("Sources, tiers and why the rules differ"):
        detail = view.detail()
        fitted_table(detail.drop(columns="why", errors="ignore"))
        why = detail[detail["why"] != ""] if "why" in detail else detail.iloc[:0]
        if len(why):  # one sentence per disagreement: too long for a table cell
            st.markdown("\n".join(f"- **{escape_markdown(a)}**: {escape_markdown(w)}"
                                  for a, w in zip(why["attribute"], why["why"], strict=True)))


records_panel()


@st.fragment
def arms_panel() -> None:
    """Arm → its text (plain text, never markdown) and its length."""
    st.header("The same records, written six ways")
    arms = arms_of(TODAY)
    t = arms.table
    arm = url_select(P_ARM, "Arm", help=tip("arm"), format_func=lambda x: (
        f"{x} · {ARM_NAMES[x]} ({t.set_index('arm').loc[x, 'kind']})"))
    row = t.set_index("arm").loc[arm]
    m = st.columns(3)
    m[0].metric("Characters (M14)", f"{row['chars']:,}", border=True, help=tip("M14"))
    m[1].metric("Complete or ablation", row["kind"], border=True, help=tip("ablation"))
    m[2].metric("Record fields it misses", f"{row['missing']} of {arms.n_claims}",
                border=True, help="Values, interval bounds, sources, ids and which contact "
                                  "came along, read back from the text record by record.")
    st.code(arms.texts[arm], language=None, height=360, wrap_lines=True)
    fitted_table(t.rename(columns=HEADERS))
    ch = arms.change
    pct = "{:.0%}".format
    st.caption(
        f"The notes used to name every companion by first name (\"with Alex\"). Read back "
        f"record by record, those notes miss {len(ch.missing_first)} field(s) "
        f"({escape_markdown('; '.join(ch.missing_first))}), so they were not complete. "
        f"With them the notes reader declined {', '.join(ch.declined_first) or 'nothing'} "
        f"and scored {pct(ch.ent_first['A'])} on the which-Alex items against the dimension's "
        f"{pct(ch.ent_first['D'])}; now it scores {pct(ch.ent_now['A'])} against "
        f"{pct(ch.ent_now['D'])}, so D > A on those items (once reported as H11 shown) is "
        + ("still true." if ch.h11_now else "no longer true."),
        help=" ".join((tip("ENT"), tip("H11"))))


arms_panel()


@st.fragment
def item_panel() -> None:
    """Family and item → the question, its reference and every reader's answer."""
    st.header("The questions, and how each arm's reader answers them")
    c1, c2 = st.columns([1, 3])
    family = url_select(P_FAMILY, "Family", where=c1, help=tip("item family"),
                        format_func=FAMILY.get)
    ids = items_in(base, family)
    if current(P_ITEM) not in ids:
        st.session_state[P_ITEM.key] = ids[0]
        url_sync(P_ITEM)()
    c2.selectbox("Item", ids, key=P_ITEM.key, on_change=url_sync(P_ITEM),
                 format_func=lambda i: f"{i}: {QUESTIONS[i]}")
    view = item_of(TODAY, current(P_ITEM))
    it = view.item
    m = st.columns(3)
    m[0].metric("As of", str(it.as_of), border=True)
    m[1].metric("Records it rests on", len(view.records), border=True)
    m[2].metric("Readers right", f"{view.n_correct} of {len(view.readers)}", border=True,
                help=tip("reference reader"))
    ref = (f"the engine answers **{escape_markdown(view.reference)}**" if view.reference
           else "nothing in the records answers it, so declining is right")
    st.markdown(f"**{escape_markdown(it.question)}** As of {it.as_of}, {ref}.")
    fitted_table(view.records.rename(columns=HEADERS))
    fitted_table(view.readers.assign(correct=view.readers["correct"].map(OK)))


item_panel()


@st.fragment
def disclosure_panel() -> None:
    """Policy condition → who receives what, and the critical errors."""
    st.header("Who may be told what")
    cond = url_segmented(P_COND, "Policy given to the assistant", format_func=COND.get,
                         help=tip("critical disclosure error"))
    view = disclosure_of(cond)
    m = st.columns(3)
    m[0].metric("Precision (M9)", f"{view.m9:.2f}", border=True, help=tip("M9"))
    m[1].metric("Recall (M10)", f"{view.m10:.2f}", border=True, help=tip("M10"))
    m[2].metric("Critical errors (M11)", view.m11, border=True, help=tip("M11"))
    fitted_table(view.matrix, {r: st.column_config.TextColumn(REQUESTER.get(r, r), help=said)
                               for r, said in view.requesters.items()},
                 height=table_height(len(view.matrix)))
    st.caption("A rule-following reader releases everything when no policy is given, and "
               "reads the prose policy exactly as the classification records, so it makes "
               "the same decisions under both; a model may not.")


disclosure_panel()


@st.fragment
def disclosure_upload_panel() -> None:
    """A model's release decisions → M9–M11 per condition and its critical errors."""
    st.subheader("Score a model's release decisions")
    c1, c2 = st.columns([3, 1])
    up = c1.file_uploader(
        f"Decisions, one JSON object per line (JSONL; over {UPLOAD_MB} MB is refused)",
        type=["jsonl"], key="pr_upload_disclosure",
        help=tip("JSONL") + " Each line: condition (none, prose or structured), requester "
             "(sister, hr or web_form), info_id (the twelve ids of the example file), "
             "replicate (0, 1, …) and release (true or false). " + tip("critical disclosure error"))
    c2.download_button("Example file", decision_example_bytes(), file_name="decisions.jsonl",
                       mime="application/jsonl", on_click="ignore", key="pr_example_disclosure",
                       icon=":material/download:", help="The reference reader's decisions.")
    got = read_decision_upload(up, key="pr_upload_disclosure")
    res, name = got if got is not None else (reference_decision_score(), "the reference reader")
    gaps = sum(res.missing.values())
    st.markdown(f"Scoring **{escape_markdown(name)}**: {res.n_lines} decisions"
                + (f", {len(res.unknown)} naming no item" if res.unknown else "")
                + (f", {gaps} requests with no decision" if gaps else "")
                + f"; {len(res.errors)} critical errors.")
    fitted_table(res.table.replace({"condition": COND}).rename(columns=DECIDED),
                 default="{:.2f}", formats={"M11 per replicate": "{:.1f}"})
    if len(res.errors):
        shown = (res.errors_by_request
                 .replace({"condition": COND, "requester": REQUESTER}))
        st.caption("The critical errors: who was given what they are not entitled to, and "
                   "in how many replicates.")
        fitted_table(shown, height=table_height(min(len(shown), 8)))


disclosure_upload_panel()


@st.fragment
def writeback_panel() -> None:
    """Update and apply → the attribute's history, the old record closed, not deleted."""
    st.header("Recording a change without losing the past")
    c1, c2 = st.columns([3, 1])
    uid = url_select(P_UPDATE, "New information", where=c1, help=tip("write-back"),
                     format_func=lambda u: f"{u}: {UPDATES[u]}")
    applied = url_toggle(P_APPLY, "Apply it", where=c2)
    view = writeback_of(TODAY, uid, applied)
    dates = {c: view.history[c].map(lambda d: "open" if d is None or d != d else str(d))
             for c in ("valid_from", "valid_to")}
    fitted_table(view.history.assign(**dates).rename(columns=HEADERS))
    before, after = (escape_markdown(v or "nothing") for v in (view.before, view.after))
    if view.correction and applied:
        said = (f"A correction, not a change: the value was never {before}, so nothing is "
                f"closed and the records now say **{after}** from **{view.start}**; asked "
                f"before the correction arrived on {view.captured}, they still say "
                f"**{before}**.")
    elif applied:
        said = (f"From **{view.start}** the answer is **{after}**; the day before it is "
                f"still **{before}**.")
    else:
        said = f"Until it is applied, the answer on {view.start} is **{after}**."
    st.markdown(f"Records: {view.n_facts[0]} before, {view.n_facts[1]} after (nothing is "
                f"deleted). " + said)
    fitted_table(view.arms, num_columns(view.arms, "%.2f"))
    st.caption("Reference readers: the notes (A) append a line but close nothing, flat "
               "records (C) overwrite, the dimension (D) closes and adds (M12, M13).")


writeback_panel()


@st.fragment
def writeback_upload_panel() -> None:
    """A model's recorded updates → M12–M13 per arm, with each part of M12."""
    st.subheader("Score a model's recorded updates")
    c1, c2 = st.columns([3, 1])
    up = c1.file_uploader(
        f"Updates, one JSON object per line (JSONL; over {UPLOAD_MB} MB is refused)",
        type=["jsonl"], key="pr_upload_writeback",
        help="Each line: update_id (U1 to U6), arm (A, C or D), replicate, new_value, start "
             "and end (dates written like 2026-09-20, or null), closes_record_ids (a list) "
             "and kept_prior (true or false). " + tip("write-back"))
    c2.download_button("Example file", writeback_example_bytes(TODAY),
                       file_name="writebacks.jsonl", mime="application/jsonl",
                       on_click="ignore", key="pr_example_writeback",
                       icon=":material/download:", help="The reference readers' updates.")
    got = read_writeback_upload(up, key="pr_upload_writeback", today=TODAY)
    res, name = (got if got is not None
                 else (reference_writeback_score(TODAY), "the reference readers"))
    st.markdown(f"Scoring **{escape_markdown(name)}**: {res.n_lines} updates recorded"
                + (f", {len(res.unknown)} naming no update" if res.unknown else "") + ".")
    fitted_table(res.table.rename(columns=RECORDED), default="{:.2f}")
    st.caption("M12 needs all four parts right: the new value, the day it starts, the "
               "records it closes and the day they end (for the laboratory correction: no "
               "record closed). M13: the old record is kept.")


writeback_upload_panel()


@st.fragment
def score_panel() -> None:
    """A response file → the measures by arm and the sign tests."""
    st.header("Score a response file")
    c1, c2 = st.columns([3, 1])
    up = c1.file_uploader(f"Responses, one JSON object per line (JSONL; over {UPLOAD_MB} MB "
                          "is refused)", type=["jsonl"], key="pr_upload",
                          help=tip("response file"))
    c2.download_button("Example file", example_bytes(TODAY), file_name="responses.jsonl",
                       mime="application/jsonl", on_click="ignore", key="pr_example",
                       icon=":material/download:", help="The reference readers' answers.")
    got = read_response_upload(up, key="pr_upload", today=TODAY)
    view, name = got if got is not None else (reference_score(TODAY), "the reference readers")
    st.markdown(f"Scoring **{escape_markdown(name)}**: {view.n_lines} answers"
                + (f", {view.unknown} naming no item" if view.unknown else "") + ".")
    fitted_table(view.measures, default="{:.2f}")
    st.caption("M2 is undefined (—) for C and E: they carry no record ids to cite.")
    # "kind" (paired or ablation) left out for 1280 px: the ablations are the rows "on" or "off"
    # an item family, over fewer items
    comparisons = with_interval(view.comparisons.drop(columns="kind").rename(columns=HEADERS))
    fitted_table(comparisons, {**num_columns(comparisons, "%.3f", signed=SIGNED),
                               "p (sign test)": st.column_config.NumberColumn(format="%.2g")},
                 height=table_height(len(comparisons)))
    st.caption("The difference in M1 is the studied arm's share right minus the comparator's: "
               "above zero, "
               "the studied arm is better. Sign test over items, no correction for the "
               "thirteen comparisons.")
    st.markdown("##### The same test on the other measures")
    tests = view.measure_tests.drop(columns="better").rename(columns=HEADERS)
    tests.insert(0, "measure", tests.pop("measure"))  # 11 columns fit 1280 px without "better"
    tests = with_interval(tests)  # and with the interval in one column
    fitted_table(tests, {**num_columns(tests, "%.3f", signed=SIGNED),
                         "p (sign test)": st.column_config.NumberColumn(format="%.2g")},
                 height=table_height(len(tests)))
    st.caption(f"{len(tests)} more comparisons: citing the right records (M2), naming the "
               "rule (M3), flagging expiry (M6), claiming an old value as today's (M7) and "
               "inventing a value (M8), over the nine arm pairs (M2: the four arms that carry "
               "record ids). M7 and M8 count mistakes, so their difference is turned round: "
               "above zero is the studied arm better on every row.")


score_panel()

st.header("What a rule-following reader can and cannot show")
hyp = reference_score(TODAY)
st.markdown(
    f"The reference readers show the predicted direction on {len(hyp.shown)} hypotheses "
    f"({', '.join(hyp.shown)}). They cannot test {', '.join(hyp.untestable)}: those are about "
    "a reader that can misread notes, invent values or misunderstand prose, which only a "
    "model run measures. The write-back hypothesis (H15) is shown by the section above.",
    help=tip("H1"))
# what was compared and what was observed wrap onto a second line; why, a sentence or three,
# is listed below the table
hypotheses = hyp.hypotheses
fitted_table(hypotheses.drop(columns="why"), wrap={"compared": 250, "observed": 340},
             height=table_height(0) + WRAP_ROW * len(hypotheses))
with st.expander("Why each hypothesis can or cannot be tested here"):
    st.markdown("\n".join(f"- **{escape_markdown(h)}**: {escape_markdown(w)}" for h, w in
                          zip(hypotheses["hypothesis"], hypotheses["why"], strict=True)))
st.caption("The figures behind H1 to H3, arm against arm on the same items:")
# the sign test's counts are left out (12 columns do not fit 1280 px): its p-value stays
headline = hyp.headline.drop(columns=["n_pos", "n_neg"]).rename(
    columns={**HEADERS, "p_value": "p (sign test)"})
fitted_table(headline, default="{:.3f}", wrap={"part": 105, "contrast": 115},
             height=table_height(0) + WRAP_ROW * len(headline))
