"""The two LLM prompts of seed 000 §9.6, as data (our restatement of the published text).

* **Answering** (§9.6.1 LLM-Direct, output schema §9.6.3): the system message holds the task,
  the answering principles and the 18 questions with their answer spaces; the user message is
  the persona's complete five-section NL memory render (:func:`core.prose.render.render`, or
  the release's ``nl_renders``); the reply is one JSON object
  ``{"answers": {qid: {"answer": label, "would_skip": bool}}}``.
* **Extraction** (§9.6.5 extraction task template, §8.6 stage 5): the system message is empty;
  the user message holds the template, the extraction specification (the source-question map,
  the context map, the answer spaces and edge labels of :mod:`core.testbed.questions`) and the
  render; the reply is one JSON object ``{qid: {source: label or null}}``.

The question wording follows the published Direct prompt; where the published text lost its
percent signs, the ranges are restated ("less_than_40 (below 40%)"). The released per-question
extraction hints are not reproduced (the seed only summarises them): the specification gives
each question's wording instead. Invariant (tested): every label of every question appears in
both prompts, and a prompt is a pure function of the document.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..prose.render import SECTIONS
from ..testbed.questions import QIDS, SOURCES, question

__all__ = ["ANSWER_SYSTEM", "QUESTION_TEXT", "Prompt", "answer_prompt", "extract_prompt"]


@dataclass(frozen=True)
class Prompt:
    """One chat call: the system message (may be empty) and the user message."""

    system: str
    user: str


#: qid -> (heading, question wording, {label: note}) of the Direct prompt (seed 000 §9.6.1)
QUESTION_TEXT: dict[str, tuple[str, str, dict[str, str]]] = {
    "A1": ("Sleep Duration Count (Sleep, 30 days)",
           "In the past 30 days, how many nights did this person sleep 7 hours or more?",
           {"fewer_than_10": "0-9 nights", "10_to_19": "10-19 nights",
            "20_or_more": "20-30 nights"}),
    "A2": ("Long Work Days Count (Work, 30 days)",
           "In the past 30 days, on how many days did this person work more than 9 hours?",
           {"0_to_3": "0-3 days", "4_to_7": "4-7 days", "8_or_more": "8+ days"}),
    "A3": ("Home-Cooked Share (Diet, 30 days)",
           "In the past 30 days, on what share of meal occasions did this person eat "
           "home-cooked food?",
           {"less_than_40": "below 40%", "40_to_69": "40-69%", "70_or_more": "70% or more"}),
    "B2": ("Exercise Frequency vs Profile (Exercise, 30 days)",
           "This person's profile describes exercising a certain number of days per week.\n"
           "In the past 30 days, how did their actual exercise frequency compare?",
           {"more_than_1_below": ">1 day/week less than profile",
            "within_1_day": "within +/-1 day/week of profile",
            "more_than_1_above": ">1 day/week more than profile",
            "no_frequency_described": "profile has no exercise frequency"}),
    "B3": ("Weekend Work vs Profile (Work, 30 days)",
           "This person's profile describes a specific approach to weekend work.\n"
           "In the past 30 days, did the actual weekend work pattern match that description?",
           {}),
    "C2": ("Social Plan Realization (Social, 14 days)",
           "In the past 14 days, on days when a social activity was planned, what share\n"
           "of those plans were actually realized?",
           {"below_25_pct": "below 25%", "25_to_50_pct": "25-50%", "above_50_pct": "above 50%",
            "no_plans": "no social plans in planner"}),
    "C3": ("Bedtime vs Target (Sleep, 14 days)",
           "In the past 14 days, on days when a target bedtime was set, did the person\n"
           "go to bed within 20 minutes of that target?", {}),
    "D1": ("Social Trend (Social, 30 days)",
           "Comparing the first 14 days to the last 16 days of the 30-day window: did\n"
           "the number of social activities per day increase, decrease, or stay the same?", {}),
    "D2": ("Diet vs Baseline (Diet, 30 days)",
           "In the past 30 days, did the person's daily home-cooked meal count and total\n"
           "meal count differ from the profile averages by more than 1 meal/day?", {}),
    "E1": ("Late Night Cause (Sleep, 30 days)",
           "In the past 30 days, on nights when bedtime was after midnight, which\n"
           "co-occurring factor appeared on more than 50% of those nights?",
           {"work_activity": "overtime/unusually long work hours on >50% of late nights",
            "social_activity": "social activity present on >50% of late nights",
            "no_single_factor": "neither factor exceeds 50%"}),
    "E2": ("Exercise Skip Cause (Exercise, 30 days)",
           "In the past 30 days, on days when exercise was planned but not done, did the\n"
           "person work more than 8.5 hours that same day?",
           {"no_fewer_than_30": "on fewer than 30% of those days",
            "between_30_60": "on 30-60% of those days",
            "yes_more_than_60": "on more than 60% of those days"}),
    "F1": ("Unplanned Social Count (Social, 30 days)",
           "In the past 30 days, on how many days did the person attend social\n"
           "activities when the planner showed no social intent?", {}),
    "F2": ("Tracker Missing vs Inactive (Exercise, 30 days)",
           "In the past 30 days, on days when the fitness tracker recorded no workout,\n"
           "did other sources indicate that the person exercised?", {}),
    "F3": ("Timesheet Missing vs Off (Work, 30 days)",
           "In the past 30 days, on days when the work timesheet had no entry, did\n"
           "other sources indicate that the person worked?", {}),
    "G1": ("Deliberate vs Incidental Exercise (Exercise, 30 days)",
           "In the past 30 days, on days when the person was physically active, was the\n"
           "activity deliberate exercise or incidental movement?", {}),
    "G2": ("Voluntary vs Obligatory Social (Social, 30 days)",
           "In the past 30 days, when the person attended social activities, were those\n"
           "activities voluntary or obligatory?", {}),
    "Ctrl1": ("Outside Meals (Diet, 7 days)",
              "In the past week, how many days did the person eat food prepared outside\n"
              "the home?", {}),
    "Ctrl2": ("Short Sleep Nights (Sleep, 7 days)",
              "In the past week, how many nights did the person sleep less than 6 hours?", {}),
}

_SECTION_NOTES = ("profile/background", "planner", "daily journal", "timesheet/measurements",
                  "wearable/tracker")


def _question_block(qid: str) -> str:
    heading, text, notes = QUESTION_TEXT[qid]
    lines = [f"## {qid} — {heading}", text]
    lines += [f"- {lab} ({notes[lab]})" if lab in notes else f"- {lab}"
              for lab in question(qid).labels]
    return "\n".join(lines)


def _answer_system() -> str:
    sections = "\n".join(f"  ## {s:<33}({n})" for s, n in zip(SECTIONS, _SECTION_NOTES,
                                                                strict=True))
    questions = "\n\n".join(_question_block(q) for q in QIDS)
    return f"""You will answer 18 survey questions about a single persona. The user message
