"""Every engine at its defaults on the schedules that break controllers (issue 59), judged by its
worst second: turns at 0.3, 0.6, 1.0 and 1.5 rad/s, a 180-degree reversal of the asked direction,
stop - turn - go, run - stop, a sidestep and the seeded game pad, on three libraries.

    .venv/bin/python bench/bench_stress.py [--mocap DIR] [--engines a,b] [--libraries mix,locomotion,others]
                                           [--schedules turn06,reverse] [--out stress]

Libraries: ``mix``: subject 16's dozen clips the Library panel example ticks (walks, veers, 90-degree
turns, two runs, a forward jump); ``locomotion``: subject 16's 49 locomotion clips; ``others``: the
largest skeleton group among ``cmu31``'s BVH takes (other subjects than 16; 6 takes).
Schedules (10 s at 10 Hz; a turn: 3 s ahead at 1.3 m/s, 4 s turning, 3 s ahead): ``turn03``
``turn06`` ``turn10`` ``turn15``; ``reverse``: 4 s toward heading 0, then toward heading 180 degrees
(a stick pulled back, world-relative as a game pad's); ``stopturngo``: 3 s ahead, 2 s standing,
then toward heading 90 degrees; ``runstop``: 4 s at 3 m/s, then standing; ``sidestep``: 3 s ahead,
4 s to the right at 1 m/s, 3 s ahead; ``pad``: the evaluation game-pad player (seed 3), scaled to
the model's top speed.

Per row (``rows``: engine, schedule, library): the worst second's skating, planted share, sliding
per contact and pose p95 and its place, ``toe_spikes`` (frames whose toe is faster than the
capture's fastest), ``switch_jump_median``/``p90`` (the largest joint-velocity change across a
switch, m/s) beside ``capture_jump_median``/``p90`` (the capture's own at every frame, taken the same
way at the rate the engine plays: ``scoreboard.natural_jumps``), heading and position error against what was asked (p95: heading to the asked heading
or the stick's; position to the commands integrated exactly), ``response_s`` (median time to answer a
new direction, within 5 degrees) and ``missed`` (``looks.targets_missed``, worst second included).
Under ``capture``, per library: the same clips' own worst second, fastest toe and frame-to-frame
velocity change (median, p90, per frame rate played).  Writes bench/results/<out>.json and .md.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from harness import add_mocap, environment, write_json, write_markdown  # noqa: E402  (first: the checkout on the path)

from motionctl.engines import ENGINES  # noqa: E402
from motionctl.evaluate.looks import PoseReference, backward_seconds, capture_looks, targets_missed  # noqa: E402
from motionctl.evaluate.scoreboard import measure, natural_jumps, spread  # noqa: E402
from motionctl.io.library import import_library  # noqa: E402
from motionctl.play.commands import (EVALUATION_PLAYER, Command, PlaySettings, generate_trace,  # noqa: E402
                                     scale_player, trace_of_commands)
from motionctl.play.session import Session  # noqa: E402
from motionctl.rootframe import root_frame, wrap  # noqa: E402

from bench_looks import clip_set  # noqa: E402  (the mix and the locomotion set, as bench_looks reads them)

SECONDS, RATE = 10.0, 10.0
WALK = 1.3


def library(mocap: str, name: str) -> list:
    if name != "others":
        return clip_set(mocap, name)
    folder = os.path.join(mocap, "cmu31")
    groups = import_library(sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".bvh"))).groups
    return max(groups, key=lambda g: len(g.database.clips)).database.clips  # the largest skeleton group


def schedules(model) -> dict:
    """{name: [Command] at RATE}."""
    n = int(SECONDS * RATE)
    t = np.arange(n) / RATE

    def stick(fn):
        return [Command(fn(s)) for s in t]

    def turning(rate):
        return stick(lambda s: [0.0, WALK, rate if 3.0 <= s < 7.0 else 0.0, 0.0])

    out = {f"turn{int(round(10 * r)):02d}": turning(r) for r in (0.3, 0.6, 1.0, 1.5)}
    out["reverse"] = [Command([0, WALK, 0, 0], heading=0.0 if s < 4.0 else np.pi, speed=WALK) for s in t]
    out["stopturngo"] = [Command([0, WALK, 0, 0], heading=0.0, speed=WALK) if s < 3.0 else
                         Command([0, 0, 0, 0]) if s < 5.0 else
                         Command([0, WALK, 0, 0], heading=np.pi / 2, speed=WALK) for s in t]
    out["runstop"] = stick(lambda s: [0.0, 3.0 if s < 4.0 else 0.0, 0.0, 0.0])
    out["sidestep"] = stick(lambda s: [1.0 if 3.0 <= s < 7.0 else 0.0, 0.0 if 3.0 <= s < 7.0 else WALK, 0.0, 0.0])
    pad = generate_trace(scale_player(EVALUATION_PLAYER, model.top_speed), SECONDS, RATE, seed=3).samples
    out["pad"] = [Command(p) for p in pad]
    return out


def asked_path(commands, clip, yaw0: float) -> tuple[np.ndarray, np.ndarray]:
    """(ground [F, 2], yaw [F]) the commands ask for, integrated exactly at the clip's rate from its
    start: a heading command's direction and speed; a stick's velocity and turn in the asked frame."""
    fps = clip.fps
    k = np.minimum((np.arange(clip.n_frames) / fps * RATE).astype(int), len(commands) - 1)
    ground = np.zeros((clip.n_frames, 2))
    yaw = np.zeros(clip.n_frames)
    g, y = clip.root_pos[0, :2].astype(float), yaw0
    for f in range(clip.n_frames):  # a per-frame integration of a 10 s schedule (300 steps): not a hot path
        c = commands[k[f]]
        if c.heading is not None:
            y = float(c.heading)
            v = (c.speed or 0.0) * np.array([-np.sin(y), np.cos(y)])
        else:
            vx, vy, turn = c.control[:3]
            y += turn / fps
            v = np.array([vx * np.cos(y) - vy * np.sin(y), vx * np.sin(y) + vy * np.cos(y)])
        g = g + v / fps
        ground[f], yaw[f] = g, y
    return ground, yaw


def row_of(engine, sched, lib, session, clip, commands, reference, source) -> dict:
    m = measure(session, reference, SECONDS)
    w = m["worst"]
    _, yaw = root_frame(clip)
    ground, asked_yaw = asked_path(commands, clip, float(yaw[0]))
    heading = np.degrees(np.abs(wrap(yaw - asked_yaw)))
    position = np.linalg.norm(clip.root_pos[:, :2] - ground, axis=1)
    value = lambda key: w.get(key, {}).get("value")  # noqa: E731
    return {"engine": engine, "schedule": sched, "library": lib,
            "worst_window_skating": value("skating"), "worst_window_planted": value("planted"),
            "worst_window_sliding_cm": value("sliding_cm"), "worst_window_pose_p95": value("pose_p95"),
            "toe_spikes": value("toe_spikes") or 0.0, "worst": w,
            "switch_jump_median": m["jump_m_s"]["median"], "switch_jump_p90": m["jump_m_s"]["p90"], "switches": m["switches"],
            "heading_error_deg_p95": float(np.percentile(heading, 95)), "position_error_m_p95": float(np.percentile(position, 95)),
            "response_s": m["direction_s"].get("median"), "skating": m["skating"], "pose_p95": (m.get("pose_distance") or {}).get("p95"),
            "run_seconds": clip.n_frames / clip.fps, "backward_s": backward_seconds(clip), "missed": targets_missed(m, source)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--libraries", default="mix,locomotion,others")
    ap.add_argument("--schedules", default="")
    ap.add_argument("--out", default="stress")
    args = ap.parse_args()
    rows, capture = [], {}
    t_all = time.perf_counter()
    for lib in args.libraries.split(","):
        clips = library(args.mocap, lib)
        reference = PoseReference.of(clips)
        source = capture_looks(clips, reference)
        capture[lib] = {"clips": [c.name for c in clips], "worst": source["worst"], "skating": source["skating"],
                        "pose_p95": source["pose_distance"]["p95"], "toe_limit": reference.toe_limit,
                        "frame_jump": {}, "reach": source["reach"], "backward_s": float(sum(backward_seconds(c) for c in clips)),
                        "seconds": float(sum(c.n_frames / c.fps for c in clips))}
        print(f"{lib}: {len(clips)} clips; capture's worst second: skating {100 * source['worst']['skating']['value']:.0f}%, "
              f"pose {100 * source['worst']['pose_p95']['value']:.1f} cm; fastest toe {reference.toe_limit:.1f} m/s; "
              f"cannot: {'; '.join(source['reach']['cannot']) or 'nothing'}", flush=True)
        for name in args.engines.split(","):
            engine = ENGINES[name]
            t = time.perf_counter()
            model = engine.fit(clips, engine.Settings())
            train = time.perf_counter() - t
            table = model.play(clips)
            rate = f"{table.fps:g}"
            if rate not in capture[lib]["frame_jump"]:  # the capture's own jumps at the rate this engine plays
                capture[lib]["frame_jump"][rate] = spread(natural_jumps(clips, table.fps)["m_s"])
            for sched, commands in schedules(model).items():
                if args.schedules and sched not in args.schedules.split(","):
                    continue
                session = Session(model, table, play=PlaySettings())
                clip = session.play_trace(trace_of_commands(np.arange(len(commands)) / RATE, commands, name=sched))
                row = row_of(name, sched, lib, session, clip, commands, reference, source)
                row["train_seconds"] = train
                row["fps"] = table.fps
                row["capture_jump_median"] = capture[lib]["frame_jump"][rate]["median"]
                row["capture_jump_p90"] = capture[lib]["frame_jump"][rate]["p90"]
                rows.append(row)
                print(f"  {name:10s} {sched:10s} worst skating {100 * (row['worst_window_skating'] or 0):5.1f}% "
                      f"pose {100 * (row['worst_window_pose_p95'] or 0):5.1f} cm  toe spikes {row['toe_spikes']:3.0f}  "
                      f"switch jump {row['switch_jump_median'] or 0:4.2f}/{row['switch_jump_p90'] or 0:4.2f} m/s  heading "
                      f"{row['heading_error_deg_p95']:5.1f}  position {row['position_error_m_p95']:5.2f} m  "
                      f"missed {len(row['missed'])}", flush=True)
    results = {"command": "python bench/bench_stress.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items() if v and k != "mocap"),
               "seconds": SECONDS, "rows": rows, "capture": capture, "wall_seconds": time.perf_counter() - t_all,
               "environment": environment()}
    write_json(args.out, results)
    write_markdown(args.out, markdown(results))


def markdown(r: dict) -> list:
    lines = [f"# Stress schedules, judged by the worst second (`{r['command']}`)", "",
             "Each engine at its defaults, 10 s schedules. Worst second: skating % / a foot down % / pose p95 cm; toe "
             "spikes: frames faster than the capture's fastest toe; switch jump: largest joint-velocity change across a "
             "switch, median / p90 (m/s); heading (degrees) and position (m) error p95; missed: targets the run misses.", ""]
    for lib, cap in r["capture"].items():
        w = cap["worst"]
        lines += [f"## {lib} ({len(cap['clips'])} clips)", "",
                  f"Capture: worst second skating {100 * w['skating']['value']:.0f}%, a foot down "
                  f"{100 * w['planted']['value']:.0f}%, pose {100 * w['pose_p95']['value']:.1f} cm; fastest toe "
                  f"{cap['toe_limit']:.1f} m/s; frame-to-frame jump (median / p90 m/s) "
                  + ", ".join(f"{j['median']:.2f} / {j['p90']:.2f} at {fps} fps" for fps, j in cap["frame_jump"].items()) + ". "
                  f"Backwards: {cap.get('backward_s', 0.0):.1f} s of its {cap.get('seconds', 0.0):.0f} s. "
                  f"Cannot: {'; '.join(cap['reach']['cannot']) or 'nothing'}.", "",
                  "| engine | schedule | worst skating / planted % | worst pose cm | toe spikes | switch jump m/s (capture) | heading ° | "
                  "position m | response s | backwards s | missed |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for x in (x for x in r["rows"] if x["library"] == lib):
            lines.append(f"| {x['engine']} | {x['schedule']} | {100 * (x['worst_window_skating'] or 0):.0f} / "
                         f"{100 * (x['worst_window_planted'] or 0):.0f} | {100 * (x['worst_window_pose_p95'] or 0):.1f} | "
                         f"{x['toe_spikes']:.0f} | {x['switch_jump_median'] or 0:.2f} / {x['switch_jump_p90'] or 0:.2f} "
                         f"({x['capture_jump_median']:.2f} / {x['capture_jump_p90']:.2f}) | "
                         f"{x['heading_error_deg_p95']:.0f} | {x['position_error_m_p95']:.2f} | "
                         f"{'—' if x.get('response_s') is None else format(x['response_s'], '.2f')} | "
                         f"{x.get('backward_s', 0.0):.1f} | {len(x['missed'])} |")
        lines.append("")
    lines += done_when(r)
    return lines


def done_when(r: dict) -> list:
    """Issue 59's 'done when', per engine and library: of its schedules, how many meet each target
    (switch jumps at most 2x / 1.5x the capture's median / p90 at the rate played; worst-second
    skating at most the capture's worst + 5 points; no toe spike; worst-second pose p95 at most 1.5x
    the capture's worst second's; a reversal answered within 1.5 s without going backwards)."""
    lines = ["## Targets met (schedules meeting each, of those run)", "",
             "| library | engine | jump median | jump p90 | worst skating | no toe spike | worst pose | reversal in 1.5 s, no glide |",
             "|---|---|---|---|---|---|---|---|"]
    for lib, cap in r["capture"].items():
        w = cap["worst"]
        for engine in dict.fromkeys(x["engine"] for x in r["rows"] if x["library"] == lib):
            rows = [x for x in r["rows"] if x["library"] == lib and x["engine"] == engine]
            ok = {"jm": sum((x["switch_jump_median"] or 0) <= 2 * x["capture_jump_median"] for x in rows),
                  "jp": sum((x["switch_jump_p90"] or 0) <= 1.5 * x["capture_jump_p90"] for x in rows),
                  "sk": sum((x["worst_window_skating"] or 0) <= w["skating"]["value"] + 0.05 for x in rows),
                  "toe": sum(not x["toe_spikes"] for x in rows),
                  "pose": sum((x["worst_window_pose_p95"] or 0) <= 1.5 * w["pose_p95"]["value"] for x in rows)}
            rev = [x for x in rows if x["schedule"] == "reverse"]
            reversal = ("—" if not rev else "yes" if rev[0].get("response_s") is not None and rev[0]["response_s"] <= 1.5
                        and rev[0].get("backward_s", 0.0) < 0.1 else
                        f"no ({'never' if rev[0].get('response_s') is None else format(rev[0]['response_s'], '.2f') + ' s'}, "
                        f"{rev[0].get('backward_s', 0.0):.1f} s back)")
            n = len(rows)
            lines.append(f"| {lib} | {engine} | {ok['jm']}/{n} | {ok['jp']}/{n} | {ok['sk']}/{n} | {ok['toe']}/{n} | "
                         f"{ok['pose']}/{n} | {reversal} |")
    return lines + [""]


if __name__ == "__main__":
    main()
