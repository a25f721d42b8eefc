"""Fuzzing the readers: mutants of real BVH and ASF/AMC files must fail with motionctl's own error.

    .venv/bin/python bench/fuzz.py [--bvh 100000] [--asf 20000] [--seed 0] [--mocap DIR]

Seeds are real files from ``$MOTIONCTL_MOCAP_DIR`` (default ../shared/mocap), shortened to their
first frames so a case takes milliseconds.  Each mutant gets one to three mutations (bytes
flipped, lines deleted, duplicated or swapped, truncation, hostile tokens such as ``nan``,
``1e999``, ``{``, a joint renamed to another's name, a bone given a second parent, deep
nesting, hundreds of joints with one name) and goes through the whole per-file import: parse,
units and axes, calibration trimming, floor, names, grouping.  Outcomes:

  ok         a clip came out, every value finite
  error      MotionFileError naming the file and the line
  no_line    MotionFileError without a line (only for errors about the whole file)
  crash      any other exception: a bug
  nonfinite  a clip came out holding NaN or inf: a bug
  slow       took longer than the time limit (1 s): a bug

Writes bench/results/fuzz.md and .json.  The test suite runs a few thousand cases of the same
generator (tests/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections import Counter

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from motionctl.io.asfamc import parse_amc, parse_asf  # noqa: E402
from motionctl.io.bvh import parse_bvh_oriented  # noqa: E402
from motionctl.errors import MotionFileError  # noqa: E402
from motionctl.io.library import ImportSettings, group_clips, prepare_clip  # noqa: E402

TIME_LIMIT = 1.0
HOSTILE = [b"nan", b"NaN", b"inf", b"-inf", b"1e999", b"-1e999", b"1e308", b"1e-320", b"0", b"-0", b"1e30",
           b"99999999999999999999999", b"-5", b"{", b"}", b"JOINT", b"ROOT", b"End", b"Site", b"CHANNELS", b"OFFSET",
           b"MOTION", b"Frames:", b"Frame Time:", b"\x00", b"\xff\xfe", b"\xc3\xa9", b"-", b".", b"1.2.3", b"e5",
           b"begin", b"end", b"root", b":hierarchy", b":bonedata", b"dof", b"length", b"axis", b"rx", b"tx", b"l",
           b"#", b"\r", b"\t", b"  ", b"\n\n", b"Xrotation", b"Zposition", b"6", b"3", b"1000000", b"-1"]


def mocap_dir(arg=None) -> str:
    d = arg or default_mocap()
    if not os.path.isdir(d):
        raise SystemExit(f"no capture folder at {d}: set MOTIONCTL_MOCAP_DIR")
    return d


def short_bvh(data: bytes, frames: int) -> bytes:
    """The file with only its first ``frames`` frames (the Frames: line fixed)."""
    head, _, body = data.partition(b"MOTION")
    lines = body.replace(b"\r\n", b"\n").split(b"\n")
    i = next(k for k, ln in enumerate(lines) if ln.strip().lower().startswith(b"frame time"))
    n = int(next(ln for ln in lines if ln.strip().lower().startswith(b"frames:")).split(b":")[1])
    keep = lines[i + 1:i + 1 + min(frames, n)]
    return head + b"MOTION\nFrames: %d\n" % len(keep) + lines[i] + b"\n" + b"\n".join(keep) + b"\n"


def short_amc(data: bytes, frames: int) -> bytes:
    lines = data.split(b"\n")
    out, count = [], 0
    for ln in lines:
        if ln.strip().isdigit():
            count += 1
            if count > frames:
                break
        out.append(ln)
    return b"\n".join(out) + b"\n"


def seeds(mocap: str, frames: int = 40):
    """(bvh seeds [(name, bytes)], asf/amc seeds [(name, asf bytes, amc bytes)])."""
    bvh = []
    for sub, names in (("cmu31", ("cmu_02_01_walk_mbnames.bvh", "cmu_131_01_start_walk_stop.bvh",
                                  "cmu_01_01_forward_jumps_turn_around.bvh")),
                       ("cc_base", ("cc_cmu_07_02_walk.bvh", "cc_cmu_02_03_run_jog.bvh"))):
        for n in names:
            with open(os.path.join(mocap, sub, n), "rb") as fh:
                bvh.append((n, short_bvh(fh.read(), frames)))
    amc = []
    for subject, trial in (("16", "15"), ("127", "29"), ("10", "01")):
        folder = os.path.join(mocap, "cmu_amc", subject)
        with open(os.path.join(folder, f"{subject}.asf"), "rb") as fh:
            asf = fh.read()
        with open(os.path.join(folder, f"{subject}_{trial}.amc"), "rb") as fh:
            amc.append((f"{subject}_{trial}", asf, short_amc(fh.read(), frames)))
    return bvh, amc


# ----------------------------------------------------------------------------- mutations

def _lines(data):
    return data.split(b"\n")


def mutate(data: bytes, rng: np.random.Generator, kind: str) -> bytes:
    """One to three random mutations of a file's bytes; ``kind`` ("bvh", "asf", "amc") adds
    format-aware ones."""
    for _ in range(int(rng.integers(1, 4))):
        data = _mutate_once(data, rng, kind)
    return data


def _mutate_once(data: bytes, rng, kind: str) -> bytes:
    lines = _lines(data)
    op = int(rng.integers(0, 14))
    if op == 0 and data:  # flip bytes
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 8))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        return bytes(b)
    if op == 1 and len(lines) > 1:  # delete a line
        del lines[int(rng.integers(0, len(lines)))]
    elif op == 2:  # duplicate a line
        i = int(rng.integers(0, len(lines)))
        lines.insert(i, lines[i])
    elif op == 3 and len(lines) > 1:  # swap two lines
        i, j = rng.integers(0, len(lines), 2)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 4:  # truncate
        return data[: int(rng.integers(0, len(data) + 1))]
    elif op in (5, 6):  # a hostile token replaces one, or goes between two
        i = int(rng.integers(0, len(lines)))
        words = lines[i].split(b" ")
        k = int(rng.integers(0, len(words) + 1))
        tok = HOSTILE[int(rng.integers(0, len(HOSTILE)))]
        if op == 5 and k < len(words):
            words[k] = tok
        else:
            words.insert(k, tok)
        lines[i] = b" ".join(words)
    elif op == 7:  # replace a number with a hostile number
        i = int(rng.integers(0, len(lines)))
        words = lines[i].split()
        nums = [k for k, w in enumerate(words) if w[:1].isdigit() or w[:1] == b"-"]
        if nums:
            words[nums[int(rng.integers(0, len(nums)))]] = HOSTILE[int(rng.integers(0, 12))]
            lines[i] = b" ".join(words)
    elif op == 8:  # one name takes another's (duplicate joints / bones)
        names = [ln.split()[-1] for ln in lines if ln.strip().split()[:1] in ([b"JOINT"], [b"name"])]
        if len(names) > 1:
            a, b = rng.choice(len(names), 2, replace=False)
            return data.replace(names[a], names[b], 1 + int(rng.integers(0, 3)))
    elif op == 9 and kind == "bvh":  # deep nesting or many joints of one name
        i = next((k for k, ln in enumerate(lines) if ln.strip().startswith(b"JOINT")), None)
        if i is not None:
            n = int(rng.integers(50, 3000))
            if rng.random() < 0.5:
                block = [b"JOINT deep", b"{", b"OFFSET 0 1 0", b"CHANNELS 3 Zrotation Xrotation Yrotation"] * n
                block += [b"End Site", b"{", b"OFFSET 0 1 0", b"}"] + [b"}"] * n
            else:
                block = [b"JOINT same", b"{", b"OFFSET 0 1 0", b"End Site", b"{", b"OFFSET 0 1 0", b"}", b"}"] * n
            lines[i:i] = block
    elif op == 10 and kind == "asf":  # a second parent or a cycle in the hierarchy
        i = next((k for k, ln in enumerate(lines) if ln.strip().lower() == b":hierarchy"), None)
        names = [ln.split()[-1] for ln in lines if ln.strip().split()[:1] == [b"name"]]
        if i is not None and len(names) > 1:
            a, b = rng.choice(len(names), 2, replace=False)
            lines.insert(i + 2, names[a] + b" " + names[b])
    elif op == 11:  # CR line endings, or none
        return data.replace(b"\n", b"\r" if rng.random() < 0.5 else b" ")
    elif op == 12:  # repeat a block of lines
        i = int(rng.integers(0, len(lines)))
        j = min(len(lines), i + int(rng.integers(1, 30)))
        lines[i:i] = lines[i:j] * int(rng.integers(1, 20))
    elif op == 13:  # a channel count or frame count changed
        for k, ln in enumerate(lines):
            s = ln.strip().lower()
            if (s.startswith(b"channels") or s.startswith(b"frames:")) and rng.random() < 0.2:
                words = ln.split()
                words[1] = HOSTILE[int(rng.integers(0, len(HOSTILE)))] if rng.random() < 0.3 else \
                    str(int(rng.integers(-2, 12))).encode()
                lines[k] = b" ".join(words)
                break
    return b"\n".join(lines)


# ----------------------------------------------------------------------------- one case

SETTINGS = ImportSettings()


def import_bytes(kind: str, data: bytes, asf: bytes | None = None):
    """The whole per-file import of a file's bytes: read, prepare, group.  kind "bvh", or "amc"
    with the ASF's bytes."""
    if kind == "bvh":
        clip, info = parse_bvh_oriented(data, "mutant.bvh")
    else:
        skeleton = parse_asf(asf, "mutant.asf", SETTINGS.unit_scale)
        clip, info = parse_amc(data, "mutant.amc", skeleton, SETTINGS.amc_fps, tags=False)
    clip, info, _ = prepare_clip(clip, info, SETTINGS, "mutant")
    return group_clips([("mutant", clip)], {})


