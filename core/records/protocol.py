"""The run protocol of seed 002 (*Personal Dimension Benchmark v1: methods*, §5, §9, §12) for
anyone who runs a model elsewhere: a randomised call plan with every prompt, and the way a
reply becomes a line of the scored files.

§9: "Tools disabled, the agent system prompt replaced with a neutral one, one JSON object per
response against a fixed contract, call order randomised across the whole grid." §12: the
unedited raw runs of every call in all three tracks are published. :func:`plan_calls` makes
the grid of §5 —

* **items**: 43 items × the arms × replicates (516 calls with six arms and two), one call
  per item, the arm's text (:func:`.render.render`) as the records;
* **disclosure**: 3 policy conditions × 3 requesters × replicates (18 calls with two), one
  call per requester asking for all twelve information items, so a call makes twelve
  release decisions (§5: "36 release decisions per condition per replicate"); the records
  are arm D's text, the policy none, :func:`.disclosure.prose_policy` or
  :func:`.disclosure.structured_policy`;
* **write-back**: 3 arms (A, C, D) × 6 updates × replicates (36 calls with two);

— and shuffles it as one list with ``numpy.random.default_rng(seed)``. Every call carries
``system`` (:data:`SYSTEM_PROMPT`, the same for every call), ``prompt`` (the user message)
and ``key`` (the fields of the scored line the runner supplies); the model's reply is one
JSON object with the call's ``reply_fields``. :func:`response_lines` turns a call and its
parsed reply into the lines of :mod:`.score`, :mod:`.disclosure` or :mod:`.writeback`'s
contract (twelve for a disclosure call). Nothing here calls a model.
"""

from __future__ import annotations

import datetime as _dt
import json

import numpy as np

from .disclosure import CONDITIONS, InfoItem, prose_policy, structured_policy
from .items import Item
from .render import ARMS, render
from .world import RUN_DATE, World
from .writeback import WRITEBACK_ARMS, Update

__all__ = ["REPLY_FIELDS", "SYSTEM_PROMPT", "TRACKS", "plan_calls", "response_lines"]

#: The neutral system prompt of every call (§9): no persona, no hint of a policy or of what
#: is measured.
SYSTEM_PROMPT = ("You are given some records and a task about them. Use only the records in "
                 "the message. Reply with one JSON object and nothing else.")
TRACKS = ("items", "disclosure", "writeback")
#: What the model writes in each track: field → how the prompt asks for it.
REPLY_FIELDS = {
    "items": {
        "answer": "the answer as a string, or null if the records do not answer it",
        "cited_record_ids": "the identifiers of the records the answer rests on, as a list "
                            "of strings (empty if the records carry none)",
        "policy": "the name of the rule you applied to records that disagree, or null",
        "declined": "true if you decline to answer, else false",
        "stale": "true if the record you used has expired, false if it is still valid, null "
                 "if the question does not depend on it",
    },
    "disclosure": {
        "release": "an object with one entry per requested item id (D01, D02, ...): true to "
                   "release it to this requester, false to withhold it",
    },
    "writeback": {
        "new_value": "the new value as a string",
        "start": "the date the new value holds from, YYYY-MM-DD, or null",
        "closes_record_ids": "the identifiers of the records this update closes, as a list "
                             "(empty if none)",
        "end": "the last day the closed records hold, YYYY-MM-DD, or null if none is closed",
        "kept_prior": "true if the earlier records are kept (closed, not deleted), else false",
    },
}


def _contract(track: str) -> str:
    lines = [f'  "{k}": {v}' for k, v in REPLY_FIELDS[track].items()]
    return "Reply with one JSON object with exactly these fields:\n" + "\n".join(lines)


def _records(text: str, subject: str, today: _dt.date) -> str:
    return f"The records of {subject}, as kept on {today.isoformat()}:\n\n{text}\n"


def _item_prompt(item: Item, records: str) -> str:
    return (f"{records}\nQuestion (as of {item.as_of.isoformat()}): {item.question}\n\n"
            + _contract("items"))


def _disclosure_prompt(condition: str, requester: str, records: str, items, requesters
                       ) -> str:
    if condition == "none":
        policy = ""
    elif condition == "prose":
        policy = "Disclosure policy:\n" + prose_policy(items, requesters) + "\n\n"
    else:
        policy = ("Disclosure policy (classification records):\n"
                  + "\n".join(json.dumps(r, ensure_ascii=False)
                              for r in structured_policy(items)) + "\n\n")
    asked = "\n".join(f"  {it.info_id}: {it.label}" for it in items)
    return (f"{records}\n{policy}A request arrives from {requesters[requester]}, asking for "
            f"these items of information:\n{asked}\n\nDecide, item by item, whether to "
            "release it to this requester.\n\n" + _contract("disclosure"))


