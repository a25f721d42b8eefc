"""Look at what each engine bakes (issue 34): headless Blender, the extension's own operators as an
animator uses them (import a dozen of CMU subject 16's clips in the Library panel, train each
engine at its defaults, Play Trace with the Preview panel's defaults, which bakes; the mannequin),
then small Workbench renders: a strip of frames seen from the side, the camera following the
character, on a floor marked every 50 cm, and the root's path seen from above.

    .venv/bin/python bench/render_looks.py [--mocap DIR] [--engines a,b] [--traces straight,turning]
                                           [--out bench/results/looks] [--tag after] [--clips 16_15,...]
    (traces: straight, turning, stop, run, jump, jumphold, turn06, turn10, reverse)

Writes <out>/<tag>_<engine>_<trace>.png, and <tag>_<engine>_<trace>_worst.png: a strip of the run's
worst second (the 1 s window whose planted feet slide most), and prints, per run, the frames' range,
the hips' height range and the worst windows (``worst_second``).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from harness import ROOT, add_mocap  # noqa: E402  (first: the checkout on the path)

MIX = ["16_05", "16_11", "16_13", "16_15", "16_16", "16_17", "16_19", "16_21", "16_23", "16_31", "16_35", "16_36"]


def traces_csv(folder: str) -> dict:
    """The 10 s straight and turning traces of bench_looks, a walk with a stop, a walk with a run
    (3.0 m/s), a walk with a jump pressed 4 s in and one with it held 2 s, as CSV files Play Trace
    reads."""
    n = 100
    straight = np.tile([0.0, 1.3, 0.0, 0.0], (n, 1))
    turning = straight.copy()
    turning[: n // 2, 2], turning[n // 2:, 2] = 0.6, -0.6
    stop = straight.copy()
    stop[40:70] = 0.0  # 4 s walking, 3 s standing (the stick let go), 3 s walking again
    run = straight.copy()
    run[30:70, 1] = 3.0  # 3 s walking, 4 s running, 3 s walking again
    jump = straight.copy()
    jump[40:45, 3] = 1.0  # jump pressed for half a second, 4 s in
    held = straight.copy()
    held[40:60, 3] = 1.0  # jump held for 2 s, 4 s in (an engine whose jumps start from standing stops first)
    turn06, turn10, reverse = straight.copy(), straight.copy(), straight.copy()
    turn06[30:70, 2], turn10[30:70, 2] = 0.6, 1.0  # 3 s straight, 4 s turning left, 3 s straight
    reverse[40:, 1] = -1.3  # 4 s ahead, then the stick pulled back: turn round and walk the other way
    out = {}
    for name, samples in (("straight", straight), ("turning", turning), ("stop", stop), ("run", run), ("jump", jump),
                          ("jumphold", held), ("turn06", turn06), ("turn10", turn10), ("reverse", reverse)):
        path = os.path.join(folder, f"{name}.csv")
        with open(path, "w") as fh:
            fh.write("# rate: 10\nvx,vy,turn,airborne\n")
            np.savetxt(fh, samples, delimiter=",", fmt="%.6g")
        out[name] = path
    return out


def worst_second(clip, window: float = 1.0) -> dict:
    """The run judged by its worst 1 s windows (half a second apart), feet measured against the
    whole run's planted heights (``body.contacts``): the window whose planted feet slide on the
    largest share of contact frames, the one with the fewest foot-frames planted, and the fastest
    toe tip (m/s) with its frame."""
    from motionctl.body.contacts import foot_points, points_skating, rest_heights

    pts = foot_points(clip)
    rest = rest_heights(pts)
    n, w = clip.n_frames, max(2, int(round(window * clip.fps)))
    windows = [(a, min(n, a + w)) for a in range(0, max(1, n - w + 1), max(1, w // 2))]
    figs = [points_skating(pts[a:b], clip.fps, rest=rest) for a, b in windows]
    skate = int(np.argmax([f["skating"] for f in figs]))
    planted = int(np.argmin([f["planted"] for f in figs]))
    toe = np.linalg.norm(np.diff(pts[:, :, -1], axis=0), axis=-1).max(axis=1) * clip.fps  # [F-1]
    return {"skating": figs[skate]["skating"], "skating_at": windows[skate], "planted": figs[planted]["planted"],
            "planted_at": windows[planted], "toe_speed": float(toe.max()), "toe_at": int(np.argmax(toe)) + 1,
            "whole": points_skating(pts, clip.fps, rest=rest)}


def checker_floor(bpy, size: float = 24.0, square: float = 0.5):
    """A floor of ``square`` m squares in two greys (what a sliding foot shows against): a grid
    mesh whose faces alternate between two materials (Workbench shows material colours)."""
    n = int(size / square)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=n + 1, y_subdivisions=n + 1, size=size)
    floor = bpy.context.active_object
    for name, colour in (("floor_light", (0.78, 0.78, 0.74, 1.0)), ("floor_dark", (0.42, 0.45, 0.43, 1.0))):
        mat = bpy.data.materials.new(name)
        mat.diffuse_color = colour
        floor.data.materials.append(mat)
    for poly in floor.data.polygons:
        c = poly.center
        poly.material_index = (int(np.floor(c.x / square)) + int(np.floor(c.y / square))) % 2
    return floor


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_mocap(ap)
    ap.add_argument("--engines", default="fragments,planning,graph,field,active,matching")
    ap.add_argument("--traces", default="straight,turning")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "looks"))
    ap.add_argument("--tag", default="after")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--clips", default=",".join(MIX), help="subject 16's clips to import, or BVH files' paths (default: the dozen-clip mix)")
    ap.add_argument("--set", action="append", default=[], metavar="ENGINE.SETTING=VALUE",
                    help="a setting of the engine's panel before training (repeatable), e.g. field.compression=3")
    args = ap.parse_args()
    from readme_figures import write_png
    from render_run import follow_strip, with_subject16

    ext, bpy, tmp = with_subject16(args.mocap, args.clips.split(","))
    scene = bpy.context.scene
    st = scene.motionctl
    paths = traces_csv(tmp)
    os.makedirs(args.out, exist_ok=True)
    floor = checker_floor(bpy)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"
    scene.render.resolution_x, scene.render.resolution_y = 200, 260
    scene.render.image_settings.file_format = "PNG"
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    scene.camera = cam
    ob = st.groups[0].armature
    for engine in args.engines.split(","):
        pg = getattr(st.engines, engine)
        for item in args.set:
            name, _, value = item.partition("=")
            owner, _, key = name.partition(".")
            if owner == engine:
                setattr(pg, key, type(getattr(pg, key))(value))
        assert bpy.ops.motionctl.train(engine=engine) == {"FINISHED"}, engine
        st.engine = engine
        for tname in args.traces.split(","):
            st.preview.trace_path = paths[tname]
            st.preview.action_name = f"{engine}_{tname}"
            assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
            bpy.context.view_layer.objects.active = ob
            if not any(o.type == "MESH" for o in ob.children):
                bpy.ops.motionctl.add_mannequin()
            ob.hide_render = True
            floor.location = (0.0, 0.0, 0.0)
            start, end = (int(x) for x in ob.animation_data.action.frame_range)
            roots = []
            for f in range(start, end + 1):
                scene.frame_set(f)
                head = np.array(ob.matrix_world @ ob.pose.bones[0].head)
                roots.append(head)
            roots = np.array(roots)
            frames = np.linspace(start, end, args.frames).astype(int)

            def floor_under(root):  # the squares stay put while the floor follows the character
                floor.location = (root[0] - root[0] % 1.0, root[1] - root[1] % 1.0, 0.0)

            strip = follow_strip(bpy, ob, frames, tmp, (2.6, -0.8, 0.55), 0.6, 35, each=floor_under)
            out = os.path.join(args.out, f"{args.tag}_{engine}_{tname}.png")
            write_png(out, (np.clip(strip, 0, 1) * 255).astype(np.uint8))
            worst = worst_second(ext.operators.state.STATE.last_run)
            a, b = worst["skating_at"]
            at = start + np.linspace(a, b - 1, 6) * (end - start) / max(ext.operators.state.STATE.last_run.n_frames - 1, 1)
            strip = follow_strip(bpy, ob, at.astype(int), tmp, (2.6, -0.8, 0.55), 0.6, 35, each=floor_under)
            write_png(out[:-4] + "_worst.png", (np.clip(strip, 0, 1) * 255).astype(np.uint8))
            whole = worst["whole"]
            print(f"{out}: frames {start}-{end}, hips {roots[:, 2].min():.2f}-{roots[:, 2].max():.2f} m, "
                  f"travel {np.linalg.norm(roots[-1, :2] - roots[0, :2]):.1f} m; skating {100 * whole['skating']:.0f}% "
                  f"(worst second {100 * worst['skating']:.0f}% at frames {a}-{b}), planted "
                  f"{100 * whole['planted']:.0f}% (worst second {100 * worst['planted']:.0f}% at "
                  f"{worst['planted_at'][0]}-{worst['planted_at'][1]}), toe {worst['toe_speed']:.1f} m/s at "
                  f"frame {worst['toe_at']}", flush=True)


if __name__ == "__main__":
    main()
