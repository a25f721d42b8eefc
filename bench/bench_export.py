"""Game-engine export round trips (issue 38): real takes retargeted onto the Mixamo, Rigify and
UE5-mannequin test rigs (bpy module, headless), exported with each preset (Unreal FBX cm, Unity FBX
m, Godot .glb) by Blender's own exporters, imported back with Blender's own importers, and compared
with what Blender played before the export.

    .venv/bin/python bench/bench_export.py [--mocap DIR] [--takes 16_15 16_58 16_35]

Per preset and rig: the root bone's displacement from the first frame (cm) and yaw (degrees) per
frame against the original's (p95 and max over every frame of every take), the scoreboard's skating
of the feet (ankle and toe, ``body.contacts.points_skating``) after and before, whether the takes'
names and frame ranges and the bones are equal, the FBX file's UnitScaleFactor and armature node
scale, and the export and import times.  One imported frame is printed beside the original's.
Writes bench/results/export.json and export.md.

Issue 58.5: each file is also read by a reader that is not Blender (``bench/game_readers.py``: the
``ufbx`` wheel for FBX, a .glb parser of our own for glTF) and every bone's world head (mm) and
rotation (degrees) at every frame of every take is compared with what Blender played before the
export (``ob.matrix_world @ pose_bone.matrix``), bones matched by name; with the takes' first and
last frames as the file says them (time 0 is frame 0), so that glTF and FBX takes can be seen to
start alike.  ``pip install -e .[bench]`` brings ufbx.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np

from harness import ROOT, add_mocap, write_json, write_markdown  # noqa: E402  (first: the checkout on the path)

import game_readers  # noqa: E402  (bench/, beside this script)

DEFAULT_TAKES = ("16_15", "16_58", "16_35")  # walk, walk, run


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--takes", nargs="+", default=list(DEFAULT_TAKES))
    ap.add_argument("--rigs", nargs="+", default=None, help="test rigs (default: all of tests/rigs.py EXPORT_RIGS)")
    args = ap.parse_args()
    from harness import environment
    from rigs import EXPORT_RIGS
    import test_blender_export as T
    from tools.extension import load_extension

    ext = load_extension()
    import bpy

    T.TAKES = tuple(args.takes)
    try:
        import ufbx  # noqa: F401  (a bench dependency: pip install -e .[bench])
    except ImportError:
        raise SystemExit("bench_export reads the FBX files with ufbx too: pip install -c constraints.txt -e .[bench]") \
            from None
    G = ext.operators.gamefile
    P = ext.motionctl.retarget.export.PRESETS
    folder = tempfile.mkdtemp(prefix="motionctl_export_")  # the files are not kept: the figures are
    rows, starts = [], {}
    t_all = time.perf_counter()
    rigs = tuple(args.rigs or EXPORT_RIGS)
    for kind in rigs:
        ob = T.bake_takes(bpy, ext, args.mocap, kind)
        feet = T.foot_bones(ext, ob)
        takes = G.takes_of(ob)
        before = T.played(ext, ob, takes, feet)
        frames = sum(r[1] - r[0] + 1 for _, _, r in takes)
        world = played_world(bpy, ext, ob, takes)
        starts[kind] = {}
        for name, p in P.items():
            path = os.path.join(folder, f"{kind}_{name.lower()}{p.ext}")
            t = time.perf_counter()
            G.export_armature(ob, p, path)
            export_s = time.perf_counter() - t
            t = time.perf_counter()
            arm, acts = G.import_file(path)
            import_s = time.perf_counter() - t
            after = {"bones": [b.name for b in arm.data.bones], "takes": {}}
            for n, a in acts.items():
                r = (int(round(a.frame_range[0])), int(round(a.frame_range[1])))
                after["takes"][n] = dict(frames=r, **G.evaluate(arm, a, range(r[0], r[1] + 1), "root", feet))
            rt = ext.motionctl.retarget.export.round_trip(before, after, bpy.context.scene.render.fps)
            t = time.perf_counter()
            fps = bpy.context.scene.render.fps
            read = game_readers.read_fbx(path, fps) if p.format == "FBX" else game_readers.read_glb(path, fps)
            reader_s = time.perf_counter() - t
            we = game_readers.world_errors(world, read)
            starts[kind][name] = {n: tk["first"] for n, tk in read["takes"].items()}
            facts = G.fbx_facts(path) if p.format == "FBX" else None
            node = None if facts is None else next(v for v in facts["models"].values() if v[0] != "LimbNode")
            row = {"preset": name, "rig": kind, "takes": len(takes), "frames": frames, "bones": len(after["bones"]),
                   **{k: rt[k] for k in ("root_cm_p95", "root_cm_max", "yaw_deg_p95", "yaw_deg_max", "skating",
                                         "skating_before", "names_equal", "bones_equal", "frames_equal",
                                         "travel_m")},
                   "unit_scale_factor": None if facts is None else facts["unit_scale_factor"],
                   "node_scale": None if node is None else float(np.max(np.abs(np.array(node[1]) - 1.0))) + 1.0,
                   "export_ms": 1e3 * export_s, "import_ms": 1e3 * import_s, "file_kb": os.path.getsize(path) / 1024,
                   "reader": READERS[p.format], "bones_in_rig": len(world["bones"]),
                   **{k: we[k] for k in ("bones_compared", "bones_in_file", "bones_unmatched", "takes_found",
                                         "takes_equal", "first_frame", "first_key_frame", "frames_compared",
                                         "frames_missing", "world_error_mm_max", "world_error_mm_p95",
                                         "world_angle_deg_max", "world_angle_deg_p95", "worst_bone", "worst_take",
                                         "worst_frame")},
                   "file_settings": read.get("settings"), "reader_ms": 1e3 * reader_s}
            rows.append(row)
            n0 = takes[0][0]
            k = 40 if len(before["takes"][n0]["root_pos"]) > 40 else 0
            b, a = before["takes"][n0], after["takes"].get(n0)
            if a is not None:
                print(f"  {n0} frame {k + 1}: root {np.round(b['root_pos'][k], 4)} -> {np.round(a['root_pos'][k], 4)}; "
                      f"left ankle {np.round(b['feet'][k, 0, 0], 4)} -> {np.round(a['feet'][k, 0, 0], 4)}")
            print(f"{kind:7s} {name:7s} root {rt['root_cm_p95']:.5f} cm (max {rt['root_cm_max']:.5f}) yaw "
                  f"{rt['yaw_deg_p95']:.5f} deg skating {100 * rt['skating']:.1f}% (before {100 * rt['skating_before']:.1f}%) "
                  f"names {rt['names_equal']} frames {rt['frames_equal']} bones {rt['bones_equal']} "
                  f"unit {row['unit_scale_factor']} export {1e3 * export_s:.0f} ms import {1e3 * import_s:.0f} ms",
                  flush=True)
            print(f"{'':15s} {READERS[p.format]}: {we['bones_compared']}/{len(world['bones'])} bones, world head "
                  f"{_g(we['world_error_mm_p95'])} mm p95 (max {_g(we['world_error_mm_max'])} mm, {we['worst_bone']} "
                  f"{we['worst_take']} frame {we['worst_frame']}), rotation max {_g(we['world_angle_deg_max'])} deg; "
                  f"takes {we['takes_found']} ({1e3 * reader_s:.0f} ms)", flush=True)
            data = arm.data
            bpy.data.objects.remove(arm)
            bpy.data.armatures.remove(data)
            for a in acts.values():
                bpy.data.actions.remove(a)
    wall = time.perf_counter() - t_all
    shutil.rmtree(folder, ignore_errors=True)
    res = {"command": "python bench/bench_export.py" + (f" --takes {' '.join(args.takes)}"
                                                         if tuple(args.takes) != DEFAULT_TAKES else "")
                      + (f" --rigs {' '.join(rigs)}" if rigs != tuple(EXPORT_RIGS) else ""),
           "blender": bpy.app.version_string, "takes": list(args.takes), "fps": 30,
           "settings": {name: {"fbx": G.fbx_arguments(p), "gltf": G.gltf_arguments(p)}[
               "fbx" if p.format == "FBX" else "gltf"] | {"unit_scale": p.unit_scale} for name, p in P.items()},
           "rows": rows, "starts": {kind: same_start(s) for kind, s in starts.items()},
           "readers": {"FBX": f"ufbx {game_readers.ufbx_version()}", "GLB": READERS["GLB"]},
           "wall_seconds": wall, "environment": environment()}
    out = os.path.join(ROOT, "bench", "results")
    write_json("export", res, folder=out, default=lambda v: sorted(v) if isinstance(v, set) else float(v))
    write_markdown("export", markdown(res), folder=out)
    print(f"wrote bench/results/export.md ({wall:.0f} s)")


READERS = {"FBX": "ufbx", "GLB": "glb (struct+json+numpy)"}


def played_world(bpy, ext, ob, takes) -> dict:
    """What Blender plays of each take, every bone in world space: {"bones", "takes": {name:
    {"frames": (first, last), "world" [F, B, 4, 4]}}} of ``ob.matrix_world @ pose_bone.matrix`` (metres,
    the object's scale included; the readers' matrices have unit rotation columns).  Each take's
    action alone on ``ob`` (its NLA muted meanwhile), as ``gamefile.evaluate`` plays it."""
    from mathutils import Matrix

    ad = ob.animation_data
    saved = (ad.action, [t.mute for t in ad.nla_tracks])
    n, mw = len(ob.pose.bones), np.array(ob.matrix_world)
    out = {"bones": [b.name for b in ob.pose.bones], "takes": {}}
    for t in ad.nla_tracks:
        t.mute = True
    for name, act, (first, last) in takes:
        slot = act.slots[0] if hasattr(ad, "action_slot") and len(getattr(act, "slots", ())) else None
        ext.operators.compat.assign_action(ob, act, slot)
        for b in ob.pose.bones:  # channels a take does not key would keep the last take's values
            b.matrix_basis = Matrix.Identity(4)
        world = np.empty((last - first + 1, n, 4, 4))
        m = np.empty(n * 16, dtype=np.float32)
        for k, f in enumerate(range(first, last + 1)):  # Blender evaluates one frame at a time
            bpy.context.scene.frame_set(f)
            ob.pose.bones.foreach_get("matrix", m)
            world[k] = mw @ m.reshape(n, 4, 4).transpose(0, 2, 1)
        out["takes"][name] = {"frames": (first, last), "world": world}
    ad.action = saved[0]
    for t, mute in zip(ad.nla_tracks, saved[1]):
        t.mute = mute
    return out


def same_start(by_preset: dict) -> dict:
    """{"first_frames": {preset: {take: first frame}}, "same": whether every preset's takes start on
    the same frames} of one rig's files, as the readers say them."""
    firsts = list(by_preset.values())
    return {"first_frames": by_preset, "same": all(f == firsts[0] for f in firsts)}