contains the persona's complete natural-language memory document, organized
into five sections:

{sections}

For EACH of the 18 questions listed below:
  1. Read the question text carefully.
  2. Consider evidence from ALL relevant source sections.
  3. When sources disagree, use your judgment to determine the most likely
     true answer.
  4. Select exactly one answer label from the answer space (forced answer
     — you MUST pick one).
  5. Also decide: if you had the option to abstain (because evidence is too
     conflicting or insufficient for a confident judgment), would you?
     Record this as would_skip (true/false).

# Answering Principles
- Synthesize across sources. Different sources may tell different stories.
- No single source is presumed correct. Every source has potential biases.
- Forced answer required. Pick the best-supported answer even if ambiguous.
- The skip decision is separate from the forced answer.
- Use exact labels with underscores ("20_or_more", not "20 or more").
- Time windows matter (7, 14, or 30 days as specified per question).
- Cross-midnight times: treat 00:10 as 24:10.

# Output Format
Return a single JSON object with the schema given below. No prose outside
the JSON. No markdown fences.

{{"answers": {{"A1": {{"answer": "<label>", "would_skip": <true|false>}}, ...,
             "Ctrl2": {{"answer": "<label>", "would_skip": <true|false>}}}}}}

The "answers" object has exactly the 18 question IDs as keys; "answer" is always a
valid label from that question's answer space (never null, even when would_skip is true).

# Survey Questions
Answer ALL 18 questions. For each question, select exactly one answer label
from the answer space.

{questions}
"""


#: the Direct system prompt (seed 000 §9.6.1 and the output schema of §9.6.3)
ANSWER_SYSTEM = _answer_system()


def answer_prompt(document: str) -> Prompt:
    """The answering call for one persona's NL memory ``document`` (seed 000 §9.6.1)."""
    return Prompt(ANSWER_SYSTEM, document)


def _specification() -> str:
    blocks = []
    for qid in QIDS:
        q = question(qid)
        heading, text, _ = QUESTION_TEXT[qid]
        lines = [f"### {qid} — {heading}", text,
                 "answer space: " + ", ".join(q.labels),
                 "mapped sources: " + ", ".join(s for s in SOURCES if s in q.informative)]
        if q.edge:
            lines.append("edge labels (a fact about the source, not an abstention): "
                         + ", ".join(q.labels[e] for e in q.edge))
        if q.context:
            lines.append(f"context source: {q.context} (read it only to interpret each mapped "
                         "source, e.g. its baseline, plans or missing days)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


_SOURCE_LINES = "\n".join(f'    "{s}": <label_or_null>' + ("," if i < len(SOURCES) - 1 else "")
                          for i, s in enumerate(SOURCES))
_EXTRACT_TEMPLATE = f"""\
Read the extraction specification and the NL memory render for the current persona.
The memory render contains five source sections:
  {", ".join(SOURCES)}.
(In the render they are headed: {"; ".join(SECTIONS)}.)

Extract mu(source, question) for ALL 18 questions x 5 sources.
Follow the source-question map exactly:
  - if a source is not mapped to a question, write null;
  - if a mapped source has no relevant evidence, write null;
  - otherwise write exactly one valid answer label from that question's
    answer space.

For questions with a context-map entry, read the specified context source
only as instructed. Do not otherwise merge evidence across sources.

Write a JSON object whose top-level keys are question IDs:
{{
  "A1": {{
{_SOURCE_LINES}
  }},
  ...
}}
Every one of the 18 question IDs appears, each with all five sources. No prose outside
the JSON. No markdown fences.
"""


def extract_prompt(document: str) -> Prompt:
    """The extraction call for one persona's NL memory ``document`` (seed 000 §9.6.5).

    The system message is empty, as in the published template; the user message is the
    template, the specification and the document.
    """
    user = (f"{_EXTRACT_TEMPLATE}\n# Extraction specification\n\n{_SPECIFICATION}\n\n"
            f"# NL memory render\n\n{document}")
    return Prompt("", user)


_SPECIFICATION = _specification()
