"""Motion Graph and Evaluate panels' operators: build a graph, evaluate it (or a trained fragment
controller) in an environment made of scene objects, draw and save the coverage map, and bake a
sampled best path."""

from __future__ import annotations

import os
from dataclasses import dataclass

import bpy
import numpy as np

from ..motionctl.evaluate import (EditModel, EmbedSettings, Environment, Obstacle, certify_controller, coverage_rgba,
                                  evaluate, path_motion, sample_best_path)
from ..motionctl.fragments.controller import fragments_for_policy
from ..motionctl.graph import GraphSettings, MotionGraph, build_graph
from ..motionctl.motion import MotionDatabase
from ..motionctl.policy import Policy
from .common import cache_dir, load_ticked_clips, safe_name, settings, ticked_clip_tags
from .jobs import BackgroundJobOperator

_LAST: dict = {}  # the last evaluation (embedding and maps), for drawing and path sampling


# ----------------------------------------------------------------------------- environment from the scene

def environment_from_collection(collection) -> Environment:
    """Obstacles from the mesh objects of a collection: each object's footprint is the convex
    hull of its vertices seen from above; its kind comes from the custom property
    ``motionctl_kind`` (wall, chasm, low, region; regions list ``motionctl_allow`` types) or from
    the name of the collection it sits in.  An object of kind ``bounds`` (or named "floor")
    gives the room; otherwise the obstacles' extent plus a metre."""
    from scipy.spatial import ConvexHull

    obstacles, bounds = [], None
    objects = [o for o in collection.all_objects if o.type == "MESH"]
    if not objects:
        raise ValueError(f"collection {collection.name!r} holds no mesh objects to use as obstacles")
    for ob in objects:
        mw = np.array(ob.matrix_world)
        co = np.zeros(len(ob.data.vertices) * 3)
        ob.data.vertices.foreach_get("co", co)
        pts = (co.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3])[:, :2]
        kind = ob.get("motionctl_kind") or next((c.name.lower() for c in ob.users_collection
                                                 if c.name.lower() in ("chasm", "low", "region", "wall")), "wall")
        if kind == "bounds" or ob.name.lower().startswith("floor"):
            bounds = (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
            continue
        if kind not in ("wall", "chasm", "low", "region"):
            raise ValueError(f"object {ob.name!r}: motionctl_kind must be wall, chasm, low, region or bounds")
        if len(pts) < 3:
            raise ValueError(f"object {ob.name!r} needs at least 3 vertices")
        hull = pts[ConvexHull(pts).vertices]
        o = Obstacle(kind, points=hull)
        if kind == "region":
            o.allow = tuple(str(ob.get("motionctl_allow", "")).replace(",", " ").split())
            if not o.allow:
                raise ValueError(f"region {ob.name!r}: set motionctl_allow to the motion types allowed in it")
        obstacles.append(o)
    if bounds is None:
        allp = np.concatenate([o.points for o in obstacles])
        bounds = (allp[:, 0].min() - 1, allp[:, 1].min() - 1, allp[:, 0].max() + 1, allp[:, 1].max() + 1)
    return Environment(tuple(float(v) for v in bounds), obstacles, collection.name)


# ----------------------------------------------------------------------------- jobs

@dataclass
class GraphInputs:
    database: str
    clip_tags: dict
    settings: GraphSettings
    out_path: str


def graph_job(inputs: GraphInputs, progress=None, should_stop=None) -> dict:
    clips = load_ticked_clips(inputs.database, inputs.clip_tags)
    g = build_graph(clips, inputs.settings, progress, should_stop)
    if g.n == 0:
        raise ValueError("no transitions passed the threshold: raise it")
    g.save(inputs.out_path)
    return {"path": inputs.out_path, **{k: v for k, v in g.stats.items() if k != "dropped_sources"},
            "dropped": ", ".join(g.stats["dropped_sources"])}


def certify_job(policy, fragments, database: str, env: Environment, settings: EmbedSettings, pairs: int,
                lm_sample: float, progress=None, should_stop=None) -> dict:
    """Worker-thread job: a fragment controller's transition structure measured like a graph;
    its fragments are re-cut from the database when this session has not cached them."""
    if fragments is None:
        names = set(policy.clip_names)
        fragments = fragments_for_policy(policy, [c for c in MotionDatabase.load(database).clips if c.name in names])
    return evaluate(certify_controller(policy, fragments), env, settings, pairs, lm_sample, progress, should_stop)


def best_path_job(embedding, database: str, seed: int, progress=None, should_stop=None) -> dict:
    """Worker-thread job: sample a best path in the last embedding and build its motion."""
    edges = sample_best_path(embedding, seed, should_stop=should_stop)
    if not edges:
        raise ValueError("no pair of covered points 4-7 m apart has a path")
    by_name = {c.name: c for c in MotionDatabase.load(database).clips}
    missing = [n for n in embedding.graph.names if n not in by_name]
    if missing:
        raise ValueError(f"the graph's clips {', '.join(missing[:3])} are no longer in the Library; build it again")
    return {"clip": path_motion(embedding, edges, [by_name[n] for n in embedding.graph.names]), "edges": len(edges)}


class MOTIONCTL_OT_build_graph(BackgroundJobOperator, bpy.types.Operator):
    """Build a motion graph from the ticked clips (Esc cancels)"""

    bl_idname = "motionctl.build_graph"
    bl_label = "Build Motion Graph"
    job_label = "Build Graph"

    def prepare(self, context):
        from .controller import chosen_group

        st = settings(context)
        pg = st.graph
        group = chosen_group(context)
        clip_tags = ticked_clip_tags(st, group)
        if pg.min_clip >= pg.max_clip:
            raise ValueError("the minimum clip length must be shorter than the maximum")
        gs = GraphSettings(threshold=pg.threshold, min_clip=pg.min_clip, max_clip=pg.max_clip,
                           branching=pg.branching)
        out = os.path.join(cache_dir(context), f"{safe_name(group.name)}_graph.npz")
        return graph_job, {"inputs": GraphInputs(group.database, clip_tags, gs, out)}

    def finish(self, context, result) -> None:
        pg = settings(context).graph
        pg.graph_path = result["path"]
        pg.clips, pg.transitions = result["clips"], result["edges"]
        pg.seconds_kept, pg.seconds_total = result["seconds_kept"], result["seconds_total"]
        pg.candidates = result["candidates"]
        pg.dropped = result["dropped"]
        self.report({"INFO"}, f"motion graph: {result['clips']} clips, {result['edges']} transitions, "
                    f"{result['seconds_kept']:.1f} of {result['seconds_total']:.1f} s kept")


class MOTIONCTL_OT_evaluate(BackgroundJobOperator, bpy.types.Operator):
    """Embed the motion graph (or the fragment controller) in the environment and measure it"""

    bl_idname = "motionctl.evaluate"
    bl_label = "Evaluate"
    job_label = "Evaluate"

    def prepare(self, context):
        st = settings(context)
        ev = st.evaluate
        if ev.collection is None:
            raise ValueError("choose the collection of obstacle objects")
        from .controller import chosen_group
        from .preview import cached_fragments, trained_policy

        env = environment_from_collection(ev.collection)
        inputs = {"env": env, "pairs": ev.pairs, "lm_sample": ev.lm_sample,
                  "settings": EmbedSettings(cell=ev.cell, headings=ev.headings, radius=ev.radius,
                                            edit=EditModel(scale=ev.edit_scale))}
        if ev.source == "CONTROLLER":
            policy = trained_policy(context)
            if not isinstance(policy, Policy):
                raise ValueError("certification measures a motion-fragment controller; train one first")
            return certify_job, {"policy": policy, "fragments": cached_fragments(policy),
                                 "database": chosen_group(context).database, **inputs}
        if not st.graph.graph_path:
            raise ValueError("build a motion graph first (Motion Graph panel)")
        return evaluate, {"graph": MotionGraph.load(bpy.path.abspath(st.graph.graph_path)), **inputs}

    def finish(self, context, result) -> None:
        ev = settings(context).evaluate
        _LAST.clear()
        _LAST.update(result)
        ev.coverage_xy, ev.coverage_xya = result["coverage_xy"], result["coverage_xya"]
        pe = result["path_efficiency"]
        ev.path_mean, ev.path_median = pe["mean"], pe["median"]
        ev.nodes, ev.seconds = result["nodes"], result["embed_seconds"] + result["metric_seconds"]
        lines = [f"{k}: coverage {100 * v:.1f}%" for k, v in result["action_coverage"].items()]
        for k, v in result["action_efficiency"].items():
            lines.append(f"{k}: action efficiency {v['mean']:.2f} mean, {v['median']:.2f} median")
        for k, v in result["maneuverability"].items():
            lines.append(f"{k}: maneuverability {v['theoretical']['mean']:.1f} s theory, "
                         f"{v['practical']['mean']:.1f} s practice")
        ev.details = "\n".join(lines)
        ev.map_path = save_coverage_image(context, result)
        self.report({"INFO"}, f"coverage {100 * ev.coverage_xy:.1f}% XY, {100 * ev.coverage_xya:.1f}% XYθ")


def save_coverage_image(context, result) -> str:
    rgba = coverage_rgba(result)
    h, w = rgba.shape[:2]
    name = "motionctl_coverage"
    img = bpy.data.images.get(name) or bpy.data.images.new(name, w, h)
    if tuple(img.size) != (w, h):
        img.scale(w, h)
    img.pixels.foreach_set(rgba.astype(np.float32).ravel())
    path = os.path.join(cache_dir(context), "coverage.png")
    img.filepath_raw = path
    img.file_format = "PNG"
    img.save()
    return path


def coverage_quads(result, lift: float = 0.005):
    """(positions [6 K, 3], colours [6 K, 4]) triangles over the floor, one quad per grid cell."""
    emb = result["embedding"]
    grid = emb.grid
    rgba = np.transpose(coverage_rgba(result), (1, 0, 2)).reshape(-1, 4)
    nx, ny = grid.shape
    ix, iy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    x0 = grid.origin[0] + ix.ravel() * grid.cell
    y0 = grid.origin[1] + iy.ravel() * grid.cell
    c = grid.cell
    corners = [(0, 0), (c, 0), (c, c), (0, 0), (c, c), (0, c)]
    pos = np.stack([np.column_stack((x0 + dx, y0 + dy, np.full(len(x0), lift))) for dx, dy in corners], axis=1)
    col = np.repeat(rgba[:, None, :], 6, axis=1)
    col[..., 3] = 0.6
    return pos.reshape(-1, 3).astype(np.float32), col.reshape(-1, 4).astype(np.float32)


_DRAW = {}


def draw_coverage() -> None:
    import gpu
    from gpu_extras.batch import batch_for_shader

    if "batch" not in _DRAW:
        if not _LAST:
            return
        pos, col = coverage_quads(_LAST)
        shader = gpu.shader.from_builtin("SMOOTH_COLOR")
        _DRAW["shader"] = shader
        _DRAW["batch"] = batch_for_shader(shader, "TRIS", {"pos": pos, "color": col})
    gpu.state.blend_set("ALPHA")
    _DRAW["batch"].draw(_DRAW["shader"])
    gpu.state.blend_set("NONE")


class MOTIONCTL_OT_show_coverage(bpy.types.Operator):
    """Show or hide the coverage map over the floor in the viewport"""

    bl_idname = "motionctl.show_coverage"
    bl_label = "Show Coverage"

    def execute(self, context):
        if "handle" in _DRAW:
            bpy.types.SpaceView3D.draw_handler_remove(_DRAW.pop("handle"), "WINDOW")
            _DRAW.pop("batch", None)
        elif not _LAST:
            self.report({"ERROR"}, "evaluate first")
            return {"CANCELLED"}
        else:
            _DRAW["handle"] = bpy.types.SpaceView3D.draw_handler_add(draw_coverage, (), "WINDOW", "POST_VIEW")
        for area in getattr(context.screen, "areas", []):
            area.tag_redraw()
        return {"FINISHED"}


# ----------------------------------------------------------------------------- best path

class MOTIONCTL_OT_show_best_path(BackgroundJobOperator, bpy.types.Operator):
    """Sample two points 4-7 m apart, find the best path between them and bake it as an action"""

    bl_idname = "motionctl.show_best_path"
    bl_label = "Bake a Best Path"
    bl_options = {"REGISTER", "UNDO"}
    job_label = "Best Path"
    seed: bpy.props.IntProperty(name="Seed", default=0)

    def prepare(self, context):
        from .controller import chosen_group
        from .preview import target_armature

        if not _LAST:
            raise ValueError("evaluate first")
        if settings(context).evaluate.source == "CONTROLLER":
            raise ValueError("best paths are baked for motion graphs (Source: Motion Graph)")
        target_armature(context)  # fail now, not after the search
        return best_path_job, {"embedding": _LAST["embedding"], "database": chosen_group(context).database,
                               "seed": self.seed}

    def finish(self, context, result) -> None:
        from .armature import bake_clip
        from .preview import target_armature

        clip = result["clip"]
        act = bake_clip(target_armature(context), clip, "best_path",
                        scene_fps=context.scene.render.fps / context.scene.render.fps_base)
        context.scene.frame_start, context.scene.frame_end = (int(v) for v in act.frame_range)
        self.report({"INFO"}, f"baked a best path of {result['edges']} clips ({clip.duration:.1f} s)")


classes = (MOTIONCTL_OT_build_graph, MOTIONCTL_OT_evaluate, MOTIONCTL_OT_show_coverage, MOTIONCTL_OT_show_best_path)
