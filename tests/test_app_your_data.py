"""The "Your data" page in Streamlit's test runner: the default view, every built-in set, an
upload that is refused while the last good table stays, the what-if, and the URL state.

Every expected number is read from ``core.fusion.views`` (the objects the page draws), never
typed in."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.fusion.builtin import BUILTIN_SETS, load_builtin
from core.fusion.views import copy_view, example_table, fit_fusion
from tests.app_support import plain

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "11_Your_data.py")
MARK = "QZXJ"


def run(params: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()


def texts(at: AppTest) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title",
                 "header", "subheader", "text", "exception"):
        out += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    for m in at.metric:
        out += [str(m.label), str(m.value)]
    return out


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _array(value) -> np.ndarray:
    if isinstance(value, dict):  # plotly's typed-array encoding
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value, float)


def what_if_bars(at: AppTest) -> dict[str, dict[str, float]]:
    """The what-if chart's bars: trace name → value → probability."""
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        names = [t.get("name") for t in spec["data"]]
        if names[:2] == ["before", "after the change"]:
            return {t["name"]: dict(zip(t["y"], _array(t["x"]), strict=True))
                    for t in spec["data"][:2]}
    raise AssertionError("no what-if chart")


@pytest.fixture(scope="module")
def flight_copies():
    return copy_view(fit_fusion(load_builtin("flight")))


def test_the_default_view_runs_clean_and_tells_the_flight_story(flight_copies):
    at = run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning
    assert at.button_group(key="yd_set").value == "flight"
    head = flight_copies.headline
    story = " ".join(plain(m.value) for m in at.markdown)
    assert f"{head.size} sources say exactly the same thing" in story
    assert ", ".join(head.members) in story
    assert f"on {head.outvoted} checked items majority vote took their wrong value" in story
    assert f"It gets {head.recovered} of those {head.outvoted} items right" in story
    assert metric(at, "Majority vote") == f"{100 * flight_copies.mv:.1f}\u00a0%"
    assert metric(at, "ACCU + DEPEN") == f"{100 * flight_copies.dependent:.1f}\u00a0%"
    assert flight_copies.dependent > flight_copies.mv
    assert len(at.get("plotly_chart")) == 4  # dependence, board, what-if, reliability
    headers = [h.value for h in at.header]
    assert "Copies that outvote the truth" in headers
    assert "Why is a learned resolver no better than majority vote here?" in headers


@pytest.mark.parametrize("key", [b.key for b in BUILTIN_SETS])
def test_every_built_in_set_opens_from_its_link(key):
    at = run({"yd_set": key})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning
    assert at.button_group(key="yd_set").value == key
    claims = load_builtin(key).claims
    assert metric(at, "Claims") == f"{claims.n_claims:,}"
    assert metric(at, "Sources") == f"{claims.n_sources:,}"
    assert at.get("plotly_chart")
    if key == "nq_open":
        assert "Marked by people, or by exact match?" in [h.value for h in at.header]
        at.button_group(key="yd_label").set_value("exact_match").run()
        assert not at.exception and at.query_params["yd_label"] == "exact_match"


def test_the_what_if_moves_the_posterior_the_right_way(flight_copies):
    at = run()
    head = flight_copies.headline
    drop = next(w for w in at.multiselect if w.key.startswith("yd_wi_drop_"))
    assert set(drop.value) <= set(head.members) and drop.value  # the copies, switched off
    bars = what_if_bars(at)
    sentence = next(plain(m.value) for m in at.markdown if m.value.startswith("Before,"))
    truth = re.search(r"The truth is (.+?)\.", sentence).group(1)
    assert bars["after the change"][truth] > bars["before"][truth]
    copied = max(bars["before"], key=bars["before"].get)
    assert copied != truth and bars["after the change"][copied] < bars["before"][copied]
    # switch them back on, and make one copy say the truth instead
    drop.set_value([]).run()
    who = next(w for w in at.selectbox if w.key.startswith("yd_wi_who_"))
    who.set_value(head.members[0]).run()
    to = next(w for w in at.selectbox if w.key.startswith("yd_wi_to_"))
    to.set_value(truth).run()
    assert not at.exception
    bars = what_if_bars(at)
    assert bars["after the change"][truth] > bars["before"][truth]
    assert bars["after the change"][copied] < bars["before"][copied]


