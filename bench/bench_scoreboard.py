"""One scoreboard for every controller (DESIGN.md 3.7): each registered engine, at its documented
defaults, trained on the same real capture and played through the same commands, measured by one
metrics module (``motionctl.evaluate.scoreboard``), with motion matching, the game industry's default,
among them.

    .venv/bin/python bench/bench_scoreboard.py [--mocap DIR] [--engines a,b] [--quick]

Data: CMU subject 16's locomotion, the 49 clips bench_field.py uses (16_08, 16_11 - 16_58: walks,
veers, 90-degree turns, slow walk and stop, runs, sudden stops; 117 s); each engine mirrors them
or not as its defaults say.  Commands, the same for every engine (seeded):
- direction changes of 30, 60, 90, 120, 150 degrees either way and 180, from four walking starts:
  the response time until the heading is within 5 degrees and stays there 0.3 s;
- speed changes (slow walk 0.7 -> walk 1.4, walk 1.3 -> run 3.0, run 3.0 -> walk 1.3 m/s) from the
  same starts: the time until the speed, over a stride, is within 10% of the new one for 0.3 s (a
  miss too when it never moved at the first speed: it follows no speed);
- stops from a walk (1.3 m/s) and a run (3.0 m/s) from the same starts: the time until it stands
  (under 0.2 m/s over a stride) for 0.3 s;
  every trial counts: one not reached within 6 s is a miss (inf), reported as the share reached
  beside the median and p90 of those reached (``evaluate.scoreboard.response_spread``);
- a path: a figure of eight of two 3 m circles (37.7 m) at 1.3 m/s from two starts: every frame's
  distance to it and the time taken;
- variants: the motion graph's Greedy policy (its default is Look Ahead; a square);
- a game pad: four random 30 s traces (10 commands a second), a new world direction every 1-3 s
  (uniform), walking (60%), running at 3.0 m/s (30%) or standing (10%), each played for exactly 30 s:
  the responses to its changes (a change not reached before the next is a miss), foot skating
  (``evaluate.looks``: the share of contact frames sliding, the sliding per contact), the poses'
  distance to the nearest captured pose, the velocity jumps at switches, the time per decision.
Every engine plays at the Preview panel's defaults (``PlaySettings``: Root Follows Control, Plant Feet).
Each figure is given as median and p90 over trials, runs, frames, switches or decisions (inf: never
reached).  The source capture's own skating and frame-to-frame velocity changes stand beside them.
Memory: the saved model file and what loading it and building its frame table holds (traced).
Targets (issue 35), checked per engine in the JSON's "targets": speed response median at most 1.5 s
with at least 90% reached; direction median at most 1.25x motion matching's and p90 at most 2.5 s;
stop median at most 1.5 s (the capture has standing).
Writes bench/results/scoreboard.md, .json, .png (responses against foot skating) and
responses.png (commanded against actual heading and speed over one trial each, every engine;
bench/plots.py, matplotlib).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from harness import ROOT, add_mocap, default_mocap, write_json, write_markdown  # noqa: E402,F401  (first: the checkout on the path)

from bench.bench_field import TRIALS, load, map_frame  # noqa: E402
from harness import environment, previous  # noqa: E402
from motionctl.body.contacts import foot_points  # noqa: E402
from motionctl.engines import ENGINES  # noqa: E402
from motionctl.body.contacts import points_skating  # noqa: E402
from motionctl.evaluate.looks import PoseReference, capture_looks, looks  # noqa: E402
from motionctl.evaluate.scoreboard import (discontinuity, follow_path, model_memory,  # noqa: E402
                                           natural_jumps, response_spread, response_time, responses, run_of,
                                           speed_response_time, spread, stop_response_time, timed_decisions)
from motionctl.play.session import Session  # noqa: E402
from motionctl.play.commands import Command, PlaySettings  # noqa: E402
from motionctl.settings import from_flat, to_dict  # noqa: E402
from motionctl.play.synth import frame_table  # noqa: E402

ANGLES = [s * a for a in (30, 60, 90, 120, 150) for s in (1, -1)] + [180]
SPEEDS = ((0.7, 1.4), (1.3, 3.0), (3.0, 1.3))
STOPS = (1.3, 3.0)  # stop from a walk and from a run
COURSE = (90, (1.3, 3.0))  # the trials drawn over time for every engine (from the first start)
RESPONSES = ("direction_s", "speed_s", "stop_s", "pad_direction_s", "pad_speed_s", "pad_stop_s")
RUN_SPEED = 3.0
WALK_SPEED = 1.3
STARTS = (("16_15", 0.3), ("16_21", 0.5), ("16_31", 0.4), ("16_47", 0.6))  # walking clips, at this share


def figure_eight(radius: float = 3.0, n: int = 200) -> np.ndarray:
    """[2n, 2] a figure of eight from the origin facing +y: a circle to the left, then to the right."""
    t = np.linspace(0, 2 * np.pi, n)
    left = np.column_stack((radius * (np.cos(t) - 1), radius * np.sin(t)))
    right = np.column_stack((radius * (1 - np.cos(t)), radius * np.sin(t)))
    return np.concatenate((left, right[1:]))


PAD_RATE = 10.0  # commands per second of the game pad, whatever the engine's decision rate
PAD_SECONDS = 30.0
PLAY = PlaySettings()  # every engine plays as the Preview panel plays it by default


def game_pad(rng, seconds: float, rate: float, yaw0: float) -> list:
    """Commands of a player on a game pad: a new world direction every 1-3 s, walking, running or
    standing."""
    out, heading = [], yaw0
    while len(out) < seconds * rate:
        heading = heading + rng.uniform(-np.pi, np.pi)
        r = rng.random()
        speed = 0.0 if r < 0.1 else RUN_SPEED if r < 0.4 else WALK_SPEED
        out += [Command(heading=float(heading), speed=speed)] * max(1, int(rng.uniform(1.0, 3.0) * rate))
    return out[:int(seconds * rate)]


def starts_in(source_table, table) -> list:
    """The walking starts as rows of ``table`` (by clip name)."""
    rows = []
    for name, share in STARTS:
        c = source_table.names.index(name)
        rows.append(map_frame(source_table, table, int(source_table.first[c] + share * source_table.length[c])))
    return rows


CAPTURE_JUMPS: dict = {}  # fps -> natural_jumps of the one capture every row is measured on


# Besides every engine at its defaults, a few documented settings worth seeing beside them.
VARIANTS = {"graph:greedy": ("Motion Graph, Greedy", {"policy": "greedy"})}


def score(key: str, clips, source_table, quick: bool, folder: str, reference: PoseReference) -> dict:
    name = key.partition(":")[0]
    engine = ENGINES[name]
    label, flat = VARIANTS.get(key, (engine.label, {}))
    settings = from_flat(engine.Settings, flat)
    t = time.perf_counter()
    model = engine.fit(clips, settings)
    train = time.perf_counter() - t
    path = model.save(os.path.join(folder, f"{key.replace(':', '_')}.npz"))
    table = model.play(clips)
    starts = starts_in(source_table, table)[: 2 if quick else None]
    rng = np.random.default_rng(7)
    row = {"engine": name, "variant": key, "label": label, "settings": to_dict(settings), "play": to_dict(PLAY),
           "train_seconds": train, **model_memory(path, clips), "summary": model.summary()}
    angles = ANGLES[::3] if quick else ANGLES
    t = time.perf_counter()
    row["direction_s"] = [response_time(model, table, f, float(np.radians(a)), play=PLAY) for f in starts for a in angles]
    speed = [speed_response_time(model, table, f, a, b, play=PLAY) for f in starts for a, b in SPEEDS]
    row["speed_s"], row["speed_settled"] = [x["speed"] for x in speed], [x["settled"] for x in speed]
    stops = [stop_response_time(model, table, f, b, play=PLAY) for f in starts for b in STOPS]
    row["stop_s"], row["stop_settled_m_s"] = [x["stop"] for x in stops], [x["settled"] for x in stops]
    row["course"] = {"direction": {}, "speed": {}}
    response_time(model, table, starts[0], float(np.radians(COURSE[0])), play=PLAY, record=row["course"]["direction"])
    speed_response_time(model, table, starts[0], *COURSE[1], play=PLAY, record=row["course"]["speed"])
    paths = [follow_path(model, table, f, figure_eight(), WALK_SPEED, play=PLAY) for f in starts[:2]]
    row["path_error_m"] = np.concatenate([p["errors"] for p in paths]).tolist()
    row["path_seconds"] = [p["seconds"] if p["reached"] else np.inf for p in paths]
    runs, feet, poses, decide_ms, jumps_deg, jumps_m, lengths = [], [], [], [], [], [], []
    pad = {"direction": [], "speed": [], "stop": []}
    for k in range(2 if quick else 4):
        session = Session(model, table, frame=starts[k % len(starts)], play=PLAY)
        commands = game_pad(rng, PAD_SECONDS, PAD_RATE, session.synth.yaw)
        decide_ms += timed_decisions(session, commands, np.arange(len(commands)) / PAD_RATE, PAD_SECONDS).tolist()
        run = run_of(session)
        runs.append(looks(run.clip, reference, PAD_SECONDS))
        feet.append(foot_points(run.clip))
        poses.append(reference.distance(run.clip))
        lengths.append(run.clip.n_frames / run.clip.fps)
        d = discontinuity(run)
        jumps_deg += d["deg_s"].tolist()
        jumps_m += d["m_s"].tolist()
        for what in pad:
            pad[what] += responses(run, what).tolist()
    row["play_seconds"] = time.perf_counter() - t
    pooled = points_skating(feet, table.fps)  # every run's contacts together
    row["skating"], row["sliding_cm"], row["planted"] = pooled["skating"], pooled["sliding_cm"], pooled["planted"]
    row["skating_runs"] = [r["skating"] for r in runs]
    row["pose_distance_p95"] = float(np.percentile(np.concatenate(poses), 95))
    row["pose_distance_p50"] = float(np.percentile(np.concatenate(poses), 50))
    row["root_height"] = [r["root_height"] for r in runs]
    row["run_seconds"], row["trace_seconds"] = lengths, [PAD_SECONDS] * len(lengths)
    row["jump_deg_s"], row["jump_m_s"], row["switches_per_s"] = jumps_deg, jumps_m, len(jumps_deg) / (PAD_SECONDS * len(runs))
    if table.fps not in CAPTURE_JUMPS:  # the capture's own jumps at the rate this engine plays (once per rate)
        CAPTURE_JUMPS[table.fps] = natural_jumps(clips, table.fps)
    own = CAPTURE_JUMPS[table.fps]
    row["capture_jump_deg_s"], row["capture_jump_m_s"] = spread(own["deg_s"]), spread(own["m_s"])
    row["decision_ms"] = decide_ms
    row["ms_per_second"] = float(np.sum(decide_ms) / (PAD_SECONDS * len(runs)))
    for what, times in pad.items():
        row[f"pad_{what}_s"] = times
    return row


def targets(row: dict, matching: dict | None) -> dict:
    """Issue 35's targets for one row ({name: met}; a direction target against motion matching's
    median needs matching's row)."""
    s = row["stats"]
    out = {"speed": bool(s["speed_s"]["median"] is not None and s["speed_s"]["median"] <= 1.5
                         and s["speed_s"]["reached"] >= 0.9),
           "direction_p90": bool(s["direction_s"]["reached"] == 1.0 and s["direction_s"]["p90"] <= 2.5),
           "stop": bool(s["stop_s"]["median"] is not None and s["stop_s"]["median"] <= 1.5
                        and s["stop_s"]["reached"] >= 0.9)}
    m = (matching or {}).get("stats", {}).get("direction_s", {}).get("median")
    d = s["direction_s"]["median"]
    if m is not None:
        out["direction_median"] = bool(d is not None and d <= 1.25 * m)
    return out