def _writeback_prompt(u: Update, records: str, world: World) -> str:
    label = world.label(u.attribute)
    said = (f"{u.what}: the {label} is {u.value}; the earlier record was wrong"
            if u.kind == "correction" else f"{u.what}: the {label} is {u.value} from "
            f"{u.start.isoformat()}")
    return (f"{records}\nNew information arrived on {u.captured.isoformat()} "
            f"({u.source_title}, a {u.source_kind}): {said}.\n\nRecord it in these records "
            "and say what you recorded.\n\n" + _contract("writeback"))


def plan_calls(world: World, items, *, infos: tuple[InfoItem, ...] = (),
               requesters: dict[str, str] | None = None, updates: tuple[Update, ...] = (),
               seed: int = 0, replicates: int = 2, arms=ARMS,
               tracks=TRACKS, today: _dt.date = RUN_DATE) -> list[dict]:
    """The randomised call plan (module docstring): one dict per call with ``call`` (its
    position, 1-based), ``call_id`` (``track/…/replicate``), ``track``, ``key``,
    ``system``, ``prompt`` and ``reply_fields``. ``ValueError`` for an unknown track or arm,
    or fewer than one replicate."""
    if replicates < 1:
        raise ValueError(f"replicates must be at least 1, got {replicates}")
    bad = [t for t in tracks if t not in TRACKS] + [a for a in arms if a not in ARMS]
    if bad:
        raise ValueError(f"unknown track or arm {bad[0]!r}")
    texts = {a: _records(render(world, a, today=today), world.subject, today) for a in ARMS}
    calls = []
    if "items" in tracks:
        calls += [("items", f"items/{i.item_id}/{a}/{r}",
                   {"item_id": i.item_id, "arm": a, "replicate": r},
                   _item_prompt(i, texts[a]))
                  for a in arms for i in items for r in range(replicates)]
    if "disclosure" in tracks:
        if not infos or not requesters:
            raise ValueError("the disclosure track needs the information items and requesters")
        calls += [("disclosure", f"disclosure/{c}/{q}/{r}",
                   {"condition": c, "requester": q, "replicate": r,
                    "info_ids": [it.info_id for it in infos]},
                   _disclosure_prompt(c, q, texts["D"], infos, requesters))
                  for c in CONDITIONS for q in requesters for r in range(replicates)]
    if "writeback" in tracks:
        if not updates:
            raise ValueError("the write-back track needs the updates")
        calls += [("writeback", f"writeback/{u.update_id}/{a}/{r}",
                   {"update_id": u.update_id, "arm": a, "replicate": r},
                   _writeback_prompt(u, texts[a], world))
                  for a in WRITEBACK_ARMS if a in arms for u in updates
                  for r in range(replicates)]
    order = np.random.default_rng(seed).permutation(len(calls))
    return [{"call": k, "call_id": calls[j][1], "track": calls[j][0], "key": calls[j][2],
             "system": SYSTEM_PROMPT, "prompt": calls[j][3],
             "reply_fields": list(REPLY_FIELDS[calls[j][0]])}
            for k, j in enumerate(order, start=1)]


def response_lines(call: dict, reply: dict) -> list[dict]:
    """The scored line(s) of ``call`` given the model's parsed ``reply``: the call's key plus
    the reply fields (one line; twelve for a disclosure call, one per requested item, with
    ``release`` as the reply says, or ``null`` — malformed, so the file is refused — when
    it says nothing about the item). Fields the reply lacks are left out, so a reply that
    breaks the contract gives a line the reader refuses with its number."""
    if not isinstance(reply, dict):
        reply = {}
    key = dict(call["key"])
    if call["track"] != "disclosure":
        return [{**key, **{k: reply[k] for k in REPLY_FIELDS[call["track"]] if k in reply}}]
    ids = key.pop("info_ids")
    got = reply.get("release") if isinstance(reply.get("release"), dict) else {}
    return [{"condition": key["condition"], "requester": key["requester"], "info_id": i,
             "replicate": key["replicate"], "release": got.get(i)} for i in ids]