def test_the_url_restores_a_built_in_view_and_follows_the_widgets():
    at = run({"yd_set": "mozafari", "yd_cov": "0.5", "yd_methods": ["mv", "dawid_skene"],
              "yd_learned": "glad", "yd_pair": "beyond", "yd_rel": ["dawid_skene"]})
    assert not at.exception and not at.warning
    assert at.button_group(key="yd_set").value == "mozafari"
    assert at.slider(key="yd_cov").value == 0.5
    assert sorted(at.button_group(key="yd_methods").value) == ["dawid_skene", "mv"]
    assert at.selectbox(key="yd_learned").value == "glad"
    assert at.button_group(key="yd_pair").value == "beyond"
    assert at.button_group(key="yd_rel").value == ["dawid_skene"]
    at_cov = next(d.value for d in at.dataframe if "answered" in d.value.columns)
    assert len(at_cov) == 2
    assert (at_cov["answered"] == np.ceil(0.5 * at_cov["n"])).all()  # the link's coverage
    at.slider(key="yd_cov").set_value(0.65).run()
    assert at.query_params["yd_cov"] == "0.65"
    at.button_group(key="yd_set").set_value("adult").run()
    assert not at.exception and at.query_params["yd_set"] == "adult"


@pytest.mark.parametrize("params", [
    {"yd_set": f"<img src=x onerror=alert(1)>{MARK}"},
    {"yd_cov": f"![x](http://example.invalid/{MARK}.png)"},
    {"yd_methods": [f"**{MARK}**", "mv"]},
    {"yd_learned": f":red[{MARK}]"},
    {"yd_minutes": "1e308"},
    {"yd_set": ["flight", "adult"]},
])
def test_a_hostile_link_gives_one_plain_warning_and_the_default(params):
    at = run(params)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.warning) == 1
    assert "the default is shown" in plain(at.warning[0].value)
    assert not any(MARK in t for t in texts(at))
    assert at.button_group(key="yd_set").value in ("flight",)


def _csv(frame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def test_a_refused_upload_keeps_the_last_good_table_with_one_line():
    at = run({"yd_set": "upload"})
    assert not at.exception and "Upload a table of claims" in at.info[0].value
    good = example_table(40)
    at.file_uploader(key="yd_upload").set_value(("good_claims.csv", _csv(good),
                                                 "text/csv")).run()
    assert not at.exception and not at.error
    n = f"{len(good):,}"
    assert metric(at, "Claims") == n
    assert any("good_claims.csv" in plain(c.value) for c in at.caption)
    # a file that cannot be read: not UTF-8
    at.file_uploader(key="yd_upload").set_value(("broken.csv", b"item,source,claim\n\xff,x,1\n",
                                                 "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1
    line = plain(at.error[0].value)
    assert line.startswith("This file was refused: line 2: not UTF-8") and "good_claims.csv" \
        in line
    assert metric(at, "Claims") == n
    # a file that reads, but whose table is refused: a repeated (item, source) pair
    dup = good.iloc[[0, 1, 0]]
    at.file_uploader(key="yd_upload").set_value(("dup.csv", _csv(dup), "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1
    line = plain(at.error[0].value)
    assert "row 3: source" in line and "already claimed item" in line
    assert "good_claims.csv" in line
    assert metric(at, "Claims") == n


def test_an_upload_maps_its_columns_and_reads_the_wide_layout():
    at = run({"yd_set": "upload"})
    good = example_table(30).rename(columns={"item": "flight", "source": "site",
                                             "claim": "value"})
    wide = good.pivot(index="flight", columns="site", values="value").fillna("").reset_index()
    at.file_uploader(key="yd_upload").set_value(("wide.csv", _csv(wide), "text/csv")).run()
    assert not at.exception and not at.error
    layout = next(b for b in at.button_group if b.key.startswith("yd_layout_"))
    assert layout.value == "wide"
    assert metric(at, "Claims") == f"{len(good):,}"
    assert metric(at, "Items with truth") == "0"
    assert "No truth is known here" in " ".join(plain(m.value) for m in at.markdown)
    assert "A reliability diagram needs items with a known truth" in " ".join(
        i.value for i in at.info)


def test_the_tours_link_opens_the_what_if_on_its_item_and_refuses_a_stranger():
    """The guided tour's copy-cluster stop links here with ``yd_item`` (issue 22)."""
    from core.tour import TourData, compute_stop

    link = dict(compute_stop("copy-cluster", TourData()).link)
    at = run(link)
    assert not at.exception and not at.warning
    boxes = [s for s in at.selectbox if s.key and s.key.startswith("yd_wi_item_")]
    assert len(boxes) == 1 and boxes[0].value == link["yd_item"]
    stranger = run({"yd_set": "flight", "yd_item": f"**{MARK}**"})
    assert not stranger.exception and len(stranger.warning) == 1
    assert MARK not in plain(stranger.warning[0].value)
    assert "yd_item" not in stranger.query_params