def search_speed(clips, fps_list=(30.0, 120.0), seconds: float = 30.0) -> list:
    """Motion matching's three exact searches on the queries a game-pad run makes (recorded with
    the bound each search had: the cost of playing on), at database rates of 30 and 120 fps."""
    from motionctl.engines.matching import Index, MatchingSettings, fit

    out = []
    for fps in fps_list:
        model = fit(clips, MatchingSettings(fps=fps))
        table = model.play(clips)
        asked = []
        search = model._search

        def record(m, nxt, goal_v, goal_face, kind, ended):
            q = model.query(m, nxt, goal_v, goal_face)
            asked.append((q, np.inf if ended else float(np.sum((model.x[nxt] - q) ** 2))))
            return search(m, nxt, goal_v, goal_face, kind, ended)

        model._search = record
        session = Session(model, table, frame=starts_in(frame_table(clips, clips[0].skeleton, 0.2), table)[0])
        for command in game_pad(np.random.default_rng(11), seconds, model.decision_rate, session.synth.yaw):
            session.decide(command)
        rows = np.flatnonzero(model.rows.searchable & (model.rows.kind == 0))
        ref = None
        for method in ("brute", "kdtree", "boxes"):
            t = time.perf_counter()
            index = Index(model.x, rows, method)
            build = time.perf_counter() - t
            for bounded in (False, True):
                t = time.perf_counter()
                found = [index.nearest(q, b if bounded else np.inf) for q, b in asked]
                us = (time.perf_counter() - t) / len(asked) * 1e6
                if method == "brute":
                    ref = ref or {}
                    ref[bounded] = found
                same = float(np.mean([abs(a[1] - b[1]) <= 1e-9 * max(1.0, b[1]) for a, b in zip(found, ref[bounded])]))
                out.append({"fps": fps, "frames": int(len(rows)), "method": method, "bounded": bounded,
                            "us_per_query": us, "build_ms": build * 1e3, "queries": len(asked), "agreement": same})
                print(json.dumps(out[-1]), flush=True)
    return out


