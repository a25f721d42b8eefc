"""Render the README picture of the Active Learning panel: a request and its pseudoexample.

    .venv/bin/python bench/render_active.py [--mocap DIR] [--out docs/active_request.png]

Everything goes through the extension's own operators on real capture (CMU subject 16 walks):
import, Start from the seed clip, a few Auto steps, Suggest, pick the first request offered with a
pseudoexample, Preview it on the ghost.  The ghost gets the mannequin (blue) and the request marker
a flat arrow on the floor (empties do not render); four frames of the pseudoexample are rendered
from one camera (headless Cycles on the CPU), so the picture shows where the request starts, where
it asks the cycle to end, and what a blend of the examples already held does.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

WALKS = ("16_15", "16_17", "16_19", "16_21", "16_22", "16_25", "16_32")


def arrow_mesh(bpy, name, length=0.7, width=0.4):
    """A flat arrow on the floor along +y, its tip at the origin."""
    verts = [(-0.07, -length, 0), (0.07, -length, 0), (0.07, -width, 0), (-0.07, -width, 0),
             (-width / 2, -width, 0), (width / 2, -width, 0), (0, 0, 0)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], [(0, 1, 2, 3), (4, 5, 6)])
    mesh.update()
    return bpy.data.objects.new(name, mesh)


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "active_request.png"))
    ap.add_argument("--auto", type=int, default=4, help="Auto steps before the suggestion")
    args = ap.parse_args()
    from readme_figures import write_png
    from render_run import render_pixels, studio, with_subject16

    ext, bpy, tmp = with_subject16(args.mocap, WALKS)
    scene = bpy.context.scene
    st = scene.motionctl
    st.engines.active.seed_clip = WALKS[0]
    st.engines.active.task = "walk"  # the paper's walk (the picture's request; the default is Walk, Run and Stop)
    assert bpy.ops.motionctl.active_start() == {"FINISHED"}
    st.active.auto_steps = args.auto
    assert bpy.ops.motionctl.active_auto() == {"FINISHED"}
    assert bpy.ops.motionctl.active_suggest() == {"FINISHED"}
    a = st.active
    session = ext.operators.state.STATE.active
    offered = [k for k, c in enumerate(session.candidates) if c.pseudo is not None]
    if not offered:
        sys.exit("no request was offered with a pseudoexample; try more --auto steps")
    k = min(offered, key=lambda k: session.candidates[k].pseudo.errors.sum())  # the closest to doing it
    a.candidate_index = k
    request = bpy.data.objects["motionctl request"]["motionctl_request"]
    print(f"request {k + 1} of {len(a.candidates)}: {request}\npseudoexample: {a.candidates[k].pseudo}")
    assert bpy.ops.motionctl.active_preview_pseudo() == {"FINISHED"}
    ghost = bpy.data.objects["motionctl ghost"]
    marker = bpy.data.objects["motionctl request"]
    st.groups[0].armature.hide_render = True
    ghost.hide_render = True
    solid = ext.operators.mannequin.solid_material
    body = ext.operators.mannequin.add_mannequin(bpy.context, ghost)
    body.data.materials.clear()
    body.data.materials.append(solid("ghost", (0.25, 0.55, 0.95, 1)))
    arrow = arrow_mesh(bpy, "request arrow")
    arrow.data.materials.append(solid("request", (0.95, 0.5, 0.1, 1)))
    arrow.location = (marker.location.x, marker.location.y, 0.01)
    arrow.rotation_euler = (0.0, 0.0, marker.rotation_euler.z)
    scene.collection.objects.link(arrow)

    cam = studio(bpy, ext, size=40.0)
    look = np.array([0.5 * marker.location.x, 0.5 * marker.location.y, 0.7])
    cam.location = (look[0] + 2.6, look[1] - 1.4, 2.6)
    d = look - np.array(cam.location)
    cam.rotation_euler = (np.pi / 2 - np.arctan2(-d[2], np.hypot(d[0], d[1])), 0, np.arctan2(d[1], d[0]) - np.pi / 2)
    cam.data.lens = 30
    start, end = (int(x) for x in ghost.animation_data.action.frame_range)
    tiles = []
    for f in np.linspace(start, end, 4).astype(int):
        scene.frame_set(int(f))
        tiles.append(render_pixels(bpy, os.path.join(tmp, f"active_{f:04d}.png")))
    picture = np.concatenate(tiles, axis=1)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    write_png(args.out, (np.clip(picture, 0, 1) * 255).astype(np.uint8))
    print(f"wrote {args.out} ({picture.shape[1]} x {picture.shape[0]}): frames {start}-{end} of the pseudoexample")


if __name__ == "__main__":
    main()
