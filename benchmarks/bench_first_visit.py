"""Benchmark: the first visit to each page of a freshly started server (run by hand).

``python benchmarks/bench_first_visit.py [--db PATH] [--port 0] [--repeat 1] [--together]
[--no-warmup] [--json out.json]``

What a class meets in its first minute (issue 22 point 7). Per repetition:

1. a fresh server is started exactly as the Docker image and ``make run`` start it, bound to
   loopback (``python serve.py --server.port=PORT --server.address=127.0.0.1
   --server.fileWatcherType=none``, with ``ARBITER_DB`` and ``ARBITER_TIMING_LOG`` set; the
   store is built first with ``python -m core build`` if it is missing), and the time until
   ``/_stcore/health`` answers is recorded (*start-up*: store check, imports, the warm-up);
2. every page is opened once with its default view (no URL parameters), each by a new
   visitor (a new websocket session, the client of ``benchmarks/loadtest.py``): the home page
   first, then the pages in menu order (``core/pages_registry.py``); with ``--together`` all
   of them at the same moment, one session each (a class arriving at once);
3. per page: *first run*, seconds from the request to ``script_finished`` on the client, and
   *script*, the server's script time of that run (``ARBITER_TIMING_LOG``); exception boxes
   and error alerts on the page are counted.

Target: every page's first run ≤ 2 s (:data:`TARGET_FIRST_RUN`). ``--no-warmup`` starts the
server with ``ARBITER_WARMUP=0`` (``serve.py`` then skips computing the default views before
it serves): the figures of a server without the warm-up, for comparison.

Other processes on the machine inflate every figure: the load averages before and after and
the other processes' CPU seconds are printed. Never run by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from loadtest import (  # noqa: E402
    DEFAULT_DB,
    HOST,
    Recorder,
    Server,
    Session,
    Values,
    ensure_store,
    free_port,
    system_busy_cpu,
    tree_cpu,
)

from core.pages_registry import PAGES  # noqa: E402

#: Seconds a page's first run may take (issue 22: "≤ 2 s").
TARGET_FIRST_RUN = 2.0


def page_paths() -> list[str]:
    """URL paths of the home page ("") and every page in menu order."""
    return ["", *(p.url_path for p in PAGES)]


async def _visit(port: int, page: str, timeout: float) -> dict:
    """One new visitor opens ``page``: its first run's client seconds and what it showed."""
    rec = Recorder()
    s = Session(0, f"ws://{HOST}:{port}/_stcore/stream", rec, random.Random(0),
                Values("lesson"), timeout)
    try:
        await s.connect()
        await s.rerun(page, "load")
        run = rec.runs[-1]
        return {"page": page, "first_run": run["settle"], "first_delta": run["first"],
                "wall0": run["wall0"], "wall1": run["wall1"],
                "exceptions": [f"{t}: {m}"[:200] for _, t, m in rec.exceptions],
                "alerts": [text for (_, text) in rec.alerts], "error": None,
                "known_pages": sorted(s.pages)}
    except Exception as exc:  # a timeout or a socket error is a figure of its own
        return {"page": page, "first_run": None, "first_delta": None, "wall0": None,
                "wall1": None, "exceptions": [], "alerts": [], "error": repr(exc)[:300],
                "known_pages": []}
    finally:
        await s.close()


async def visit_all(port: int, pages: list[str], timeout: float, together: bool) -> list[dict]:
    """First visits of ``pages``: one after the other, or all at once."""
    if together:
        return list(await asyncio.gather(*(_visit(port, p, timeout) for p in pages)))
    return [await _visit(port, p, timeout) for p in pages]


def _script_seconds(rows: list, visit: dict) -> float | None:
    """The timing-log row of this visit's run: same page, a full run, inside its window."""
    if visit["wall0"] is None:
        return None
    label = "/" + visit["page"]
    found = [sec for wall, page, kind, sec, status in rows
             if page == label and kind == "full" and status == "ok"
             and visit["wall0"] - 0.01 <= wall <= visit["wall1"] + 0.01]
    return found[0] if found else None


def one_run(args: argparse.Namespace, db: Path, workdir: Path, pages: list[str]) -> dict:
    """A fresh server, its start-up time and the first visit of every page."""
    workdir.mkdir(parents=True, exist_ok=True)
    server = Server(args.port or free_port(), db, workdir, [])
    busy0, t0 = system_busy_cpu(), time.monotonic()
    try:
        server.start(args.startup_timeout)
        startup = time.monotonic() - t0
        cpu0 = tree_cpu(server.proc.pid)
        t1 = time.monotonic()
        visits = asyncio.run(visit_all(server.port, pages, args.timeout, args.together))
        span = time.monotonic() - t1
        server_cpu = tree_cpu(server.proc.pid) - cpu0
        busy = system_busy_cpu() - busy0
    finally:
        server.stop()
    rows = server.rows()
    for v in visits:
        v["script"] = _script_seconds(rows, v)
    return {"startup": startup, "visits": visits, "span": span, "server_cpu": server_cpu,
            "busy_cpu_during_run": busy, "log": str(server.output),
            "startup_lines": [line for line in server.tail(200).splitlines()
                              if line.startswith("arbiter:")]}


