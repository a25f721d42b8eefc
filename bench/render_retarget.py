"""Render the README picture of retargeting: a motion-matching run on CMU subject 16's capture
(blue mannequin) retargeted onto Rigify's human metarig (orange mannequin) standing 1.2 m to its
side, seen from the side at five moments; headless Blender, Cycles on the CPU.

    .venv/bin/python bench/render_retarget.py [--mocap DIR] [--out docs/retarget_run.png]

Everything goes through the extension's operators as an animator would: import, train, play a
trace, pick the target, Retarget (Last Run, Root Bone, Keep Feet on Floor), Add Mannequin.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "retarget_run.png"))
    ap.add_argument("--frames", type=int, default=5)
    args = ap.parse_args()
    from readme_figures import write_png
    from render_run import render_pixels, studio, with_subject16

    from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

    names = ["16_15", "16_17", "16_19", "16_21", "16_22", "16_35", "16_37", "16_58"]
    ext, bpy, tmp = with_subject16(args.mocap, names)
    scene = bpy.context.scene
    st = scene.motionctl
    assert bpy.ops.motionctl.train(engine="matching") == {"FINISHED"}
    st.engine = "matching"
    trace = os.path.join(tmp, "retarget_trace.csv")
    write_trace(generate_trace(PlayerSettings(max_speed=1.6), 8.0, 10.0, seed=7), trace)
    st.preview.trace_path, st.preview.action_name = trace, "matching_run"
    assert bpy.ops.motionctl.play_trace() == {"FINISHED"}
    source = st.groups[0].armature
    import addon_utils

    addon_utils.enable("rigify", default_set=True)
    assert bpy.ops.object.armature_human_metarig_add() == {"FINISHED"}
    rig = bpy.context.active_object
    rig.location = (1.2, 0.0, 0.0)
    st.retarget.target, st.retarget.source, st.retarget.root_motion = rig, "RUN", "BONE"
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    solid = ext.operators.mannequin.solid_material
    for ob, colour in ((source, (0.25, 0.45, 0.8, 1)), (rig, (0.85, 0.5, 0.25, 1))):
        bpy.context.view_layer.objects.active = ob
        assert bpy.ops.motionctl.add_mannequin() == {"FINISHED"}
        body = next(o for o in ob.children if o.type == "MESH")
        body.data.materials.clear()
        body.data.materials.append(solid(f"{ob.name}_body", colour))
        ob.hide_render = True
    cam = studio(bpy, ext)
    start, end = (int(x) for x in rig.animation_data.action.frame_range)
    tiles = []
    cam.data.type, cam.data.lens = "PERSP", 40
    scene.render.resolution_x, scene.render.resolution_y = 360, 360
    for f in np.linspace(start, end, args.frames).astype(int):
        scene.frame_set(int(f))
        a = np.array(source.matrix_world @ source.pose.bones[0].head)
        b = np.array(rig.matrix_world @ rig.pose.bones["spine"].head)
        mid = (a + b) / 2
        side = np.array([-(b - a)[1], (b - a)[0], 0.0])
        side = side / max(np.linalg.norm(side), 1e-6)
        cam.location = tuple(mid + 4.2 * side + [0, 0, 0.1 - mid[2] + 1.1])
        d = np.array([mid[0], mid[1], 0.9]) - np.array(cam.location)
        cam.rotation_euler = (np.pi / 2 - np.arctan2(-d[2], np.hypot(d[0], d[1])), 0, np.arctan2(d[1], d[0]) - np.pi / 2)
        tiles.append(render_pixels(bpy, os.path.join(tmp, f"retarget_{f:04d}.png")))
    picture = np.concatenate(tiles, axis=1)
    write_png(args.out, (np.clip(picture, 0, 1) * 255).astype(np.uint8))
    print(f"wrote {args.out} ({picture.shape[1]} x {picture.shape[0]}): {args.frames} frames of a "
          f"{end - start + 1}-frame run on {rig.name} ({len(rig.data.bones)} bones)")


if __name__ == "__main__":
    main()