def run_case(kind: str, data: bytes, asf: bytes | None = None) -> tuple[str, float, str]:
    """(outcome, seconds, detail) of one mutant; see the module docstring for the outcomes."""
    t0 = time.perf_counter()
    try:
        groups = import_bytes(kind, data, asf)
        outcome, detail = "ok", ""
        for c in groups[0].database.clips:
            arrays = [c.root_pos, c.local_rot, c.skeleton.offsets] + ([c.local_pos] if c.local_pos is not None else [])
            if not all(np.all(np.isfinite(a)) for a in arrays):
                outcome, detail = "nonfinite", "a clip holds NaN or inf"
    except MotionFileError as exc:
        outcome, detail = ("error" if exc.line is not None else "no_line"), exc.reason
    except Exception as exc:  # noqa: BLE001 - anything else is what we look for
        outcome, detail = "crash", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}"
    seconds = time.perf_counter() - t0
    if seconds > TIME_LIMIT and outcome in ("ok", "error", "no_line"):
        outcome, detail = "slow", f"{seconds:.2f} s ({outcome}: {detail})"
    return outcome, seconds, detail


def cases(bvh_seeds, amc_seeds, n_bvh: int, n_asf: int, seed: int):
    """(kind, label, mutant bytes, asf bytes or None): BVH mutants, then ASF/AMC mutants (half of
    them mutate the ASF, half the AMC)."""
    rng = np.random.default_rng(seed)
    for _ in range(n_bvh):
        name, data = bvh_seeds[int(rng.integers(0, len(bvh_seeds)))]
        yield "bvh", name, mutate(data, rng, "bvh"), None
    for k in range(n_asf):
        name, asf, amc = amc_seeds[int(rng.integers(0, len(amc_seeds)))]
        if k % 2:
            yield "amc", name + ".asf", amc, mutate(asf, rng, "asf")
        else:
            yield "amc", name + ".amc", mutate(amc, rng, "amc"), asf


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bvh", type=int, default=100_000)
    ap.add_argument("--asf", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mocap")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args(argv)
    from harness import environment

    env = environment()  # the commit whose code runs
    bvh_seeds, amc_seeds = seeds(mocap_dir(args.mocap))
    counts = {"bvh": Counter(), "amc": Counter()}
    examples, slowest = {}, {"bvh": 0.0, "amc": 0.0}
    t0 = time.perf_counter()
    total = args.bvh + args.asf
    for i, (kind, label, data, asf) in enumerate(cases(bvh_seeds, amc_seeds, args.bvh, args.asf, args.seed)):
        outcome, seconds, detail = run_case(kind, data, asf)
        counts[kind][outcome] += 1
        slowest[kind] = max(slowest[kind], seconds)
        if outcome in ("crash", "nonfinite", "slow", "no_line") and len(examples.get(outcome, [])) < 5:
            examples.setdefault(outcome, []).append({"case": i, "seed": label, "detail": detail[:600]})
        if (i + 1) % 5000 == 0:
            print(f"  {i + 1}/{total} cases, {time.perf_counter() - t0:.0f} s: "
                  f"bvh {dict(counts['bvh'])} asf/amc {dict(counts['amc'])}", flush=True)
    seconds = time.perf_counter() - t0
    commit = env["commit"]
    result = {"command": "bench/fuzz.py " + " ".join(argv or sys.argv[1:]), "commit": commit, "seed": args.seed,
              "time_limit_s": TIME_LIMIT, "seconds": seconds, "counts": {k: dict(v) for k, v in counts.items()},
              "slowest_case_s": slowest, "examples": examples, "environment": env,
              "settings": {"seed": args.seed, "bvh": args.bvh, "asf": args.asf, "time_limit_s": TIME_LIMIT}}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "fuzz.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    outcomes = ("ok", "error", "no_line", "crash", "nonfinite", "slow")
    md = ["# Reader fuzzing", "", f"`{result['command']}` at {commit[:10]}: {total:,} mutants of real capture "
          f"in {seconds:.0f} s (time limit {TIME_LIMIT:g} s per case).", "",
          "| files | " + " | ".join(outcomes) + " | slowest case |", "|---" * (len(outcomes) + 2) + "|"]
    for kind, label in (("bvh", "BVH"), ("amc", "ASF/AMC")):
        md.append(f"| {label} | " + " | ".join(f"{counts[kind][o]:,}" for o in outcomes) +
                  f" | {1000 * slowest[kind]:.0f} ms |")
    md += ["", "ok: read into a clip with every value finite; error: motionctl's MotionFileError with file and line; "
           "no_line: the same without a line (errors about the whole file); crash, nonfinite, slow: bugs."]
    with open(os.path.join(args.out, "fuzz.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))
    for outcome, ex in examples.items():
        print(f"\n{outcome}:")
        for e in ex:
            print(f"  case {e['case']} ({e['seed']}): {e['detail']}")
    bad = sum(counts[k][o] for k in counts for o in ("crash", "nonfinite", "slow"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
