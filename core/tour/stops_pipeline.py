"""Stops of the tour (issue 22) on the memory pipeline: extraction, wording, abstention, hints.

Four failure modes of seed 000 past the sources themselves, each computed in its own private
module: a misread atom against a wrong rule (§4.2, :mod:`._pipeline_extraction`), an
extractor meeting wording it was not written for (§8.6, §8.8, :mod:`._pipeline_wording`),
what a calibrated abstention threshold buys and costs (§4.1, Appendix 9.2 and 10.2,
:mod:`._pipeline_selective`) and bias hints that over-correct (§4.1, Appendix 11.2,
:mod:`._pipeline_hints`). The words here are fixed; the numbers come from each view.
"""

from __future__ import annotations

from ._pipeline_extraction import NOISE_SEED, extraction_view
from ._pipeline_hints import hints_view
from ._pipeline_selective import selective_view
from ._pipeline_wording import PARAPHRASE_SEED, PER_CLASS, RATE, SEED, wording_view
from .model import Stop, TeacherNote

__all__ = ["STOPS"]

_EXTRACTION = Stop(
    key="extraction-or-resolution",
    title="A misread source or a wrong rule: extraction errors against resolution errors",
    story="memory",
    section="The memory-benchmark paper, §4.2 (the resolver × input 2 × 2) and §8.8 (how often "
            "the extractor "
            "misreads)",
    failure="Before a resolver sees a person's records, an extractor reads them from prose into "
            "one atom per source and question, and it sometimes misreads. A wrong final answer "
            "can come from the extractor (a misread source) or from the resolver (a poor rule "
            "for weighing the sources). Crossing two resolvers with two inputs — atoms read "
            "straight from the records and atoms the extractor read — tells the two apart.",
    rule="Extraction errors are simulated at the paper's GPT-5.4 extractor's error rate for each "
         "source (the memory-benchmark paper §8.8), random draws from generator seed "
         f"{NOISE_SEED} taken in the "
         "store's seed order, as on the Extraction page. Among the test people's questions "
         "where the learned resolver (DSNBF) is right on the records' atoms, also right on the "
         "extracted atoms before the errors, wrong after them, and exactly one of the "
         "question's atoms was misread: first those where majority vote is wrong even on the "
         "records' atoms, then those where the misread atom had been the true answer, then the "
         "highest DSNBF confidence; ties go to the lower random seed, the person's id in "
         "alphabetical order, then the question order.",
    question="The learned resolver (DSNBF) is right on this question when it reads the atoms "
             "straight from the records. The extractor misreads one source's atom. Will DSNBF "
             "still be right? And over all questions, which costs more: the extractor's "
             "misreads, or using majority vote instead of DSNBF?",
    remedy="Fix each error where it happens. A resolution error goes away only with a better "
           "resolver (DSNBF instead of majority vote recovers most of the gap); an extraction "
           "error only with a better extractor. On the Extraction page, set the noise profile "
           "to uniform with a flip rate of 0 and the extraction share of the gap all but "
           "disappears; set method B to NBF, DSNBF's close relative, and the resolution share "
           "shrinks.",
    page="pages/10_Extraction.py",
    control="The noise profile buttons (GPT-5.4's error rates) and the Method A and Method B "
            "boxes above the 2 × 2; the person, question and source boxes at the top show the "
            "prose behind the misread atom",
    teacher=TeacherNote(
        ask="Before the chart: when a resolver's answer is wrong, how could you find out "
            "whether the extractor or the resolver is to blame?",
        wrong_answer="Most students blame the extractor, because reading prose feels like the "
                     "hard part. Holding the resolver fixed and swapping the input shows the "
                     "opposite: in the paper the resolver accounts for about 81 % of the gap "
                     "and the input for 19 % (the memory-benchmark paper §4.2).",
        follow_up="On the Extraction page switch the noise profile to uniform and move the flip "
                  "rate from 0 to 0.3: at what flip rate does the extraction share of the gap "
                  "overtake the resolution share?"),
    compute=extraction_view,
)

_WORDING = Stop(
    key="unseen-wording",
    title="An extractor meets wording it has never seen",
    story="memory",
    section="The memory-benchmark paper, §8.6 (writing the records as prose and reading them "
            "back) and §8.8 (how "
            "often the extractor reads an atom right)",
    failure="Our extractor reads back the very sentences our renderer writes, so on its own "
            "prose it is right almost everywhere: a round trip that proves little. Reword the "
            "same facts (other words, another clause order, another number format) and the "
            "sentences it was never written for stop reading: it leaves an atom empty, or reads "
            "it from the other days and lands on another answer.",
    rule=f"The first {PER_CLASS} test people of each difficulty class of the default testbed's "
         f"first batch (random seed {SEED}), their prose reworded at the Extraction page's "
         f"setting (each kind of rewrite on {100 * RATE:g} % of the lines it fits, generator seed "
         f"{PARAPHRASE_SEED}). Among the atoms a question reads that the extractor got right on "
         "the prose as written, take those the reworded prose turns into another answer "
         "(failing any, an empty one), first those with the fewest unread days behind them; "
         "ties go to the question order, the source order and the order of the people.",
    question="Our extractor reads its own sentences back without a mistake. Reword about one "
             "sentence in ten — the same facts in other words — and will it still read this "
             "person's atom right?",
    remedy="Test an extractor on wording it was not written for before trusting its round trip, "
           "and teach it the new wording or use one that generalises. Downstream, a resolver "
           "that learned each source's confusion table loses less to the misreads: the noise "
           "profile “ours on reworded prose” on the Extraction page shows what these errors "
           "cost each resolver.",
    page="pages/10_Extraction.py",
    control="The noise profile “ours on reworded prose”, and above it the section “Like for "
            "like: the same facts, worded otherwise”",
    teacher=TeacherNote(
        ask="Why is an extractor's perfect score on its own prose no evidence that it works?",
        wrong_answer="Students take the round trip as validation because the number is high and "
                     "exact; it only shows that the extractor reads the sentences it was "
                     "written for.",
        follow_up="On the Extraction page pick the noise profile “ours on reworded prose” and "
                  "compare each resolver's accuracy on the noisy input with its accuracy on the "
                  "records: which loses least, and why?"),
    compute=wording_view,
)