def _fmt(x: float | None) -> str:
    return "   —  " if x is None else f"{x:6.2f}"


def report(runs: list[dict], pages: list[str]) -> list[dict]:
    """Print one line per page (median and worst over the repetitions); the table's rows."""
    table = []
    print(f"\n{'page':20s} {'first run s':>12s} {'worst s':>8s} {'script s':>9s}  target  notes")
    for page in pages:
        vs = [v for r in runs for v in r["visits"] if v["page"] == page]
        firsts = [v["first_run"] for v in vs if v["first_run"] is not None]
        scripts = [v["script"] for v in vs if v["script"] is not None]
        med = statistics.median(firsts) if firsts else None
        worst = max(firsts) if len(firsts) == len(vs) and firsts else None
        notes = sorted({n for v in vs for n in (*v["exceptions"], *v["alerts"],
                                                 *([v["error"]] if v["error"] else []))})
        ok = worst is not None and worst <= TARGET_FIRST_RUN and not notes
        table.append({"page": "/" + page, "first_run_median": med, "first_run_worst": worst,
                      "script_median": statistics.median(scripts) if scripts else None,
                      "pass": ok, "notes": notes})
        print(f"{'/' + page:20s} {_fmt(med):>12s} {_fmt(worst):>8s} "
              f"{_fmt(table[-1]['script_median']):>9s}  {'PASS' if ok else 'FAIL':6s}  "
              f"{'; '.join(notes)[:120]}")
    ups = [r["startup"] for r in runs]
    print(f"\nstart-up (process start → healthy): median {statistics.median(ups):.1f} s, "
          f"worst {max(ups):.1f} s over {len(runs)} server(s)")
    return table


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--db", type=Path, default=DEFAULT_DB,
                    help="store for ARBITER_DB, built if missing (default data/arbiter.duckdb)")
    ap.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="fresh servers to measure, one after the other (default 1)")
    ap.add_argument("--together", action="store_true",
                    help="open every page at the same moment, one new session each")
    ap.add_argument("--no-warmup", action="store_true",
                    help="start the server with ARBITER_WARMUP=0 (no warm-up, for comparison)")
    ap.add_argument("--pages", nargs="+", metavar="PAGE",
                    help="subset by URL path (home, Walkthrough, Bias_lab, …)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds a first run may take before it counts as an error")
    ap.add_argument("--startup-timeout", type=float, default=600.0)
    ap.add_argument("--json", type=Path, help="write every figure to this JSON file")
    args = ap.parse_args(argv)
    if not 1 <= args.repeat <= 20:
        ap.error("--repeat must be between 1 and 20")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; 0 when every page's first run met the target in every repetition."""
    args = parse_args(argv)
    db = args.db.resolve()
    ensure_store(db)
    pages = page_paths()
    if args.pages:
        wanted = ["" if p.strip("/") in ("", "home") else p.strip("/") for p in args.pages]
        unknown = sorted(set(wanted) - set(pages))
        if unknown:
            raise SystemExit(f"unknown pages {unknown}; the app has {pages}")
        pages = [p for p in pages if p in wanted]
    if args.no_warmup:
        os.environ["ARBITER_WARMUP"] = "0"
    workdir = Path(tempfile.mkdtemp(prefix="arbiter-first-visit-"))
    load0 = os.getloadavg()
    runs = []
    try:
        for i in range(args.repeat):
            print(f"server {i + 1} of {args.repeat} "
                  f"({'no warm-up' if args.no_warmup else 'warm-up on'}, "
                  f"{'together' if args.together else 'one page after the other'}) …",
                  flush=True)
            runs.append(one_run(args, db, workdir / f"run{i}", pages))
            r = runs[-1]
            print(f"  healthy after {r['startup']:.1f} s; pages opened in {r['span']:.1f} s; "
                  f"server CPU {r['server_cpu']:.1f} s; log {r['log']}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: the server was stopped", file=sys.stderr)
        return 130
    missing = sorted({p for r in runs for v in r["visits"] for p in [v["page"]]
                      if v["known_pages"] and p not in v["known_pages"]})
    if missing:
        print(f"note: the server's navigation does not list {missing}", file=sys.stderr)
    table = report(runs, pages)
    load1 = os.getloadavg()
    print(f"{os.cpu_count()} CPUs; load average (1/5/15 min) at start "
          f"{'/'.join(f'{x:.1f}' for x in load0)}, at end "
          f"{'/'.join(f'{x:.1f}' for x in load1)}; start-up lines of the last server:")
    for line in runs[-1]["startup_lines"]:
        print("  " + line)
    if args.json:
        args.json.write_text(json.dumps({
            "config": {"repeat": args.repeat, "together": args.together,
                       "warmup": not args.no_warmup, "pages": pages, "db": str(db),
                       "cpus": os.cpu_count(), "loadavg_start": load0, "loadavg_end": load1,
                       "target_first_run": TARGET_FIRST_RUN},
            "pages": table, "runs": runs}, indent=2, default=str))
    return 0 if all(t["pass"] for t in table) else 1


if __name__ == "__main__":
    sys.exit(main())
