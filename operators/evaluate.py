"""Evaluate panel operators: measure any trained model in a room made of scene objects (a motion
graph as it is, a controller through its macro-steps), draw and save the coverage map, and bake a
sampled best path.

The evaluation's maps, room and grid settings are kept in a cache file, so reopening the .blend
shows the coverage again and a best path can still be baked (the embedding is rebuilt from them).
"""

from __future__ import annotations

import os

import bpy
import numpy as np
from scipy.spatial import ConvexHull

from ..motionctl.engines import ENGINES
from ..motionctl.errors import MotionctlError
from ..motionctl.evaluate import (EditModel, EmbedSettings, Environment, Obstacle, certify, coverage_rgba, embed,
                                  environment_from_dict, path_motion, sample_best_path, summary_lines)
from ..motionctl.evaluate.room.environment import environment_to_dict
from ..motionctl.store import open_archive, save_archive
from .armature import bake_clip
from .background import BackgroundJobOperator
from .cache import cache_path, resolve, stored
from .common import group_clips, report_error, settings, target_armature, trained_model
from .state import STATE

EVALUATION_FORMAT = "motionctl.evaluation/1"
KINDS = ("wall", "chasm", "low", "region")


def environment_from_collection(collection) -> Environment:
    """Obstacles from the mesh objects of a collection: each object's footprint is the convex
    hull of its vertices seen from above; its kind comes from the custom property
    ``motionctl_kind`` (wall, chasm, low, region; regions list ``motionctl_allow`` types) or from
    the name of the collection it sits in.  An object of kind ``bounds`` (or named "floor")
    gives the room; otherwise the obstacles' extent plus a metre."""
    obstacles, bounds = [], None
    objects = [o for o in collection.all_objects if o.type == "MESH"]
    if not objects:
        raise MotionctlError(f"collection {collection.name!r} holds no mesh objects to use as obstacles")
    for ob in objects:
        mw = np.array(ob.matrix_world)
        co = np.zeros(len(ob.data.vertices) * 3)
        ob.data.vertices.foreach_get("co", co)
        pts = (co.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3])[:, :2]
        kind = ob.get("motionctl_kind") or next((c.name.lower() for c in ob.users_collection
                                                 if c.name.lower() in KINDS), "wall")
        if kind == "bounds" or ob.name.lower().startswith("floor"):
            bounds = (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
            continue
        if kind not in KINDS:
            raise MotionctlError(f"object {ob.name!r}: motionctl_kind must be wall, chasm, low, region or bounds")
        if len(pts) < 3 or np.ptp(pts, axis=0).min() < 1e-6:
            raise MotionctlError(f"object {ob.name!r} needs an area seen from above")
        hull = pts[ConvexHull(pts).vertices]
        o = Obstacle(kind, points=hull)
        if kind == "region":
            o.allow = tuple(str(ob.get("motionctl_allow", "")).replace(",", " ").split())
            if not o.allow:
                raise MotionctlError(f"region {ob.name!r}: set motionctl_allow to the motion types allowed in it")
        obstacles.append(o)
    if bounds is None:
        allp = np.concatenate([o.points for o in obstacles])
        bounds = (allp[:, 0].min() - 1, allp[:, 1].min() - 1, allp[:, 0].max() + 1, allp[:, 1].max() + 1)
    return Environment(tuple(float(v) for v in bounds), obstacles, collection.name)


def embed_settings(ev) -> EmbedSettings:
    return EmbedSettings(cell=ev.cell, headings=ev.headings, radius=ev.radius, edit=EditModel(scale=ev.edit_scale))


def evaluate_job(model, table, env, settings, pairs, lm_sample, progress=None, should_stop=None) -> dict:
    """Worker job: certify the model in the room (a motion graph is embedded as it is)."""
    return certify(model, table, env, settings, pairs, lm_sample, progress, should_stop)


class MOTIONCTL_OT_evaluate(BackgroundJobOperator, bpy.types.Operator):
    """Embed the chosen model in the room and measure what it can do (paper 004's metrics)"""

    bl_idname = "motionctl.evaluate"
    bl_label = "Evaluate"
    job_label = "Evaluate"

    def prepare(self, context):
        ev = settings(context).evaluate
        if ev.collection is None:
            raise MotionctlError("choose the collection of obstacle objects")
        env = environment_from_collection(ev.collection)
        model, group = trained_model(context, ev.engine)
        table = None if model.own_graph() is not None else model.frame_table(group_clips(context, group))
        self._env, self._engine = env, ev.engine
        return evaluate_job, {"model": model, "table": table, "env": env, "settings": embed_settings(ev),
                              "pairs": ev.pairs, "lm_sample": ev.lm_sample}

    def finish(self, context, result) -> None:
        ev = settings(context).evaluate
        STATE.evaluation = result
        STATE.embedding = result["embedding"]
        STATE.batches.pop("coverage", None)
        ev.evaluated = self._engine
        ev.coverage_xy, ev.coverage_xya = result["coverage_xy"], result["coverage_xya"]
        pe = result["path_efficiency"]
        ev.path_mean, ev.path_median = pe["mean"], pe["median"]
        ev.nodes, ev.seconds = result["nodes"], result["embed_seconds"] + result["metric_seconds"]
        if result["unused_clips"]:
            self.report({"INFO"}, "clips that never play in this room: " + "; ".join(result["unused_clips"]))
        ev.details = "\n".join(summary_lines(result))
        path = cache_path(context, "evaluation")
        meta = {"engine": self._engine, "environment": environment_to_dict(self._env),
                "embed": {"cell": ev.cell, "headings": ev.headings, "radius": ev.radius, "edit_scale": ev.edit_scale}}
        ev.result_path = stored(save_archive(path, EVALUATION_FORMAT, meta, {
            "coverage_map": result["coverage_map"], "free": result["free"]}))
        ev.map_path = stored(save_coverage_image(context, result))
        self.report({"INFO"}, f"coverage {100 * ev.coverage_xy:.1f}% XY, {100 * ev.coverage_xya:.1f}% XYθ")


def stored_evaluation(context) -> tuple[dict, dict]:
    """(maps, meta) of the last evaluation from memory or its cache file; MotionctlError if none."""
    if STATE.evaluation is not None:
        return STATE.evaluation, {}
    path = resolve(settings(context).evaluate.result_path)
    if not path or not os.path.exists(path):
        raise MotionctlError("evaluate first")
    with open_archive(path, EVALUATION_FORMAT, "evaluation") as (meta, z):
        return {"coverage_map": np.asarray(z["coverage_map"]), "free": np.asarray(z["free"])}, meta


def save_coverage_image(context, result) -> str:
    rgba = coverage_rgba(result)
    h, w = rgba.shape[:2]
    name = "motionctl_coverage"
    img = bpy.data.images.get(name) or bpy.data.images.new(name, w, h)
    if tuple(img.size) != (w, h):
        img.scale(w, h)
    img.pixels.foreach_set(rgba.astype(np.float32).ravel())
    path = cache_path(context, "coverage", ext=".png")
    img.filepath_raw = path
    img.file_format = "PNG"
    img.save()
    return path


def coverage_quads(coverage_map, free, origin, cell, lift: float = 0.005):
    """(positions [6 K, 3], colours [6 K, 4]) triangles over the floor, one quad per grid cell."""
    rgba = np.transpose(coverage_rgba({"coverage_map": coverage_map, "free": free}), (1, 0, 2)).reshape(-1, 4)
    nx, ny = coverage_map.shape
    ix, iy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    x0 = origin[0] + ix.ravel() * cell
    y0 = origin[1] + iy.ravel() * cell
    corners = [(0, 0), (cell, 0), (cell, cell), (0, 0), (cell, cell), (0, cell)]
    pos = np.stack([np.column_stack((x0 + dx, y0 + dy, np.full(len(x0), lift))) for dx, dy in corners], axis=1)
    col = np.repeat(rgba[:, None, :], 6, axis=1)
    col[..., 3] = 0.6
    return pos.reshape(-1, 3).astype(np.float32), col.reshape(-1, 4).astype(np.float32)


def map_geometry(context):
    """Coverage quads of the last evaluation (from memory, else its cache file)."""
    maps, meta = stored_evaluation(context)
    if "embedding" in maps:
        grid = maps["embedding"].grid
        origin, cell = grid.origin, grid.cell
    else:
        env = environment_from_dict(meta["environment"])
        origin, cell = np.array(env.bounds[:2]), meta["embed"]["cell"]
    return coverage_quads(maps["coverage_map"], maps["free"], origin, cell)


def draw_coverage() -> None:
    import gpu

    batch = STATE.batches.get("coverage")
    if batch is None:
        return
    gpu.state.blend_set("ALPHA")
    batch[1].draw(batch[0])
    gpu.state.blend_set("NONE")


class MOTIONCTL_OT_show_coverage(bpy.types.Operator):
    """Show or hide the coverage map over the floor in the viewport"""

    bl_idname = "motionctl.show_coverage"
    bl_label = "Show Coverage"

    def execute(self, context):
        if "coverage" in STATE.overlays:
            bpy.types.SpaceView3D.draw_handler_remove(STATE.overlays.pop("coverage"), "WINDOW")
            STATE.batches.pop("coverage", None)
        else:
            try:
                pos, col = map_geometry(context)
            except Exception as exc:  # noqa: BLE001
                return report_error(self, context, exc, "Show Coverage")
            if not bpy.app.background:
                import gpu
                from gpu_extras.batch import batch_for_shader

                shader = gpu.shader.from_builtin("SMOOTH_COLOR")
                STATE.batches["coverage"] = (shader, batch_for_shader(shader, "TRIS", {"pos": pos, "color": col}))
            STATE.overlays["coverage"] = bpy.types.SpaceView3D.draw_handler_add(draw_coverage, (), "WINDOW",
                                                                                "POST_VIEW")
        for area in getattr(context.screen, "areas", []) if context.screen else []:
            area.tag_redraw()
        return {"FINISHED"}


def best_path_job(model, table, embedding, env, settings, seed, progress=None, should_stop=None) -> dict:
    """Worker job: (re-embed the graph if needed,) sample a best path and synthesize its motion."""
    if embedding is None:
        embedding = embed(model.own_graph(), env, settings, progress, should_stop)
    edges = sample_best_path(embedding, seed, should_stop=should_stop)
    if not edges:
        raise MotionctlError("no pair of covered points 4-7 m apart has a path")
    return {"clip": path_motion(embedding, edges, table), "edges": len(edges), "embedding": embedding}


class MOTIONCTL_OT_bake_best_path(BackgroundJobOperator, bpy.types.Operator):
    """Sample two points 4-7 m apart, find the best path between them and bake it as an action"""

    bl_idname = "motionctl.bake_best_path"
    bl_label = "Bake a Best Path"
    bl_options = {"REGISTER", "UNDO"}
    job_label = "Best Path"
    seed: bpy.props.IntProperty(name="Seed", default=0)

    def prepare(self, context):
        ev = settings(context).evaluate
        maps, meta = stored_evaluation(context)
        engine = ev.evaluated or ev.engine
        model, group = trained_model(context, engine)
        if model.own_graph() is None:
            raise MotionctlError(f"best paths are baked for motion graphs; the evaluation is of a "
                                 f"{ENGINES[engine].label} model")
        self._target = target_armature(context, group, "Bake a Best Path")
        table = model.frame_table(group_clips(context, group))
        embedding = maps.get("embedding") or STATE.embedding
        env = settings_ = None
        if embedding is None:
            env = environment_from_dict(meta["environment"], meta["environment"].get("name", "room"))
            e = meta["embed"]
            settings_ = EmbedSettings(cell=e["cell"], headings=e["headings"], radius=e["radius"],
                                      edit=EditModel(scale=e["edit_scale"]))
        return best_path_job, {"model": model, "table": table, "embedding": embedding, "env": env,
                               "settings": settings_, "seed": self.seed}

    def finish(self, context, result) -> None:
        STATE.embedding = result["embedding"]
        clip = result["clip"]
        act = bake_clip(self._target, clip, "best_path",
                        scene_fps=context.scene.render.fps / context.scene.render.fps_base)
        context.scene.frame_start, context.scene.frame_end = (int(v) for v in act.frame_range)
        self.report({"INFO"}, f"baked a best path of {result['edges']} clips ({clip.duration:.1f} s)")


classes = (MOTIONCTL_OT_evaluate, MOTIONCTL_OT_show_coverage, MOTIONCTL_OT_bake_best_path)