_SELECTIVE = Stop(
    key="answer-or-abstain",
    title="Answering versus abstaining: what a threshold buys and what it costs",
    story="memory",
    section="The memory-benchmark paper, §4.1 (main results and selective question answering) and "
            "Appendix 9.2 "
            "and 10.2 (the skip rules and their calibrated thresholds)",
    failure="A resolver that may abstain answers only when its two likeliest answers are far "
            "enough apart. Its accuracy on the questions it answers rises, but the answers it "
            "holds back are not all wrong ones: right answers are withheld too, and coverage "
            "(the share of questions answered) falls. The threshold each batch's calibration "
            "people chose sets the trade.",
    rule="The method is DSNBF with skipping, the paper's headline selective resolver (the "
         "memory-benchmark paper "
         "§4.1), refitted on every random seed of the store as the Selective QA page does, at "
         "the median of the per-seed calibrated thresholds (the page's default). The example "
         "question is, among the answers the threshold holds back that would have been wrong, "
         "the one with the smallest gap between the two likeliest answers; ties go to the lower "
         "random seed, the person's id, then the question order.",
    question="At its calibrated threshold the resolver holds back some of its answers. Are most "
             "of the answers it holds back ones it would have got wrong?",
    remedy="Choose the threshold by what a wrong answer costs against a missing one: a lower "
           "threshold answers more (more right answers and more wrong ones), a higher one "
           "answers less but better. Where a wrong answer is much worse than none, raise it; "
           "where every answer is needed, lower it or answer everything.",
    page="pages/4_Selective_QA.py",
    control="The method buttons (DSNBF+SKIP) and the threshold slider",
    teacher=TeacherNote(
        ask="If a resolver abstains on the questions it is unsure of, what do you give up?",
        wrong_answer="Students expect abstention to drop only wrong answers (“it skips what it "
                     "would get wrong”); in fact many held-back answers would have been right, "
                     "only less certain — the stop's evidence counts them.",
        follow_up="On the Selective QA page move the threshold from 0 to 0.9 and note coverage "
                  "and the accuracy on the answered questions at each step: where would you set "
                  "it if a wrong answer cost five times as much as a missing one?"),
    compute=selective_view,
)

_HINTS = Stop(
    key="hints-overcorrect",
    title="Bias hints that over-correct",
    story="memory",
    section="The memory-benchmark paper, §4.1 (what the Schema-aware prompt buys) and Appendix "
            "11.2 (Tables 12 and "
            "13: the stated-vs-revealed people)",
    failure="Telling a language model (LLM) which way each source leans — “the self-report "
            "over-reports exercise, the planner overstates intentions” — sounds like what a "
            "resolver learns. But a hint names a direction, not a size or a person: for people "
            "whose stated habits differ from what they do, the hinted model corrects the wrong "
            "things and ends up less accurate than without the hints.",
    rule="With a store imported from the authors' release that holds both prompts' answers for "
         "test people of the stated-vs-revealed class: the first model in the paper's order, "
         "the question where the hints lose most answers on that class (ties: question order), "
         "and the first person (by random seed, then id) the plain prompt gets right and the "
         "hinted one wrong. Otherwise the paper's numbers: among the question sets Appendix "
         "11.2 quotes for both prompts of both models, the one where the hints cost most.",
    question="The Schema-aware prompt adds to the plain (Direct) prompt which way each source "
             "leans. For people whose stated habits differ from what they do, will the hints "
             "make the model better or worse?",
    remedy="Replace the hints by what they stand for, measured: a resolver that learns each "
           "source's confusion table from labelled people (DSNBF) corrects each source by the "
           "amount the data show, for each kind of person, and stays well ahead on exactly "
           "these questions.",
    page="pages/2_Leaderboard.py",
    control="The forced-accuracy table's imported model answers rows (a store imported from the "
            "authors' release), and further down the question and source boxes of the "
            "confusion tables: what the daily self-report says against the truth",
    teacher=TeacherNote(
        ask="A model is told “the self-report over-reports exercise”. For whom could that hint "
            "make its answers worse?",
        wrong_answer="Students expect more information always to help, and on average it does "
                     "a little (the memory-benchmark paper §4.1: 0.8 to 5.9 points); they miss "
                     "that the same hint "
                     "over-corrects the people it does not describe.",
        follow_up="On the Leaderboard open the daily self-report's confusion table for the "
                  "social trend question and switch on NBF's learned table: what does the "
                  "learned table know that the hint does not?"),
    compute=hints_view,
)

STOPS: tuple[Stop, ...] = (_EXTRACTION, _WORDING, _SELECTIVE, _HINTS)
