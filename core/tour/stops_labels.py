"""The tour's stops on shipped data (issue 22): copies that outvote the truth on the real
Flight data, and an incomplete reference reversing a calibration ranking on the real NQ-open
systems, with the human pilot that settles it.

Each stop's computation lives in a private module (:mod:`._labels_copies`,
:mod:`._labels_reference`, :mod:`._labels_pilot`), whose docstring states the data, the
resolvers or rules and the written selection rule; here are the stops' fixed words. None of
them reads the store: they compute with ``TourData()``. Expensive loads are memoised in the
:class:`~core.tour.model.TourData` under keys starting with ``labels:``, so the human pilot
reuses the incomplete-reference stop's answers and pair.
"""

from __future__ import annotations

from core.calibration.nq301_rules import DEFAULT_MEANS

from ._labels_copies import KEY as COPY_KEY
from ._labels_copies import copy_cluster_view
from ._labels_pilot import BUDGETS, DESIGN, REPS, SEED, SETTLE, human_pilot_view
from ._labels_pilot import KEY as PILOT_KEY
from ._labels_reference import BOOT_SEED, N_BOOT, incomplete_reference_view
from ._labels_reference import KEY as REFERENCE_KEY
from ._labels_text import pct
from .model import Stop, TeacherNote

__all__ = ["STOPS"]

_N_RULES = len(DEFAULT_MEANS)
_N_PAIRS = _N_RULES * (_N_RULES - 1) // 2

COPY_CLUSTER = Stop(
    key=COPY_KEY,
    title="Sources that copy each other outvote the truth",
    story="claims",
    section="Li, Dong et al. (2012), 'Truth finding on the deep web': the Flight data, where "
            "web sites copy each other; Dong, Berti-Équille & Srivastava (2009) for the "
            "copy-aware resolver (ACCU + DEPEN); issue 21",
    failure="Majority vote counts every source as an independent witness. When several web "
            "sites copy one feed, one careless report is counted five times and can outvote "
            "sites that checked. A resolver that notices sources sharing wrong values can "
            "count the copies as the one witness they are.",
    rule="Among the Flight items with a known true time (departures and arrivals; gates are "
         "left out, because one gate can be written two ways), keep those where every member "
         "of the copy group that majority vote most often followed to a wrong value makes the "
         "same wrong claim, majority vote takes that claim without a tie, counting each copy "
         "group as one vote would give the true time the most votes, and the copy-aware "
         "resolver (ACCU + DEPEN) is right. Take the item where the copy group gives the "
         "largest share of the winning votes; ties go to the item with the most sites "
         "answering, then to the first item name in alphabetical order.",
    question="Some of these web sites copy each other. Which time will majority vote pick "
             "for this flight, and is it the true one?",
    remedy="Count a copy group as one witness: use a copy-aware resolver (ACCU + DEPEN), or "
           "merge sites that make the same claim on nearly every item they share before "
           "voting.",
    page="pages/11_Your_data.py",
    control="'What if a source were switched off', which opens on the tour's flight: switch "
            "copy group A's sites off",
    teacher=TeacherNote(
        ask="Before the reveal, have the class count the votes for each time. Then ask: if "
            "the sites marked as one copy group repeat one feed, how many independent "
            "witnesses does the winning time really have?",
        wrong_answer="'The majority is right: more sites agree on it.' Students count every "
                     "site as a separate witness, as majority vote does; agreement looks "
                     "like evidence even when it is one report repeated.",
        follow_up="On the Your data page, in 'What if a source were switched off', pick the "
                  "tour's flight and switch copy group A off: majority vote's answer changes. "
                  "Then find the copy groups' table and the board, and compare majority vote "
                  "with ACCU + DEPEN over all items."),
    compute=copy_cluster_view,
)

