"""The page registry: one frozen record per page of the app, in menu order.

The home page draws one card per record (``Home.py``) and a page may take its browser title
and icon from its record (:func:`page`). Adding a page: its file in ``pages/`` and one record
here (``CONTRIBUTING.md``, "A page").

Invariants (``tests/test_pages_registry.py``): every ``pages/<n>_<Title>.py`` file has exactly
one record and every record's file exists; paths, titles and icons are unique; the records are
in the files' menu order (their number prefix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["HOME_SCRIPT", "HOME_TITLE", "PAGES", "Page", "page"]

#: The home page's script. Under the pages-directory convention the first menu entry is named
#: after the entry script's file, so the file is ``Home.py`` (``app.py`` is a link to it, for
#: ``streamlit run app.py`` and the commands that name it).
HOME_SCRIPT = "Home.py"
#: The first menu entry's label: what Streamlit makes of :data:`HOME_SCRIPT`'s name.
HOME_TITLE = "Home"


@dataclass(frozen=True)
class Page:
    """One page of the app.

    Attributes
    ----------
    path : str
        Its script, relative to the app's root (``pages/2_Leaderboard.py``).
    title : str
        Its name in the menu and on its card.
    icon : str
        A Streamlit Material icon (``:material/leaderboard:``).
    teaches : str
        What a student learns there, in one or two plain sentences (the home card's text).
    """

    path: str
    title: str
    icon: str
    teaches: str

    @property
    def url_path(self) -> str:
        """Its URL path under the pages-directory convention: the file name without its
        number prefix (``pages/3_Bias_lab.py`` is served at ``/Bias_lab``)."""
        return re.sub(r"^[0-9]*[_ -]*", "", self.path.removeprefix("pages/").removesuffix(".py"))

    def __post_init__(self) -> None:
        if not (self.path.startswith("pages/") and self.path.endswith(".py")):
            raise ValueError(f"a page's path is pages/<n>_<Title>.py, not {self.path!r}")
        if not self.icon.startswith(":material/") or not self.title or not self.teaches:
            raise ValueError(f"page {self.path!r} needs a title, a :material/ icon and a "
                             "sentence of what it teaches")


PAGES: tuple[Page, ...] = (
    Page("pages/0_Tour.py", "Tour", ":material/tour:",
         "Start here: one stop for each way conflicting evidence goes wrong — a real "
         "example, a question to answer before the reveal, and a link that opens the full "
         "page on the same example."),
    Page("pages/1_Walkthrough.py", "Walkthrough", ":material/route:",
         "Follow one persona and one question from the latent days through five biased "
         "sources to atoms and the ground truth, and see which distortion moved each "
         "source's answer."),
    Page("pages/2_Leaderboard.py", "Leaderboard", ":material/leaderboard:",
         "Every resolver — majority vote, bias-corrected and bias-aware fusion, naive Bayes "
         "fusion, unsupervised Dawid–Skene — with 95 % intervals beside the memory-benchmark "
         "paper's numbers, by reasoning type and difficulty, and the per-source reliability "
         "that explains them."),
    Page("pages/3_Bias_lab.py", "Bias lab", ":material/science:",
         "Drag the bias and dropout sliders or change the difficulty mix: one seed is "
         "regenerated and every resolver refitted, and a panel says what broke."),
    Page("pages/4_Selective_QA.py", "Selective QA", ":material/tune:",
         "Move a resolver's abstention threshold and watch coverage, selective accuracy, "
         "F0.5 (a score that weighs precision above recall) and the risk–coverage curve, "
         "with the calibrated threshold marked."),
    Page("pages/5_Reliability.py", "Reliability", ":material/show_chart:",
         "Reliability diagrams (binned, isotonic and smooth) with consistency bands, and the "
         "Brier score split into miscalibration, discrimination and uncertainty — for the "
         "memory benchmark's resolvers, a belief-store scenario, real question-answering "
         "systems (NQ-open) or your own CSV — under the truth or an incomplete answer key."),
    Page("pages/6_Ranking_reversal.py", "Ranking reversal", ":material/swap_vert:",
         "Slide the prevalence across the crossover (a + b)/2 and watch a strictly proper "
         "score change its mind; the gap split exactly into omitted truths and false "
         "matches, the four scoring protocols, the memory-benchmark bridge and real "
         "question-answering systems (NQ-open) ranked by exact match versus humans."),
    Page("pages/7_Pilot_budget.py", "Pilot budget", ":material/savings:",
         "How many human labels settle the question: simulated pilots (human-only versus "
         "TriSource-Restore), one pilot walked through select → repair → escalate → gate, "
         "and the same budgets on real held-back human labels."),
    Page("pages/8_Glossary.py", "Glossary", ":material/menu_book:",
         "Every term, short form and symbol the pages use, in plain words, with where it "
         "comes from, and how the pages sign a gap between two rules."),
    Page("pages/9_Personal_records.py", "Personal records", ":material/badge:",
         "One person's records on a timeline: move the as-of date, switch between the "
         "conflict policy and naive recency, read the same facts written six ways, browse "
         "the questions, disclosure and write-back, and score your own response file."),
    Page("pages/10_Extraction.py", "Extraction", ":material/text_snippet:",
         "Read a person's records as the prose the resolvers really see, select an atom to "
         "highlight the sentences it came from, check how faithful the extractor is, and "
         "flip atoms to see what a worse extractor costs each resolver."),
    Page("pages/11_Your_data.py", "Your data", ":material/upload_file:",
         "Run every resolver on a real table of conflicting claims, or on your own: see web "
         "sites that copy each other outvote the truth, a copy-aware method recover it, and "
         "why a learned resolver can lose to a plain vote."),
)


def page(path: str) -> Page:
    """The record of the page whose script is ``path`` (``pages/2_Leaderboard.py``)."""
    for p in PAGES:
        if p.path == path:
            return p
    raise ValueError(f"no page {path!r}; known: {', '.join(p.path for p in PAGES)}")