def stats(row: dict) -> dict:
    keys = ("speed_settled", "stop_settled_m_s", "path_error_m", "path_seconds", "skating_runs", "jump_deg_s",
            "jump_m_s", "decision_ms")
    return {**{k: spread(row[k]) for k in keys}, **{k: response_spread(row[k]) for k in RESPONSES}}


def capture(mocap: str) -> tuple:
    """(clips, their frame table, the pose reference) every scoreboard row is measured on."""
    clips = load(mocap)
    return clips, frame_table(clips, clips[0].skeleton, 0.2), PoseReference.of(clips)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--engines", default=",".join(list(ENGINES) + list(VARIANTS)),
                    help="engines (and engine:variant) to score, comma-separated")
    ap.add_argument("--quick", action="store_true", help="fewer trials (a smoke run; results go to scoreboard_quick)")
    args = ap.parse_args()
    try:  # the figures come last: say now, not after ten minutes, that they cannot be drawn
        import matplotlib  # noqa: F401
    except ImportError:
        ap.error("the scoreboard's figures need matplotlib, a bench dependency: pip install -e .[bench]")
    t_all = time.perf_counter()
    clips, source_table, reference = capture(args.mocap)
    src, src_jumps = capture_looks(clips, reference), natural_jumps(clips)
    source = {"skating": src["skating"], "sliding_cm": src["sliding_cm"], "planted": src["planted"],
              "pose_distance_p95": src["pose_distance"]["p95"], "pose_distance_p50": src["pose_distance"]["p50"],
              "root_height": src["root_height"], "jump_deg_s": spread(src_jumps["deg_s"]),
              "jump_m_s": spread(src_jumps["m_s"])}
    print(json.dumps({"source": source}), flush=True)
    search = [] if args.quick else search_speed(clips)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.engines.split(","):
            row = score(name, clips, source_table, args.quick, folder, reference)
            row["stats"] = stats(row)
            rows.append(row)
            print(json.dumps({"engine": name, "train_seconds": row["train_seconds"], "play_seconds": row["play_seconds"],
                              "skating": row["skating"], "sliding_cm": row["sliding_cm"],
                              "pose_distance_p95": row["pose_distance_p95"], "run_seconds": row["run_seconds"],
                              **{k: v for k, v in row["stats"].items()}}), flush=True)
    matching = next((r for r in rows if r["variant"] == "matching"), None)
    for row in rows:
        row["targets"] = targets(row, matching)
    every = ",".join(list(ENGINES) + list(VARIANTS))
    results = {"command": "python bench/bench_scoreboard.py" + (f" --engines {args.engines}" if args.engines != every else "")
               + (" --quick" if args.quick else ""),
               "clips": [c.name for c in clips], "trials": {"angles": ANGLES, "speeds": SPEEDS, "stops": STOPS, "starts": STARTS},
               "seconds_of_capture": float(sum(c.n_frames / c.fps for c in clips)), "source": source, "rows": rows, "matching_search": search,
               "wall_seconds": time.perf_counter() - t_all, "environment": environment()}
    if args.engines != every:  # a few rows measured again: into the board as it stands, not in its place
        path = os.path.join(ROOT, "bench", "results", ("scoreboard_quick" if args.quick else "scoreboard") + ".json")
        if os.path.exists(path):
            with open(path) as fh:
                results = merge(json.load(fh), results)
    write(results, args.quick)


