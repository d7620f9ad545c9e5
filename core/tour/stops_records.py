"""The tour's stops on one person's records over time (issue 22; seed document 002,
*Personal Dimension Benchmark v1: methods*).

Four failure modes of an assistant that keeps Mara's records: naive recency against the
tier-based conflict policy (§2, §4.2), an expired record asserted as current (§2, §4.3),
the same first name resolved to the wrong person (§4.1, §6) and a critical disclosure
(§2, §8). This module holds the stops' fixed words; the selection rules and checks are in
:mod:`._records_cases` and the computed views in :mod:`._records_views`. Every stop computes
on the authored world in memory (no store) and links to ``pages/9_Personal_records.py``.
"""

from __future__ import annotations

from ._records_views import (
    PAGE,
    critical_disclosure,
    expired_record,
    naive_recency,
    same_name,
)
from .model import Stop, TeacherNote

__all__ = ["STOPS"]

_DOC = "The personal-records study (Personal Dimension Benchmark v1: methods)"

STOPS: tuple[Stop, ...] = (
    Stop(
        key="naive-recency",
        title="The newest note beats a trusted document",
        story="records",
        section=f"{_DOC}, §2 Terms (conflict policy, naive recency) and §4.2 Conflicts",
        failure=("Two records of the same fact can both hold on the same day and disagree. "
                 "Naive recency believes whichever was captured last, so a note Mara typed "
                 "herself beats a scanned document. A conflict policy that ranks sources by "
                 "how much they are trusted keeps the document."),
        rule=("Among the conflict questions that ask for a value, keep those whose records "
              "holding on the as-of date disagree and whose most recently captured record "
              "comes from a less trusted source tier than the record the conflict policy "
              "keeps. Rank by the gap between the two tiers, largest first; break ties by "
              "the order of the question list."),
        question=("Two records of the same fact hold on the same day and disagree: one from a "
                  "scanned document, one from a note captured later. Which value does naive "
                  "recency give, and is it the right one?"),
        remedy=("Keep every record's source and resolve disagreements by the conflict policy: "
                "the more trusted source tier wins, and only within a tier does the later "
                "capture win. On the full page, switch the rule back to CP-01."),
        page=PAGE,
        control="The rule switch 'When records disagree' (CP-01 or naive recency), as-of "
                "date on the run date",
        teacher=TeacherNote(
            ask="Before revealing: which record would you believe, the one captured most "
                "recently or the one from a scanned document? Why?",
            wrong_answer="Most students pick the newer record, because newer usually means "
                         "more up to date. Here both records hold on the same day; the newer "
                         "one is just a less reliable kind of source, not a later fact.",
            follow_up="On the full page, move the as-of date back and forth with the rule on "
                      "naive recency and count on how many dates the two rules disagree; then "
                      "find the conflict where they agree although the sources differ, and "
                      "explain why."),
        compute=naive_recency),
    Stop(
        key="expired-record",
        title="An expired record stated as if it still held",
        story="records",
        section=f"{_DOC}, §2 Terms (stale record), §4.3 Expiry and hypothesis H9 (§3)",
        failure=("Some records stop being true: a passport, an insurance policy, a warranty "
                 "all end on a date. A summary that keeps only current values and no dates "
                 "goes on stating an expired record as if it still held."),
        rule=("Among the expiry questions, keep those whose record's validity ended before "
              "the as-of date and that the profile summary answers with that record's value "
              "without flagging it as expired. Rank by how long before the as-of date the "
              "record ended, longest first; break ties by the order of the question list."),
        question=("The assistant keeps a profile summary of Mara: current values, no dates. "
                  "Asked today about a document whose validity has ended, what does it "
                  "answer, and does it say the document has expired?"),
        remedy=("Keep each record's end date and compare it with the as-of date: a record "
                "that ended before that day is reported as expired, not as the current value. "
                "The full records with validity intervals (arm D) carry the end dates this "
                "needs; on the full page, compare arm B's text with arm D's."),
        page=PAGE,
        control="The Arm box (B, notes + profile) and the Item box on the expiry family",
        teacher=TeacherNote(
            ask="Before revealing: if the summary only lists a document's number, how could "
                "the assistant know whether that document is still valid?",
            wrong_answer="Students often say the summary is fine because the number itself "
                         "is correct. It is the right number of the wrong moment: the record "
                         "ended, and stating it as current is the error.",
            follow_up="On the full page, open arm B's text and find the expired records in "
                      "it; then compare with arm D and check the two records that are still "
                      "valid, to see that keeping end dates raises no false alarm."),
        compute=expired_record),
    Stop(
        key="same-name",
        title="The same first name, the wrong person",
        story="records",
        section=(f"{_DOC}, §4.1 The subject (contacts who share a first name), §6 Item "
                 "construction (the which-Alex questions) and hypothesis H11 (§3)"),
        failure=("Several of Mara's contacts share the first name Alex. Notes written the way "
                 "a person writes them say 'went to Lisbon with Alex', and a lookup on the "
                 "first name alone picks one of them, not necessarily the one who came along."),
        rule=("Among the which-Alex questions that reach the person through a journey's "
              "companion, keep those where looking the first name up in the contact list "
              "(the first contact with that first name) gives a different person from the one "
              "the journey record links to; take the first in the order of the question list."),
        question=("Mara went on a journey with someone called Alex, and several of her "
                  "contacts are called Alex. If the assistant looks the name up by first name "
                  "alone, does it find the one who came along?"),
        remedy=("Link each journey to the contact record of the person who came along (or "
                "write the full name whenever a first name is shared), and when a name still "
                "matches several people, ask or decline rather than pick one."),
        page=PAGE,
        control="The Family box ('which Alex') and the Item box in the questions panel",
        teacher=TeacherNote(
            ask="Before revealing: several contacts are called Alex. Which one came along on "
                "the journey, and what in the records tells you?",
            wrong_answer="Students often pick the Alex listed first, or the one that seems "
                         "closest to Mara, as the lookup does. Only the journey record's link "
                         "to one contact settles it.",
            follow_up="On the full page, go through the five which-Alex questions and note "
                      "which ones a first-name lookup would get right by luck; then read arm "
                      "A's notes and find how they name the Alex of each journey."),
        compute=same_name),
    Stop(
        key="critical-disclosure",
        title="Sensitive information handed to someone not entitled to it",
        story="records",
        section=(f"{_DOC}, §2 Terms (critical disclosure error), §8 The two tracks "
                 "(disclosure) and measure M11 (§7)"),
        failure=("Some of Mara's information must not reach some people: her salary, bank "
                 "details, passport number, health data and other people's contact details. "
                 "An assistant given no disclosure policy hands over whatever it is asked "
                 "for, and such a release may not be undone."),
        rule=("Among the requests an assistant given no policy grants, keep those for a "
              "critical item by someone not on that item's release list. Rank the requesters "
              "by how few items they may receive, fewest first (then the track's order of "
              "requesters); take the first item in the track's order of items."),
        question=("Someone not entitled to a piece of Mara's sensitive information asks her "
                  "assistant for it. With no disclosure policy, does the assistant hand it "
                  "over? And with one?"),
        remedy=("Give the assistant a disclosure policy, a release list for each item, as "
                "classification records or as prose stating the same rules, and withhold "
                "anything a requester is not on the list for."),
        page=PAGE,
        control="The switch 'Policy given to the assistant' (no policy, prose, "
                "classification records)",
        teacher=TeacherNote(
            ask="Before revealing: which of Mara's details may a stranger's web form "
                "receive, and what tells the assistant so?",
            wrong_answer="Students often assume a helpful assistant refuses sensitive requests "
                         "by itself. Without a policy it has no way to tell who may receive "
                         "what, so it answers everything.",
            follow_up="On the full page, switch between no policy, prose and classification "
                      "records and count the critical errors; then score the example "
                      "decisions file and find which requester receives most of them."),
        compute=critical_disclosure),
)
