"""Render the README picture of a controller run: headless Blender (Cycles on the CPU), the
mannequin, a strip of frames seen from the side and the root trajectory seen from above.

    .venv/bin/python bench/render_run.py [--mocap DIR] [--out docs/controller_run.png]
    .venv/bin/python bench/render_run.py --engine field --out docs/field_run.png \
        --values-out docs/field_values.png

Everything goes through the extension's own operators: import, train, play a generated
player trace through the controller, bake, add the mannequin.  ``--values-out`` also writes the
picture of the value function the Controller panel shows after training (engines that have one).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)


def render_pixels(bpy, path):
    bpy.context.scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(path)
    w, h = img.size
    px = np.array(img.pixels[:], dtype=np.float32).reshape(h, w, 4)[::-1, :, :3]
    bpy.data.images.remove(img)
    return px


def follow_strip(bpy, ob, frames, folder: str, offset, look_height: float, lens: float, each=None) -> np.ndarray:
    """``frames`` of the scene rendered side by side [H, W * n, 3], the scene's camera at ``offset``
    (x, y from the root, z absolute) looking at the root at ``look_height``; ``each(root)`` is called
    before each frame renders (to move the floor along, say)."""
    scene, cam = bpy.context.scene, bpy.context.scene.camera
    cam.data.type, cam.data.lens = "PERSP", lens
    tiles = []
    for f in frames:
        scene.frame_set(int(f))
        root = np.array(ob.matrix_world @ ob.pose.bones[0].head)
        if each is not None:
            each(root)
        cam.location = (root[0] + offset[0], root[1] + offset[1], offset[2])
        d = np.array([root[0], root[1], look_height]) - np.array(cam.location)
        cam.rotation_euler = (np.pi / 2 - np.arctan2(-d[2], np.hypot(d[0], d[1])), 0.0, np.arctan2(d[1], d[0]) - np.pi / 2)
        tiles.append(render_pixels(bpy, os.path.join(folder, f"frame_{int(f):04d}.png")))
    return np.concatenate(tiles, axis=1)


def with_subject16(mocap: str, trials):
    """The extension loaded into a factory-empty headless Blender at 30 fps with CMU subject 16's
    ``trials`` imported through its own operator: (extension, bpy, a scratch folder for renders)."""
    from tools.extension import load_extension

    ext = load_extension()
    import bpy

    tmp = os.path.join(ROOT, "build", "render")
    os.makedirs(tmp, exist_ok=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = 30
    folders = {}  # a trial is subject 16's take name, or a BVH file's path
    for n in trials:
        path = n if n.endswith(".bvh") else os.path.join(mocap, "cmu_amc", "16", n + ".amc")
        folders.setdefault(os.path.dirname(os.path.abspath(path)), []).append(os.path.basename(path))
    for folder, names in folders.items():
        assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": n} for n in names]) == {"FINISHED"}
    return ext, bpy, tmp


def studio(bpy, ext, size: float = 60.0):
    """Floor, sun, world and a camera (returned) in the scene; Cycles on the CPU (no GPU needed
    headless), 300 x 360 tiles."""
    scene = bpy.context.scene
    bpy.ops.mesh.primitive_plane_add(size=size)
    floor = bpy.context.active_object
    floor.data.materials.append(ext.operators.mannequin.solid_material("floor", (0.55, 0.6, 0.55, 1)))
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = (0.6, 0.2, 0.8)
    scene.collection.objects.link(sun)
    scene.world = bpy.data.worlds.new("world")
    scene.world.color = (0.35, 0.4, 0.5)
    scene.view_settings.view_transform = "Standard"
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    scene.camera = cam
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 16
    scene.render.resolution_x, scene.render.resolution_y = 300, 360
    scene.render.image_settings.file_format = "PNG"
    return cam


def main():
    ap = argparse.ArgumentParser()
    add_mocap(ap)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "controller_run.png"))
    ap.add_argument("--frames", type=int, default=6)
    ap.add_argument("--engine", default="fragments")
    ap.add_argument("--values-out", default="")
    args = ap.parse_args()
    from motionctl.play.commands import EVALUATION_PLAYER, generate_trace, scale_player, write_trace
    from readme_figures import write_png

    names = ["16_15", "16_17", "16_19", "16_35", "16_37", "16_39", "16_33"]
    if args.engine == "fragments":
        names.append("16_05")  # a forward jump: the fragment controller jumps on the player's button
    ext, bpy, tmp = with_subject16(args.mocap, names)
    scene = bpy.context.scene
    st = scene.motionctl
    if args.engine == "fragments":
        st.engines.fragments.held_out = 0
    bpy.ops.motionctl.train(engine=args.engine)
    st.engine = args.engine
    if args.values_out:
        img = bpy.data.images[ext.operators.controller.picture_name(args.engine, st.groups[0].name)]
        w, h = img.size
        px = np.array(img.pixels[:], dtype=np.float32).reshape(h, w, 4)[::-1, :, :3]
        px = np.repeat(np.repeat(px, 3, axis=0), 3, axis=1)  # 3x, nearest
        write_png(args.values_out, (np.clip(px, 0, 1) * 255).astype(np.uint8))
        print(f"wrote {args.values_out} ({px.shape[1]} x {px.shape[0]})")
    trace = generate_trace(scale_player(EVALUATION_PLAYER, 3.0), 10.0, 10.0, seed=3)
    trace_path = os.path.join(tmp, "trace.csv")
    write_trace(trace, trace_path)
    st.preview.trace_path = trace_path
    st.preview.action_name = "controller_run"
    st.preview.warp = 0.0
    bpy.ops.motionctl.play_trace()
    ob = st.groups[0].armature
    bpy.context.view_layer.objects.active = ob
    bpy.ops.motionctl.add_mannequin()
    ob.hide_render = True

    solid = ext.operators.mannequin.solid_material
    cam = studio(bpy, ext)

    start, end = (int(x) for x in ob.animation_data.action.frame_range)
    frames = np.linspace(start, end, args.frames).astype(int)
    strip = follow_strip(bpy, ob, frames, tmp, (3.2, 0.0, 1.0), 0.9, 50)

    # Top view: the root trajectory as a thin tube, the mannequin at the last frame.
    pts = []
    for f in range(start, end + 1, 2):
        scene.frame_set(f)
        pts.append(np.array(ob.matrix_world @ ob.pose.bones[0].head))
    pts = np.array(pts)
    curve = bpy.data.curves.new("trajectory", "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = 0.04
    spline = curve.splines.new("POLY")
    spline.points.add(len(pts) - 1)
    for p, q in zip(spline.points, pts):
        p.co = (q[0], q[1], 0.02, 1.0)
    traj = bpy.data.objects.new("trajectory", curve)
    curve.materials.append(solid("trajectory", (0.1, 0.3, 0.9, 1)))
    scene.collection.objects.link(traj)
    scene.frame_set(end)
    centre = (pts[:, :2].min(0) + pts[:, :2].max(0)) / 2
    aspect = strip.shape[1] / 360.0
    cam.data.type = "ORTHO"
    cam.data.ortho_scale = max(np.ptp(pts[:, 0]) + 2.0, (np.ptp(pts[:, 1]) + 2.0) * aspect)
    cam.location = (centre[0], centre[1], 20.0)
    cam.rotation_euler = (0, 0, 0)
    scene.render.resolution_x, scene.render.resolution_y = strip.shape[1], 360
    top = render_pixels(bpy, os.path.join(tmp, "top.png"))
    picture = np.concatenate((strip, top), axis=0)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    write_png(args.out, (np.clip(picture, 0, 1) * 255).astype(np.uint8))
    print(f"wrote {args.out} ({picture.shape[1]} x {picture.shape[0]}): {len(frames)} frames of a {trace.duration:.0f} s "
          f"controller run over {len(pts) * 2} frames")


if __name__ == "__main__":
    main()