def merge(board: dict, part: dict) -> dict:
    """The full ``board`` (the results as they stand) with a partial run's rows (``part``: ``--engines``
    a few) in place of the same variants' (new variants after the others), every row's targets
    measured again against the board's motion matching, the run recorded last in ``merged``
    (``merged_note``) and dropped from earlier records for the rows it measured again; ``part``
    itself when the board holds no rows."""
    if not board.get("rows"):
        return part
    new = {r["variant"]: r for r in part["rows"]}
    held = {r["variant"] for r in board["rows"]}
    rows = [new.get(r["variant"], r) for r in board["rows"]] + [r for v, r in new.items() if v not in held]
    matching = next((r for r in rows if r["variant"] == "matching"), None)
    for row in rows:
        row["targets"] = targets(row, matching)
    earlier = [dict(m, rows=[v for v in m["rows"] if v not in new]) for m in board.get("merged") or []]
    run = {"rows": list(new), "environment": part["environment"], "command": part["command"],
           "wall_seconds": part["wall_seconds"]}
    return dict(board, rows=rows, merged=[m for m in earlier if m["rows"]] + [run])


def fmt(s: dict, unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    if s["n"] == 0:
        return "—"

    def one(v):
        return "never" if not np.isfinite(v) else f"{v * scale:.{digits}f}{unit}"
    return f"{one(s['median'])} / {one(s['p90'])}"


def rfmt(s: dict) -> str:
    """A response cell: median / p90 of those reached (reached %)."""
    if s["n"] == 0:
        return "—"
    if not s["reached"]:
        return f"none ({s['n']})"
    return f"{s['median']:.2f} / {s['p90']:.2f} ({100 * s['reached']:.0f}%)"


def merged_note(r: dict) -> str:
    """Which rows later partial runs measured again (``r["merged"]``: their records, oldest first),
    and at which commits."""
    runs = r.get("merged") or []
    if not runs:
        return ""
    parts = [f"rows {', '.join(m['rows'])} at {m['environment'].get('commit', '?')[:7]} (`{m['command']}`, "
             f"{m['wall_seconds']:.0f} s)" for m in runs]
    return f"  Re-measured: {'; '.join(parts)}; the others at {r['environment'].get('commit', '?')[:7]}."


def write(r: dict, quick: bool) -> None:
    name = "scoreboard_quick" if quick else "scoreboard"
    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    write_json(f"{name}", r, folder=out)
    src = r["source"]
    lines = [f"# One scoreboard for every controller (`{r['command']}`)", "",
             f"Data: {len(r['clips'])} clips of CMU subject 16's locomotion ({r['seconds_of_capture']:.0f} s: "
             f"16_08, 16_{TRIALS[1]} - 16_{TRIALS[-1]}); every engine at its defaults; wall "
             f"{r['wall_seconds']:.0f} s on {r['environment'].get('cores')} cores.  Each response cell: median / p90 "
             "of the trials reached (s) and the share reached (every trial counts: a miss is one not reached within "
             "6 s, or, on the game pad, before the next command); other cells: median / p90." + merged_note(r), "",
             "| engine | direction s | speed s | stop s | pad: direction | pad: speed | pad: stop | path error m | "
             "path s (ideal 29) | skating % | sliding cm | pose cm (p95) | run s / trace s | jump °/s | jump m/s | "
             "switches /s | ms per decision | ms per s | train s | file KB | held MB |",
             "| --- |" + " ---: |" * 20]
    for row in r["rows"]:
        s = row["stats"]
        lines.append(f"| {row['label']} | {rfmt(s['direction_s'])} | {rfmt(s['speed_s'])} | {rfmt(s['stop_s'])} | "
                     f"{rfmt(s['pad_direction_s'])} | {rfmt(s['pad_speed_s'])} | {rfmt(s['pad_stop_s'])} | "
                     f"{fmt(s['path_error_m'])} | "
                     f"{fmt(s['path_seconds'], digits=0)} | {100 * row['skating']:.1f} | {row['sliding_cm']:.1f} | "
                     f"{100 * row['pose_distance_p95']:.1f} | {np.mean(row['run_seconds']):.2f} / {np.mean(row['trace_seconds']):.2f} | "
                     f"{fmt(s['jump_deg_s'], digits=0)} | {fmt(s['jump_m_s'])} | "
                     f"{row['switches_per_s']:.1f} | {fmt(s['decision_ms'], digits=3)} | {row['ms_per_second']:.1f} | "
                     f"{row['train_seconds']:.1f} | {row['file_bytes'] / 1024:.0f} | {row['held_bytes'] / 2**20:.1f} |")
    lines.append(f"| source capture | — | — | — | — | — | — | — | — | {100 * src['skating']:.1f} | {src['sliding_cm']:.1f} | "
                 f"{100 * src['pose_distance_p95']:.1f} (held-out) | — | {fmt(src['jump_deg_s'], digits=0)} | "
                 f"{fmt(src['jump_m_s'])} | — | — | — | — | — | — |")
    names = ("speed", "direction_median", "direction_p90", "stop")
    lines += ["", "Targets (issue 35): speed median <= 1.5 s with >= 90% reached; direction median <= 1.25x motion "
              "matching's; direction p90 <= 2.5 s (every trial reached); stop median <= 1.5 s with >= 90% reached.", "",
              "| engine | " + " | ".join(names) + " |", "| --- |" + " :---: |" * len(names)]
    for row in r["rows"]:
        t = row.get("targets", {})
        lines.append(f"| {row['label']} | " + " | ".join("met" if t.get(k) else "—" if k not in t else "**missed**"
                                                          for k in names) + " |")
    lines += ["", "Every engine plays as the Preview panel plays it by default (Root Follows Control "
              f"{r['rows'][0]['play']['warp'] if r['rows'] else 1.0:g}, Plant Feet on).  Skating (share of contact frames whose foot "
              "slides faster than 0.5 m/s, ``evaluate.looks``), sliding (cm per contact, median), pose distance (to the "
              "nearest captured pose; the capture's: each clip against the others) and jumps are measured on the "
              "game-pad runs, each played for exactly its trace's 30 s; the jump columns are the largest "
              "joint-velocity change across each switch (the source capture's row: across every frame, what a "
              "seamless switch would show).  ms per decision: the engine's choice, its synthesis and the feet's "
              "locking; ms per s: decision time per second of motion (an engine deciding every frame makes 30 "
              "decisions a second).", ""]
    if r.get("matching_search"):
        lines += ["## Motion matching's search", "", "Exact nearest frame for the queries of a 30 s game-pad run, "
                  "over the locomotion frames (unbounded; bounded: by the cost of playing on, as the engine asks).", "",
                  "| database | method | µs per query (unbounded) | µs (bounded) | build ms | same distance as every frame |",
                  "| --- | --- | ---: | ---: | ---: | ---: |"]
        by = {}
        for x in r["matching_search"]:
            by.setdefault((x["fps"], x["frames"], x["method"]), {})[x["bounded"]] = x
        for (fps, frames, method), b in by.items():
            lines.append(f"| {frames} frames ({fps:.0f} fps) | {method} | {b[False]['us_per_query']:.0f} | "
                         f"{b[True]['us_per_query']:.0f} | {b[False]['build_ms']:.1f} | "
                         f"{100 * min(b[False]['agreement'], b[True]['agreement']):.1f}% |")
        lines.append("")
    prev = previous(name)
    if prev:
        lines += [f"Previous run ({prev['environment'].get('commit', '?')[:7]}): " + "; ".join(
            f"{p['label']} direction {fmt(p['stats']['direction_s'])} s, skating "
            f"{100 * p['skating'] if isinstance(p['skating'], float) else fmt(spread(p['skating']), scale=100, digits=1)}%"
            for p in prev["rows"]), ""]
    lines += ["![responses against foot skating](scoreboard.png)", "",
              "Median response (of the trials reached) to a new direction, a new speed and a stop against foot "
              "skating, one marker per engine; the dotted line is the source capture's skating; a hollow marker: "
              "fewer than 90% of the trials reached.", "",
              "![commanded and actual heading and speed over one trial each](responses.png)", "",
              f"One direction trial ({COURSE[0]}° left) and one speed trial ({COURSE[1][0]} -> {COURSE[1][1]} m/s) "
              "from the first walking start: what was asked (black dashes) and what each engine did.", ""]
    write_markdown(f"{name}", lines, folder=out)
    from bench.plots import scoreboard_figure, responses_figure
    scoreboard_figure(r, os.path.join(out, f"{name}.png"))
    responses_figure(r, os.path.join(out, "responses_quick.png" if quick else "responses.png"))


if __name__ == "__main__":
    main()
