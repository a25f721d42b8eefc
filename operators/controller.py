"""Controller panel operators: train a fragment controller in the background (warm-started when
only weights change), and the job function it runs (plain Python: it never touches bpy)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import bpy
import numpy as np

from ..motionctl.fragments import (EVALUATION_PLAYER, ControllerSettings, FragmentModel, FragmentSettings,
                                   PlayerSettings, QualitySettings, evaluate_controllers, player_traces, read_trace,
                                   scale_player)
from ..motionctl.fragments.controller import train_to_file
from ..motionctl.policy import PolicySettings
from .common import cache_dir, load_ticked_clips, safe_name, settings, ticked_clip_tags
from .jobs import BackgroundJobOperator

# In-memory caches for retuning: the fragment model (fragments + motion distances, the slow
# part) per clip selection, and the last values per controller, used to warm-start.
_MODELS: dict = {}
_VALUES: dict = {}


@dataclass
class TrainInputs:
    database: str
    clip_tags: dict  # clip name -> tags, only the clips chosen for the controller
    settings: ControllerSettings
    trace_files: list
    player: PlayerSettings | None
    trace_seconds: float
    held_out: int
    out_path: str
    seed: int = 1


def _model_key(inp: TrainInputs) -> tuple:
    f = inp.settings.fragments
    return (inp.database, os.path.getmtime(inp.database), tuple(sorted(inp.clip_tags)), f.length, f.stride, f.fps,
            f.mirror, tuple(inp.settings.quality.deltas))


def train_job(inputs: TrainInputs, progress=None, should_stop=None) -> dict:
    """Worker-thread job: build (or reuse) the fragment model, train, save, evaluate."""
    s = inputs.settings
    key = _model_key(inputs)
    model = _MODELS.get(key)
    step = (lambda lo, hi: (lambda f, m: progress(lo + (hi - lo) * f, m))) if progress else (lambda lo, hi: None)
    if model is None:
        clips = load_ticked_clips(inputs.database, inputs.clip_tags)
        model = FragmentModel.build(clips, s.fragments, s.quality, step(0.0, 0.4), should_stop)
        _MODELS.clear()  # keep one model in memory
        _MODELS[key] = model
    fs = model.fragments
    top = float(np.percentile(np.linalg.norm(fs.control[:, :2], axis=1), 95))
    if inputs.trace_files:
        traces = [read_trace(p) for p in inputs.trace_files]
    else:
        player = inputs.player or PlayerSettings()
        if player.max_speed <= 0:
            player = scale_player(player, top)
        traces = player_traces([player], inputs.trace_seconds, fs.decision_rate, inputs.seed)
    value_key = (key, s.policy.kind, s.policy.threshold, s.bins)
    init = _VALUES.get(value_key)
    trained = train_to_file(None, traces, inputs.out_path, s, model, init,
                            progress=step(0.4, 0.85), should_stop=should_stop)
    _VALUES[value_key] = trained.result.values
    held = player_traces([scale_player(EVALUATION_PLAYER, top)], 10.0, fs.decision_rate, inputs.seed + 100,
                         inputs.held_out) if inputs.held_out > 0 else []
    percent = std = float("nan")
    if held:
        res = evaluate_controllers(model, {"policy": trained.policy.table}, trained.bins, held, s.quality, {"opt": None},
                                   step(0.85, 1.0), should_stop)
        percent, std = res["policy"]["mean"], res["policy"]["std"]
    r = trained.result
    return {"path": inputs.out_path, "fragments": fs.n, "improvements": r.improvements, "converged": r.converged,
            "seconds": r.seconds, "percent": percent, "std": std, "warm": init is not None, "bins": trained.bins.n}


def controller_settings(pg) -> ControllerSettings:
    """Scene controller properties -> core settings."""
    return ControllerSettings(
        FragmentSettings(length=pg.fragment_length, stride=pg.fragment_stride, mirror=pg.mirror),
        QualitySettings(omegas=tuple(pg.omega), deltas=tuple(pg.delta), stutter_window=pg.stutter, w_v=pg.w_v,
                        w_t=pg.w_t, w_a=pg.w_a),
        PolicySettings(kind=pg.kind, discount=pg.discount, threshold=pg.threshold if pg.use_threshold else None),
        bins=pg.bins.lower(), kmeans_bins=pg.kmeans_bins, smoothing=pg.smoothing,
    )


def chosen_group(context):
    st = settings(context)
    if not st.groups:
        raise ValueError("import clips first (Library panel)")
    name = st.controller.group or st.groups[0].name
    group = st.groups.get(name)
    if group is None:
        raise ValueError(f"no clip group named {name!r}")
    return group


class MOTIONCTL_OT_train_controller(BackgroundJobOperator, bpy.types.Operator):
    """Train a motion-fragment controller in the background (Esc cancels, the previous policy stays)"""

    bl_idname = "motionctl.train_controller"
    bl_label = "Train"
    job_label = "Train"

    def prepare(self, context):
        st = settings(context)
        pg = st.controller
        group = chosen_group(context)
        if not os.path.exists(group.database):
            raise ValueError(f"the database cache of {group.name!r} is missing ({group.database}); import again")
        clip_tags = ticked_clip_tags(st, group)
        if pg.engine == "PLANNING":
            from .planning import PlanningInputs, planner_settings, planning_job

            ps = planner_settings(pg)
            out = os.path.join(cache_dir(context), f"{safe_name(group.name)}_{ps.task}_planner.npz")
            return planning_job, {"inputs": PlanningInputs(group.database, clip_tags, ps, out)}
        s = controller_settings(pg)
        s.quality.validate()
        s.policy.validate()
        s.fragments.frames()
        files = []
        if pg.trace_source == "FILES":
            files = [bpy.path.abspath(t.path) for t in pg.traces if t.path]
            if not files:
                raise ValueError("add trace files, or choose generated traces")
            for f in files:  # fail now, with the file's own message, not in the worker
                read_trace(f)
        player = PlayerSettings("panel", pg.player_speed, pg.player_hold, pg.player_reversal, 0.65, 0.12,
                                pg.player_turns, 1.2, 0.3, pg.player_jumps)
        out = os.path.join(cache_dir(context), f"{safe_name(group.name)}_{s.policy.kind}_policy.npz")
        inputs = TrainInputs(group.database, clip_tags, s, files, player, pg.trace_seconds, pg.held_out, out)
        return train_job, {"inputs": inputs}

    def finish(self, context, result) -> None:
        pg = settings(context).controller
        pg.policy_path = result["path"]
        if "groups" in result:  # planning engine
            pg.trained_engine = "PLANNING"
            pg.result_groups, pg.result_samples = result["groups"], result["samples"]
            pg.result_seconds, pg.result_residual = result["seconds"], result["residual"]
            pg.result_success, pg.result_reward = result["success"], result["reward"]
            self.report({"INFO"}, f"{result['task']} planner: {result['groups']} groups, {result['samples']} samples, "
                        f"{result['seconds']:.1f} s")
            return
        pg.trained_engine = "FRAGMENTS"
        pg.result_fragments = result["fragments"]
        pg.result_improvements = result["improvements"]
        pg.result_converged = result["converged"]
        pg.result_seconds = result["seconds"]
        pg.result_percent = result["percent"]
        pg.result_std = result["std"]
        pg.result_warm = result["warm"]
        self.report({"INFO"}, f"trained on {result['fragments']} fragments in {result['seconds']:.1f} s"
                    + (f", {result['percent']:.1f}% of optimal" if np.isfinite(result["percent"]) else ""))


class MOTIONCTL_OT_trace_add(bpy.types.Operator):
    """Add a training trace file (CSV or JSON)"""

    bl_idname = "motionctl.trace_add"
    bl_label = "Add Trace"
    filepath: bpy.props.StringProperty(subtype="FILE_PATH")
    filter_glob: bpy.props.StringProperty(default="*.csv;*.json", options={"HIDDEN"})

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        try:
            read_trace(bpy.path.abspath(self.filepath))
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        t = settings(context).controller.traces.add()
        t.path = self.filepath
        return {"FINISHED"}


class MOTIONCTL_OT_trace_remove(bpy.types.Operator):
    """Remove the selected training trace from the list"""

    bl_idname = "motionctl.trace_remove"
    bl_label = "Remove Trace"

    def execute(self, context):
        pg = settings(context).controller
        if 0 <= pg.trace_index < len(pg.traces):
            pg.traces.remove(pg.trace_index)
            pg.trace_index = max(0, pg.trace_index - 1)
        return {"FINISHED"}


classes = (MOTIONCTL_OT_train_controller, MOTIONCTL_OT_trace_add, MOTIONCTL_OT_trace_remove)