def _g(v) -> str:
    return "" if v is None else f"{v:g}"


def markdown(res) -> str:
    env = res["environment"]
    lines = [f"# Game-engine export round trips (`{res['command']}`, Blender {res['blender']} as a module, headless)",
             "", f"Commit {env['commit']}{' (dirty)' if env['dirty'] else ''}; Python {env['python']}, numpy "
             f"{env['packages'].get('numpy')}; {res['wall_seconds']:.0f} s in all.", "",
             f"Takes: CMU subject 16 {', '.join(res['takes'])} at {res['fps']} fps and a controller run (motion "
             "matching trained on them playing a 4 s player trace), retargeted with Root Motion 'Root Bone' and "
             "pushed to NLA; each exported with the preset by Blender's own exporter and imported "
             "back with Blender's own importer.  Root errors are the root bone's displacement from the first frame "
             "(cm) and yaw (degrees) against what Blender played before the export, over every frame of every take; "
             "skating is the scoreboard's (share of contact frames a planted foot slides), after and before.  "
             "`unit` is the FBX's UnitScaleFactor (1: centimetres, 100: metres) and `node scale` the armature "
             "node's Lcl Scaling (1: no hidden x100 or x0.01).", "",
             "| preset | rig | takes | frames | bones | root cm p95 / max | yaw deg p95 / max | skating % (before) | "
             "names equal | frames equal | bones equal | unit | node scale | export ms | import ms | file KB |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|"]
    for r in res["rows"]:
        lines.append(f"| {r['preset'].lower()} | {r['rig']} | {r['takes']} | {r['frames']} | {r['bones']} | "
                     f"{r['root_cm_p95']:.5f} / {r['root_cm_max']:.5f} | {r['yaw_deg_p95']:.5f} / {r['yaw_deg_max']:.5f} | "
                     f"{100 * r['skating']:.1f} ({100 * r['skating_before']:.1f}) | {r['names_equal']} | "
                     f"{r['frames_equal']} | {r['bones_equal']} | "
                     f"{_g(r['unit_scale_factor'])} | {_g(r['node_scale'])} | "
                     f"{r['export_ms']:.0f} | {r['import_ms']:.0f} | {r['file_kb']:.0f} |")
    lines += ["", f"## Every bone in world space, read without Blender ({res['readers']['FBX']}; {res['readers']['GLB']})",
              "", "Each file read by a reader that shares no code with Blender: FBX by ufbx (converted on load to "
              "metres, right-handed Z up: the file's UnitScaleFactor and axes undone), .glb by our parser "
              "(`bench/game_readers.py`: accessors, TRS channels, the node hierarchy; Y up turned to Z up).  Every "
              "bone's world head and rotation at every frame of every take against what Blender played before the "
              "export (`matrix_world @ pose_bone.matrix`), bones matched by name (every bone, deforming or not: "
              "both exporters write them all here); the file's frame k is the take's frame first + k.  Rotations "
              "compare as they are: neither exporter turns the bones' axes with these settings (FBX primary bone "
              "axis Y, secondary X: Blender's own; glTF keeps Blender's bone frames under its Y-up change of basis), "
              "which the sub-millidegree figures confirm.  `first frame` is the earliest take start in the file (its time in seconds times "
              "the fps: FBX LocalStart, glTF the first sampler time) and `first key` the earliest key's; `starts "
              "alike` says whether every preset's takes start on the same frames.", "",
              "| preset | rig | reader | bones compared / rig | frames compared (missing) | head mm p95 / max | "
              "rotation deg p95 / max | worst bone (take, frame) | first frame (first key) | takes equal | starts alike | "
              "read ms |",
              "|---|---|---|---:|---:|---:|---:|---|---:|---|---|---:|"]
    for r in res["rows"]:
        lines.append(f"| {r['preset'].lower()} | {r['rig']} | {r['reader']} | {r['bones_compared']} / {r['bones_in_rig']} | "
                     f"{r['frames_compared']} ({r['frames_missing']}) | {_f(r['world_error_mm_p95'])} / "
                     f"{_f(r['world_error_mm_max'])} | {_f(r['world_angle_deg_p95'])} / {_f(r['world_angle_deg_max'])} | "
                     f"{r['worst_bone']} ({r['worst_take']}, {r['worst_frame']}) | {r['first_frame']} ({r['first_key_frame']}) | "
                     f"{r['takes_equal']} | {res['starts'][r['rig']]['same']} | {r['reader_ms']:.0f} |")
    return "\n".join(lines) + "\n"


def _f(v) -> str:
    return "-" if v is None else f"{v:.5f}"


if __name__ == "__main__":
    main()
