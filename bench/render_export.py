"""Render what comes back from a game-engine file: a CMU walk retargeted onto the UE5-mannequin test
rig (orange), exported with the Unreal preset (FBX, centimetres) and imported back with Blender's
own FBX importer (blue), the import moved 1 m to the side; headless Blender, Cycles on the CPU.

    .venv/bin/python bench/render_export.py [--mocap DIR] [--out docs/export_round_trip.png]

Prints, for each rendered frame, the root bone's ground position in both (the import's less the
1 m) so the picture can be checked by number as well as by eye.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

from harness import ROOT, add_mocap  # noqa: E402  (first: the checkout on the path)


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "export_round_trip.png"))
    ap.add_argument("--frames", type=int, default=4)
    args = ap.parse_args()
    from readme_figures import write_png
    from render_run import render_pixels, studio, with_subject16
    from rigs import make_rig

    ext, bpy, tmp = with_subject16(args.mocap, ["16_15"])
    st = bpy.context.scene.motionctl
    ob = make_rig(bpy, "ue")
    st.retarget.target, st.retarget.source = ob, "GROUP"
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    G = ext.operators.gamefile
    act = ob.animation_data.action
    path = os.path.join(tempfile.mkdtemp(), "ue.fbx")
    G.export_armature(ob, ext.motionctl.retarget.export.PRESETS["UNREAL"], path)
    arm, acts = G.import_file(path)
    ext.operators.compat.assign_action(arm, acts[act.name])
    arm.delta_location.x = 1.0  # the imported take keys the object's own location
    solid = ext.operators.mannequin.solid_material
    for o, colour in ((ob, (0.85, 0.5, 0.25, 1)), (arm, (0.25, 0.45, 0.8, 1))):
        bpy.context.view_layer.objects.active = o
        assert bpy.ops.motionctl.add_mannequin() == {"FINISHED"}
        body = next(c for c in o.children if c.type == "MESH")
        body.data.materials.clear()
        body.data.materials.append(solid(f"{o.name}_body", colour))
        o.hide_render = True
    scene = bpy.context.scene
    cam = studio(bpy, ext)
    cam.data.type, cam.data.lens = "PERSP", 40
    scene.render.resolution_x, scene.render.resolution_y = 360, 360
    start, end = (int(x) for x in act.frame_range)
    tiles = []
    for f in np.linspace(start, end, args.frames).astype(int):
        scene.frame_set(int(f))
        a = np.array(ob.matrix_world @ ob.pose.bones["root"].head)
        b = np.array(arm.matrix_world @ arm.pose.bones["root"].head) - [1.0, 0.0, 0.0]
        print(f"frame {f}: root {np.round(a, 4)} original, {np.round(b, 4)} imported (less 1 m), "
              f"{100 * np.linalg.norm(a - b):.4f} cm apart")
        mid = a + [0.5, 0.0, 0.0]
        cam.location = tuple(mid + [0.0, -4.5, 1.2])
        d = np.array([mid[0], mid[1], 0.9]) - np.array(cam.location)
        cam.rotation_euler = (np.pi / 2 - np.arctan2(-d[2], np.hypot(d[0], d[1])), 0, np.arctan2(d[1], d[0]) - np.pi / 2)
        tiles.append(render_pixels(bpy, os.path.join(tmp, f"export_{f:04d}.png")))
    picture = np.concatenate(tiles, axis=1)
    write_png(args.out, (np.clip(picture, 0, 1) * 255).astype(np.uint8))
    print(f"wrote {args.out} ({picture.shape[1]} x {picture.shape[0]})")


if __name__ == "__main__":
    main()
