"""The tour's four stops on one person's records (issue 22; seed 002).

Each stop's example is recomputed here from the raw files (``data/records/world.json``,
``items.json``, ``tracks.json``) with this file's own small reading of seed 002's rules —
tiers from the source kind, CP-01 and naive recency as §2 words them, an end date before the
as-of date, a first-name lookup, release lists — and compared with what the stop shows, so
the tour cannot rot silently when the world, the engine or a reader changes.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from core.glossary import find
from core.records.items import build_items
from core.records.views import change_dates, disclosure_view
from core.records.world import load_world
from core.tour import ORDER, STORIES, TourData
from core.tour import stops_records as mod
from core.tour._records_cases import disclosure_case, expiry_case, name_case, recency_case
from core.tour._records_views import POLICY_TOKENS, page_link
from core.tour.model import CHART_KINDS

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "records"
KEYS = ("naive-recency", "expired-record", "same-name", "critical-disclosure")


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


WORLD, ITEMS, TRACKS = _raw("world.json"), _raw("items.json")["items"], _raw("tracks.json")
RUN = dt.date.fromisoformat(WORLD["run_date"])


def _d(text):
    return None if text is None else dt.date.fromisoformat(text)


SOURCES = {s["id"]: {**s, "captured": _d(s["captured"]), "tier": WORLD["tiers"][s["kind"]]}
           for s in WORLD["sources"]}
FACTS = [{**f, "order": k, "valid_from": _d(f["valid_from"]), "valid_to": _d(f.get("valid_to"))}
         for k, f in enumerate(WORLD["facts"])]


@pytest.fixture(scope="module")
def views():
    data = TourData()
    return {s.key: s.compute(data) for s in mod.STOPS}, data


def _holding(attribute: str, day: dt.date) -> list[dict]:
    return [f for f in FACTS if f["attribute"] == attribute and f["valid_from"] <= day
            and (f["valid_to"] is None or day <= f["valid_to"])
            and SOURCES[f["source"]]["captured"] <= RUN]


def _cp01(facts):  # §2: the lower tier wins; within a tier, the later captured record
    return max(facts, key=lambda f: (-SOURCES[f["source"]]["tier"],
                                     SOURCES[f["source"]]["captured"], f["valid_from"],
                                     f["order"]))


def _recency(facts):  # §2: the most recently captured value wins, whatever its source
    return max(facts, key=lambda f: (SOURCES[f["source"]]["captured"], f["valid_from"],
                                     f["order"]))


def test_the_module_defines_exactly_its_stops_in_the_tour_order():
    assert tuple(s.key for s in mod.STOPS) == KEYS
    assert tuple(k for k in ORDER if k in KEYS) == KEYS
    for s in mod.STOPS:
        assert s.story == "records" and s.story in STORIES
        assert s.page == "pages/9_Personal_records.py" and (ROOT / s.page).exists()
        assert s.section.startswith("The personal-records study") and "§" in s.section
        assert all(getattr(s.teacher, f).strip() for f in ("ask", "wrong_answer", "follow_up"))


def test_every_stop_shows_its_failure_with_a_chart_and_the_numbers(views):
    got, _ = views
    for key in KEYS:
        v = got[key]
        assert v.key == key and v.shows_failure and not v.note
        assert v.chart is not None and set(CHART_KINDS[v.chart.kind]) <= set(v.chart.data)
        assert v.example and v.evidence and v.answer and v.reason and v.link
    assert got["expired-record"].chart.kind == "timeline"
    assert got["expired-record"].chart.marker == RUN.isoformat()


def test_naive_recency_is_wrong_where_the_conflict_policy_is_right(views):
    v = views[0]["naive-recency"]
    picked = []
    for k, t in enumerate(ITEMS):
        if t["family"] != "CONF" or t["query"]["op"] != "value":
            continue
        facts = _holding(t["query"]["attribute"], RUN)
        if len({f["value"] for f in facts}) < 2:
            continue
        cp, rec = _cp01(facts), _recency(facts)
        gap = SOURCES[rec["source"]]["tier"] - SOURCES[cp["source"]]["tier"]
        if gap > 0:
            picked.append((-gap, k, t, cp, rec))
    _, _, item, cp, rec = min(picked, key=lambda p: p[:2])
    assert dict(v.link) == {"pr_asof": RUN.isoformat(), "pr_policy": "recency",
                            "pr_family": "CONF", "pr_item": item["item_id"]}
    reference = {i.item_id: i.reference for i in build_items(load_world())}[item["item_id"]]
    assert cp["value"] == reference != rec["value"]
    rows = v.chart.data.set_index("who")
    assert rows.loc[rows["role"] == "resolver", "answer"].tolist() == [rec["value"], cp["value"]]
    assert rows.loc[rows["role"] == "resolver", "status"].tolist() == ["wrong", "right"]
    assert rec["value"] in v.answer and cp["value"] in v.answer
    ev = dict(v.evidence)
    assert ev["Source tier of the newest record (naive recency's pick)"] == str(
        SOURCES[rec["source"]]["tier"])
    # §4.2: recency and the policy disagree on three of the five live conflicts
    live = [a for a in dict.fromkeys(f["attribute"] for f in FACTS)
            if len({f["value"] for f in _holding(a, RUN)}) > 1]
    differ = sum(_cp01(_holding(a, RUN))["value"] != _recency(_holding(a, RUN))["value"]
                 for a in live)
    assert ev["Conflicts that day on which the two rules differ"] == f"{differ} of {len(live)}"
    assert (differ, len(live)) == (3, 5)


def test_the_expired_record_ended_before_the_as_of_date_and_the_profile_states_it(views):
    v = views[0]["expired-record"]
    stale = []
    for k, t in enumerate(ITEMS):
        if t["family"] != "STALE":
            continue
        mine = [f for f in FACTS if f["attribute"] == t["query"]["attribute"]]
        latest = max(mine, key=lambda f: f["valid_from"])
        # the profile summary: the most recently captured record, with no dates (§4.4 B)
        profile = _recency(mine)
        ended = latest["valid_to"] is not None and latest["valid_to"] < RUN
        stale.append((t, latest, ended, profile["value"] == latest["value"], k))
    qualify = [(-(RUN - f["valid_to"]).days, k, t, f) for t, f, ended, same, k in stale
               if ended and same]
    _, _, item, fact = min(qualify, key=lambda q: q[:2])
    days = (RUN - fact["valid_to"]).days
    assert dict(v.link) == {"pr_asof": RUN.isoformat(), "pr_arm": "B", "pr_family": "STALE",
                            "pr_item": item["item_id"]}
    assert fact["value"] in v.answer and f"{days} days" in v.answer
    ev = dict(v.evidence)
    n_ended = sum(e for _, _, e, _, _ in stale)
    assert ev["Days the record had ended before the as-of date"] == str(days)
    assert ev["Expiry questions whose record has ended"] == f"{n_ended} of {len(stale)}"
    assert ev["Still-valid records the full records wrongly flag"] == (
        f"0 of {len(stale) - n_ended}")
    bars = v.chart.data
    assert sorted(bars.loc[bars["status"] == "expired", "end"]) == sorted(
        f["valid_to"].isoformat() for _, f, e, _, _ in stale if e)
    assert all(e < RUN.isoformat() for e in bars.loc[bars["status"] == "expired", "end"])
    profile_row = bars[bars["status"] == "wrong"]
    assert len(profile_row) == 1 and profile_row["end"].iloc[0] > RUN.isoformat()


def test_a_first_name_lookup_finds_the_wrong_alex(views):
    v = views[0]["same-name"]
    contacts = WORLD["contacts"]
    journeys = {j["id"]: j for j in WORLD["journeys"]}
    first = WORLD["shared_first_name"]
    namesakes = [c for c in contacts if c["name"].split()[0] == first]
    looked = namesakes[0]  # the first contact called Alex in the list
    picked = None
    for t in ITEMS:
        if t["family"] == "ENT" and t["query"]["op"] == "companion":
            came = journeys[t["query"]["journey"]]["companion"]
            if came != looked["id"]:
                picked = (t, next(c for c in contacts if c["id"] == came))
                break
    item, right = picked
    field = item["query"]["field"]
    assert dict(v.link)["pr_item"] == item["item_id"] and dict(v.link)["pr_family"] == "ENT"
    assert looked[field] != right[field] and looked[field] in v.answer
    ev = dict(v.evidence)
    assert ev["Person the lookup finds"] == looked["name"]
    assert ev["Person the journey record links"] == right["name"]
    assert ev[f"Contacts sharing the first name {first}"] == f"{len(namesakes)} of {len(contacts)}"
    rows = v.chart.data
    assert rows.loc[rows["role"] == "truth", "answer"].tolist() == [right[field]]
    assert rows.loc[rows["role"] == "resolver", "answer"].tolist() == [looked[field],
                                                                        right[field]]


def test_the_critical_release_goes_to_someone_not_on_the_release_list(views):
    v = views[0]["critical-disclosure"]
    requesters, infos = list(TRACKS["requesters"]), TRACKS["disclosure"]
    entitled = {r: sum(r in i["release_to"] for i in infos) for r in requesters}
    # with no policy every request is granted (§8): the errors are the critical items asked
    # for by someone not on their list
    errors = [(entitled[r], requesters.index(r), k, r, i) for k, i in enumerate(infos)
              for r in requesters if i["critical"] and r not in i["release_to"]]
    _, _, _, who, info = min(errors, key=lambda e: e[:3])
    assert dict(v.link) == {"pr_cond": "none"}
    ex = dict(v.example)
    assert ex["Asked for"] == f"Mara's {info['label']}"
    assert info["critical"] in ex["Why it is critical"].lower()
    ev = dict(v.evidence)
    assert ev["Critical releases per condition"].startswith(f"no policy: {len(errors)};")
    assert disclosure_view("none").m11 == len(errors) and disclosure_view("structured").m11 == 0
    rows = v.chart.data
    assert rows["answer"].tolist() == ["releases it", "withholds it", "withholds it",
                                       "withholds it"]
    assert who == "web_form" and "web form" in ex["Asked by"]


def _page_params() -> dict[str, tuple[str, ...] | None]:
    """The page's URL parameters (``ChoiceParam``/``FlagParam`` keys) and, where the page
    writes them out, their tokens."""
    out = {}
    tree = ast.parse((ROOT / "pages/9_Personal_records.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("ChoiceParam",
                                                                          "FlagParam"):
            key = node.args[0].value
            tokens = next((ast.literal_eval(k.value) for k in node.keywords
                           if k.arg == "tokens"), None)
            out[key] = tokens
    return out


def test_every_link_uses_the_page_parameters_and_values_it_offers(views):
    params = _page_params()
    world, items = load_world(), build_items(load_world())
    dates = {d.isoformat() for d in change_dates(world)}
    for key in KEYS:
        link = dict(views[0][key].link)
        assert set(link) <= set(params), key
        if "pr_policy" in link:
            assert link["pr_policy"] in params["pr_policy"]
        if "pr_asof" in link:
            assert link["pr_asof"] in dates
        if "pr_item" in link:
            fam = {i.item_id: i.family for i in items}[link["pr_item"]]
            assert link.get("pr_family", fam) == fam
    assert set(POLICY_TOKENS.values()) == set(params["pr_policy"])


@pytest.mark.parametrize("bad, match", [
    ({"pr_when": "2026-09-06"}, "no parameter 'pr_when'"),
    ({"pr_asof": "2026-09-07"}, "not a value the page offers"),
    ({"pr_family": "CONF", "pr_item": "STALE-1"}, "not in family CONF"),
])
def test_a_link_the_page_cannot_restore_is_refused(bad, match):
    world = load_world()
    with pytest.raises(ValueError, match=match):
        page_link(world, build_items(world), **bad)


TOKEN = re.compile(r"(?<![A-Za-z_])([A-Z][A-Z0-9]+(?:-[A-Z]+)?|[μ⊥Δβπθγσα][*_A-Za-z]*|T_[a-z]+)")


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, tuple):
        for x in obj:
            yield from _strings(x)


def test_the_words_use_no_abbreviation_outside_the_glossary(views):
    # record values (a passport number, a postcode) are data, not vocabulary
    values = {str(f["value"]) for f in WORLD["facts"]}
    values |= {str(c[k]) for c in WORLD["contacts"] for k in ("phone", "email", "name")}
    data_tokens = {t for v in values for t in TOKEN.findall(v)}
    texts = []
    for s in mod.STOPS:
        texts += [s.title, s.section, s.failure, s.rule, s.question, s.remedy, s.control,
                  s.teacher.ask, s.teacher.wrong_answer, s.teacher.follow_up]
        v = views[0][s.key]
        texts += [v.answer, v.reason, *_strings(v.example), *_strings(v.settings),
                  *_strings(v.evidence), v.chart.title, v.chart.caption, v.chart.marker_label]
        texts += [str(x) for c in ("who", "text", "row") if c in v.chart.data
                  for x in v.chart.data[c]]
    unknown = {t for text in texts for t in TOKEN.findall(text)
               if t not in data_tokens and find(t) is None}
    assert not unknown, f"tokens no glossary term lists: {sorted(unknown)}"


def test_the_stops_share_one_world_through_the_memo(views):
    _, data = views

    def never():
        raise AssertionError("recomputed")

    for key in ("records:world", "records:items", "records:disclosure"):
        data.memo(key, never)


def test_a_world_where_nothing_qualifies_says_so():
    world = load_world()
    # every self-reported note captured before anything else: recency agrees with CP-01
    early = tuple(replace(s, captured=dt.date(2000, 1, 1)) if s.kind == "self-reported" else s
                  for s in world.sources)
    calm = replace(world, sources=early)
    items = build_items(calm, check=False)
    assert recency_case(calm, items, today=RUN) is None
    data = TourData()
    data.memo("records:world", lambda: calm)
    data.memo("records:items", lambda: items)
    v = mod.STOPS[0].compute(data)
    assert not v.shows_failure and v.chart is None and v.example == () and v.note
    # no end dates: nothing has expired
    endless = world.with_facts(replace(f, valid_to=None) for f in world.facts)
    assert expiry_case(endless, build_items(endless, check=False), today=RUN) is None
    # the companions are each the first of their name: the lookup cannot go wrong
    alexes = [c for c in world.contacts if c.first_name == world.shared_first_name]
    first = replace(world, journeys=tuple(
        replace(j, companion=alexes[0].id) if j.companion in {c.id for c in alexes} else j
        for j in world.journeys))
    assert name_case(first, build_items(first, check=False), today=RUN) is None


def test_the_check_fails_when_the_policy_protects_nothing():
    from core.records.disclosure import load_disclosure

    requesters, infos = load_disclosure()
    open_to_all = tuple(replace(i, release_to=tuple(requesters)) for i in infos)
    assert disclosure_case(requesters, open_to_all) is None
    case = disclosure_case(requesters, infos)
    assert case.shows_failure and not replace(case, released={
        **case.released, "structured": True}).shows_failure