INCOMPLETE_REFERENCE = Stop(
    key=REFERENCE_KEY,
    title="An incomplete answer key reverses which confidence rule looks best",
    story="labels",
    section="The answer-key paper, §5.1 (a released NQ-open pipeline reverses its ranking), with "
            "§3 "
            "Eq. 1–2 (the exact label-source decomposition) and §5.2 (the crossover)",
    failure="Exact match against a fixed answer list calls every right answer that is "
            "missing from the list wrong. That lowers the share of answers marked right, and "
            "a proper score then rewards the less confident rule. Marked by people, the same "
            "answers and the same two rules come out in the opposite order.",
    rule=f"Of the {_N_PAIRS} pairs of {_N_RULES} agreement rules (the same order of the "
         f"answers, average confidence {min(DEFAULT_MEANS):g} to {max(DEFAULT_MEANS):g}), keep "
         "the pairs that exact match and people's judgements "
         f"order oppositely, with both 95 % intervals ({N_BOOT:,} resamples of whole "
         f"questions, random seed {BOOT_SEED}) clear of zero. Take the pair whose smaller "
         "winning margin (the smaller of its leads under the two markings) is largest; ties "
         "go to the rule names in alphabetical order.",
    question="Two confidence rules give the answers the same order and differ only in how "
             "confident they are overall. Scored by the Brier score, does exact match "
             "against a fixed answer list pick the same rule as people's judgements?",
    remedy="Score against people's judgements, at least on a sample of the answers, or leave "
           "unmatched answers out instead of calling them wrong; never choose a confidence "
           "rule by a proper score against exact match alone.",
    page="pages/6_Ranking_reversal.py",
    control="Data: NQ-open; Rule A and Rule B; the prevalence slider (the share of answers "
            "marked right)",
    teacher=TeacherNote(
        ask="Which rule would you ship if exact match were all you had? And if people had "
            "marked every answer?",
        wrong_answer="'The same rule either way: the answers did not change, only the "
                     "marking.' A ranking feels like a property of the rules. Students "
                     "overlook that exact match marks fewer answers right, and that a proper "
                     "score rewards the rule whose overall confidence matches the share "
                     "marked right.",
        follow_up="On the Ranking reversal page (NQ-open), drag the prevalence slider from "
                  "the exact-match share to the people's share and watch the selected rule "
                  "change where the two curves cross. Then choose two rules whose averages "
                  "both lie below the exact-match share and check that they do not reverse."),
    compute=incomplete_reference_view,
)

HUMAN_PILOT = Stop(
    key=PILOT_KEY,
    title="A small human pilot settles the order",
    story="labels",
    section="The answer-key paper, §5.5 (pilot validation, Table 5) and §6 Algorithm 1 (select "
            "when the "
            "interval clears zero, else escalate), on the §5.1 release",
    failure="When exact match and people disagree about which rule is better, nobody needs "
            "people to mark every answer: a random sample of people's labels, drawn by a "
            "fixed design, estimates the people's verdict without bias. Too small a sample "
            "cannot decide yet, and the pilot must ask for more labels instead of guessing.",
    rule="The two rules of the previous stop. For each budget of "
         f"{', '.join(map(str, BUDGETS))} usable labels (all on the Pilot budget page's "
         f"slider), draw {REPS} pilots ({DESIGN} design, random seed {SEED} + budget); a pilot "
         "makes the right call when it stops with its 95 % interval clear of zero on the "
         "people's side. For people's labels alone, and for people's labels with the judges' "
         "help, report the smallest budget from which on at least "
         f"{pct(SETTLE, 0)} of the pilots make the right call.",
    question="Exact match and people disagree about which rule is better. How many answers "
             f"must people label before {round(10 * SETTLE)} pilots in 10 call the people's "
             "order?",
    remedy="Before choosing, have people label a probability sample of the answers; stop only "
           "when the interval clears zero, and use exact match and automatic judges only as "
           "helpers that narrow the interval (TriSource-Restore), never as the target.",
    page="pages/7_Pilot_budget.py",
    control="'The same budgets on real answers (NQ-open)': the pilot budget slider, with Rule "
            "A and Rule B set by the link",
    teacher=TeacherNote(
        ask="How many answers would you have people label to settle which rule is better: "
            "10, 50, 200, or all of them?",
        wrong_answer="'All of them, or hundreds: a small sample cannot overrule exact match "
                     "on every answer.' Students trust the big, cheap, complete-looking "
                     "labels over a small sample; but the sample measures the right thing, "
                     "and its interval says when it is enough.",
        follow_up="On the Pilot budget page, open 'The same budgets on real answers', move "
                  "the budget slider from 10 to 200 and watch the escalations fall; then "
                  "switch the design to simple random sampling (SRS) and compare the budget "
                  "it needs."),
    compute=human_pilot_view,
)

#: The stops of this module, in the tour's order.
STOPS: tuple[Stop, ...] = (COPY_CLUSTER, INCOMPLETE_REFERENCE, HUMAN_PILOT)
