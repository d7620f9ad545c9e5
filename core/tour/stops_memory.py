"""The tour's stops on the memory story: whose record of a person's days to believe.

Source: the multi-source memory benchmark (seed 000): §4.1 (a biased majority can outvote an
accurate minority), §8.1 (how each of the five sources distorts the same days), §11.2 (the
stated-vs-revealed class) and §8.7 (the selection protocol each rule follows: hard filters,
a ranking, then the lexicographic tiebreak person id, random seed, question order). Issue 22,
point 2.

Five stops, in :data:`core.tour.registry.ORDER`: ``biased-majority``, ``stale-profile``,
``stated-vs-revealed``, ``planner-optimism`` and ``device-dropout``. Each reads the store
(the cached resolver answers, the people's days), picks its example with the rule its
``rule`` text states (:mod:`._memory_rules`), and checks that the example shows the failure
(:mod:`._memory_views`, :mod:`._memory_habits`). Every "try it yourself" link opens the
Walkthrough on the example's person and question (``?seed=…&persona=…&q=…``).
"""

from __future__ import annotations

from ._memory_habits import planner_optimism_view, stale_profile_view, stated_vs_revealed_view
from ._memory_views import biased_majority_view, device_dropout_view
from .model import Stop, TeacherNote

__all__ = ["STOPS"]

_DOC = "The memory-benchmark paper"
_WALKTHROUGH = "pages/1_Walkthrough.py"
_TIEBREAK = ("then by person id, random seed and question order (the document's tiebreak, "
             "the memory-benchmark paper §8.7). Show the first.")

STOPS: tuple[Stop, ...] = (
    Stop(
        key="biased-majority",
        title="A biased majority outvotes an accurate minority",
        story="memory",
        section=f"{_DOC}, §4.1 (main results: “a biased majority can outvote an accurate "
                "minority”)",
        failure=("Majority vote counts sources as if each were an independent witness. When "
                 "several sources lean the same way on a question, they outvote the one "
                 "source that records it well, and the vote is wrong with a clear majority "
                 "behind it."),
        rule=("Among every test person of every simulated batch and all 18 questions, keep "
              "the pairs where (1) majority vote's answer is wrong, (2) it is a real "
              "majority: more sources give it than any other answer, so no tie was broken at "
              "random, and (3) the source the best single source trusts for that question "
              "(the one right most often on the batch's training people) gives the true "
              "answer. Rank them by the number of sources behind the wrong answer (most "
              "first), then by how many of the two learned confusion-matrix resolvers "
              f"(DSNBF and NBF) answer right (most first), {_TIEBREAK}"),
        question=("Five sources answer the same question about this person. Which answer "
                  "will majority vote give, and will it be right?"),
        remedy=("Stop counting votes and weigh each source by how well it answers this "
                "question: the best single source follows the one source that was right most "
                "often on the training people, and the learned confusion-matrix resolvers "
                "(NBF, DSNBF) learn from those people how each source's answer maps to the "
                "truth, so a source's known lean is corrected instead of counted."),
        page=_WALKTHROUGH,
        control=("The Question picker in the sidebar (then section 6, how the resolvers "
                 "settle the question)"),
        teacher=TeacherNote(
            ask=("Four sources agree and one disagrees. Which do you believe, and what would "
                 "you need to know about the sources to decide?"),
            wrong_answer=("“The four, because most sources agree.” Students treat agreement "
                          "as independent confirmation; here the agreeing sources err in "
                          "the same direction, so their agreement adds no evidence."),
            follow_up=("On the Walkthrough, keep the person and step through the other "
                       "questions with the Question picker: find one where majority vote is "
                       "right and say what differs about the sources that agree.")),
        compute=biased_majority_view,
    ),
    Stop(
        key="stale-profile",
        title="A stale profile after a change of habits",
        story="memory",
        section=(f"{_DOC}, §8.1 (the long-term profile's early-window anchoring) and §2.1 "
                 "(the temporal-shift class)"),
        failure=("A long-term profile summarises the first days it saw and is not updated. "
                 "When a life event changes the person's habits, the profile keeps stating "
                 "the old habit, and an answer read from it describes the person as they "
                 "used to be."),
        rule=("Among the test people whose habits change partway through the month (the "
              "temporal-shift class) and the four questions that count or average a daily "
              "habit the profile states as an average (nights of 7 hours' sleep or more, "
              "long work days, the home-cooked share of meals, meals not cooked at home in "
              "the last 7 days), keep the pairs where (1) the profile's answer is wrong and "
              "(2) the profile's stated average is nearer the average of the days before the "
              "change than of the days from it on. Rank them by how far the habit moved (the "
              "change in the daily average, in units of the month's day-to-day spread; "
              f"largest first), {_TIEBREAK}"),
        question=("The profile states one average for this habit. Which part of the month "
                  "does it describe, and which part decides the true answer?"),
        remedy=("Date every summary and prefer recent evidence over an old one: read the "
                "habit from the daily sources for the window the question asks about, or "
                "let a resolver learn how far to trust the profile for people whose habits "
                "change (the learned confusion-matrix resolver, DSNBF, infers the kind of "
                "person from the sources' pattern)."),
        page=_WALKTHROUGH,
        control=("The Question picker in the sidebar (then section 1's habits before and "
                 "after the change, and section 3, five sources on the same days)"),
        teacher=TeacherNote(
            ask="When was this profile written, and what happened to the person after that?",
            wrong_answer=("“The profile is right: it is the person's own long-term "
                          "summary.” Students read a summary as timeless; it describes only "
                          "the days it summarised, and nothing in it says it is out of "
                          "date."),
            follow_up=("On the Walkthrough, open section 1's table of the habits before and "
                       "after the change and find the habit whose change crossed the "
                       "question's line; then try the same question for a person with "
                       "stable habits.")),
        compute=stale_profile_view,
    ),
    Stop(
        key="stated-vs-revealed",
        title="What a person says against what the records show",
        story="memory",
        section=(f"{_DOC}, §8.1 (the self-report's directional bias) and §11.2 (the "
                 "stated-vs-revealed class)"),
        failure=("Some people describe an idealised self: more sleep, more exercise, less "
                 "overtime than they live. Their daily self-reports lean the same way, while "
                 "a log of what they did (a calendar, a fitness tracker) does not, so the "
                 "person's own account and the record disagree."),
        rule=("Among the test people of the stated-vs-revealed class and the questions about "
              "a daily habit the self-report states in numbers (sleep, work hours, meals, "
              "exercise minutes) on which it has a known lean, keep the pairs where (1) the "
              "self-report's answer is wrong on the side its lean predicts and (2) the "
              "objective log or the device log gives the true answer and records the same "
              "daily quantity, so the two can be drawn day by day (the objective log is taken "
              "when both qualify). Rank them by how many answer steps the self-report is off "
              "(most first), then by how far the reported days lie from the logged ones on "
              "the days both recorded, in units of the month's day-to-day spread (farthest "
              f"first), {_TIEBREAK}"),
        question=("The person's own daily report and an automatic log disagree about this "
                  "question. Which one matches what really happened?"),
        remedy=("Trust records of behaviour over self-descriptions where both cover the same "
                "thing, and correct a self-report by its known lean instead of averaging it "
                "in: a resolver that learns each source's typical errors from labelled "
                "people (the learned confusion-matrix resolver, DSNBF) does both."),
        page=_WALKTHROUGH,
        control=("The Question picker in the sidebar (then section 3, five sources on the "
                 "same days)"),
        teacher=TeacherNote(
            ask="Why would a person's own daily diary be wrong about them?",
            wrong_answer=("“The person knows best what they did.” Students equate "
                          "first-hand with accurate; self-reports follow how people wish to "
                          "see themselves, and a stated-vs-revealed person leans furthest."),
            follow_up=("On the Walkthrough, keep the question and pick a person with stable "
                       "habits (the Difficulty filter in the sidebar): how far off is their "
                       "self-report?")),
        compute=stated_vs_revealed_view,
    ),
    Stop(
        key="planner-optimism",
        title="The planner is more optimistic than the days",
        story="memory",
        section=(f"{_DOC}, §8.1 (the planner's positive bias: the planning fallacy) and "
                 "§8.7 (the preference “planner positive bias visible”)"),
        failure=("A planner records what the person intends, and intentions are rosier than "
                 "what happens: more sleep, fewer work hours, more exercise. An answer "
                 "counted from the plan therefore lands on the optimistic side of the "
                 "truth."),
        rule=("Among every test person and the four questions that count the days on which "
              "a daily habit crosses a line (nights of 7 hours' sleep or more, nights under 6 "
              "hours, work days over 9 hours, exercise days a week), keep the pairs where the "
              "planner's answer is wrong on its optimistic side (its known lean, as in the "
              "memory-benchmark paper's §8.7). Rank them by how many answer steps the planner is "
              "off (most first), "
              "then by the share of days on which the plan was rosier than the day (highest "
              f"first), {_TIEBREAK}"),
        question=("The planner answers from the plan, the truth comes from the lived days. "
                  "Will the planner's answer be too rosy, too gloomy or right?"),
        remedy=("Read intentions as intentions: use the planner for what the person meant to "
                "do (the plan-versus-reality questions), not for what happened, or correct "
                "its known optimism; the learned confusion-matrix resolvers (NBF, DSNBF) "
                "learn from training people how the planner's answers map to the truth."),
        page=_WALKTHROUGH,
        control=("The Question picker in the sidebar (then section 3, the planner's row "
                 "beside what happened)"),
        teacher=TeacherNote(
            ask=("If you planned 8 hours of sleep every night last month, on how many nights "
                 "did you get it?"),
            wrong_answer=("“The plan is a fair estimate.” Students treat plan and reality "
                          "as equally informative; the planning fallacy makes plans err in "
                          "one direction, so the error does not average out."),
            follow_up=("On the Bias lab, move the bias scale from 1 to 2 and compare how "
                       "much majority vote and DSNBF lose.")),
        compute=planner_optimism_view,
    ),
    Stop(
        key="device-dropout",
        title="A missing device day is not an inactive day",
        story="memory",
        section=(f"{_DOC}, §8.1 (device-log missingness: non-wear, connectivity loss, "
                 "battery limits) and §8.2 (the question “Tracker missing vs inactive”)"),
        failure=("A fitness tracker that is not worn, flat or offline records nothing that "
                 "day. Read as a day without exercise, a lost day makes the person look less "
                 "active than they were, so the device's answer can be wrong although "
                 "nothing about the person's behaviour explains it."),
        rule=("Among every test person and the exercise questions the device log answers, "
              "keep the pairs where (1) the device's answer is wrong, (2) the person "
              "exercised on at least one day the device lost, and (3) the same people and "
              "days regenerated with every device day recorded (the Bias lab's dropout scale "
              "at 0; each source keeps its own random draws) make the device's answer right "
              "without changing the true answer, so the lost days, not the behaviour, "
              "explain the error. Rank them by the number of lost exercise days (most "
              f"first), then by their share of all lost days (highest first), {_TIEBREAK}"),
        question=("The device log has no record on some days. What did the person do on "
                  "those days, and will the device's answer be right?"),
        remedy=("Treat a day without a record as unknown, not as a day without exercise: an "
                "answer built from the recorded days is about those days only, so check it "
                "against the sources that did record the missing days (the daily self-report "
                "has every day) before believing it. On the Bias lab, the dropout scale at 0 "
                "removes the lost days, and errors of this kind with them."),
        page=_WALKTHROUGH,
        control=("The Question picker in the sidebar (then section 3, where grey bands with "
                 "a cross are days the device lost); on the Bias lab, the dropout scale"),
        teacher=TeacherNote(
            ask="The tracker shows no workout on Tuesday. What do you know about Tuesday?",
            wrong_answer=("“The person did not exercise on Tuesday.” Students read an empty "
                          "record as a negative one; a tracker that was not worn records "
                          "nothing either way."),
            follow_up=("On the Bias lab, set the dropout scale to 2 and then to 0, and "
                       "compare the resolvers' accuracy at each setting.")),
        compute=device_dropout_view,
    ),
)
