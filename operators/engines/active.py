"""The Active Learning panel's loop (paper 003): teach a blended controller one example at a time.

Start makes an ``ActiveSession`` from the chosen group's ticked clips (or continues the group's
saved Active Learning model); Suggest lists what the controller does worst, each request shown in
the viewport as a ghost armature in its start pose at the 3D cursor and an arrow where the motion
should end; the animator answers with a clip of the group (imported like any other), rejects
the request, or previews and accepts a pseudoexample; Auto lets the library answer (the oracle).
Every step refits the controller and saves it as the group's Active Learning model, so Drive,
Play Trace and Bake use it at once.  Each call runs as a background job (Esc cancels a Suggest
or an Auto step, and nothing changes); the session itself is plain Python
(``motionctl.engines.active.session``) and lives in memory (``STATE.live``, keyed by the engine and
the clip group it teaches).  This is the engine's own Blender part, loaded by ``operators/__init__``
because an engine of this name is registered.
"""

from __future__ import annotations

import dataclasses

import math

import bpy

from ...motionctl.engines.active import ENGINE, ActiveModel
from ...motionctl.engines.active.learning import blend_clip
from ...motionctl.engines.active.session import ActiveSession
from ...motionctl.errors import MotionctlError
from ..armature import PoseWriter, bake_clip
from ..background import BackgroundJobOperator
from ..cache import cache_path, resolve
from ..common import chosen_group, database_path, load_clips, model_entry, report_error, settings, ticked_clip_tags
from ..controller import engine_settings, keep_model
from ..state import STATE

JOB = "Active Learning"
GHOST = "motionctl ghost"
REQUEST = "motionctl request"
COLLECTION = "motionctl active learning"
PSEUDO_ACTION = "motionctl pseudoexample"


# --------------------------------------------------------------------------- jobs (worker thread)

def saved(session: ActiveSession, out_path: str, result: dict) -> dict:
    """Save the session's controller as the group's model; the panel's figures with ``result``."""
    model = session.model()
    return dict(result, session=session, path=model.save(out_path), summary=model.summary(), picture=model.picture())


def start_job(database: str, clip_tags: dict, settings_obj, model_path: str, out_path: str, progress=None,
              should_stop=None) -> dict:
    """A new session (seeded from the seed clip), or one continuing the model at ``model_path``."""
    clips = load_clips(database, clip_tags)
    model = ActiveModel.load(model_path) if model_path else None
    if model is not None:  # it goes on learning its own task (a model saved before the default changed: Walk)
        settings_obj = dataclasses.replace(settings_obj, task=model.ctrl.task.name)
    if progress:
        progress(0.1, f"cutting {len(clips)} clips into {settings_obj.task} examples")
    if model is not None:
        session = ActiveSession(clips, settings_obj, controller=model.ctrl, log=model.log)
    else:
        session = ActiveSession(clips, settings_obj)
    return saved(session, out_path, {})


def suggest_job(session: ActiveSession, progress=None, should_stop=None) -> dict:
    session.suggest(progress=progress, should_stop=should_stop)
    return {"session": session}


def answer_job(session: ActiveSession, index: int, database: str, clip_name: str, tags: list, mirrored: bool,
               out_path: str, progress=None, should_stop=None) -> dict:
    clip = load_clips(database, {clip_name: tags})[0]
    return saved(session, out_path, {"step": session.answer(index, clip, mirrored)})


def step_job(session: ActiveSession, how: str, index: int, steps: int, out_path: str, progress=None,
             should_stop=None) -> dict:
    """``how``: "reject" or "pseudo" candidate ``index``, or ``steps`` "auto" steps."""
    if how == "reject":  # the controller is unchanged: nothing to save or measure
        return {"session": session, "step": session.reject(index)}
    if how == "pseudo":
        return saved(session, out_path, {"step": session.accept_pseudo(index)})
    entry = None
    for i in range(steps):
        entry = session.auto(should_stop=should_stop)
        if progress:
            progress((i + 1) / steps, f"step {i + 1} of {steps}: {entry.action}")
    return saved(session, out_path, {"step": entry})


# --------------------------------------------------------------------------- the panel's data

def teaching_session(group: str):
    """The panel's session teaching clip group ``group``, or None."""
    return STATE.live.get((ENGINE.name, group))


def teaching_group() -> str:
    """The clip group the panel's session teaches ("" when none)."""
    return next((g for (e, g) in STATE.live if e == ENGINE.name), "")


def session_of(context) -> ActiveSession:
    """The session teaching the chosen group (MotionctlError when there is none)."""
    group = chosen_group(context)
    session = teaching_session(group.name)
    if session is None:
        raise MotionctlError(f"press Start in the Active Learning panel to teach a controller on {group.name!r}")
    return session


def show_session(context, result: dict) -> None:
    """After a step: the group's model entry, the panel's figures (when the controller changed and
    was measured in the job), the lists, the picture and the ghost."""
    st = settings(context)
    session = result["session"]
    group = st.groups.get(teaching_group())
    if group is not None and result.get("path"):
        keep_model(group, ENGINE.name, result)
    a = st.active
    a.task, a.steps = session.task.name, len(session.logs)
    summary = result.get("summary")
    if summary is not None:  # the controller changed (Suggest and Reject leave it as it was)
        a.examples, a.pseudoexamples, a.clusters = summary["examples"], summary["pseudoexamples"], summary["clusters"]
        a.coverage, a.coverage_normalised = summary["coverage"], summary["coverage_normalised"]
        a.pool_coverage = summary["pool_coverage"]
    step = result.get("step")
    if step is not None:
        a.last_step = f"{step.action}: {step.answer} ({step.seconds:.1f} s)"
    a.candidates.clear()
    for cand in session.candidates:
        item = a.candidates.add()
        item.metric, item.score, item.gain = cand.metric, cand.score, 100.0 * cand.gain
        item.text = ", ".join(f"{v:.2f}" for v in cand.u)
        item.has_pseudo = cand.pseudo is not None
        if cand.pseudo is not None:
            p = cand.pseudo
            item.pseudo = (f"{'completes' if p.completes else 'misses'} the task: errors "
                           f"{', '.join(f'{e:.2f}' for e in p.errors)}; skating {p.skating:.2f} "
                           f"(its examples {p.source_skating:.2f})")
    a.examples_list.clear()
    names = session.task.names
    for ci, c in enumerate(session.ctrl.clusters):
        for e in c.examples:
            item = a.examples_list.add()
            item.name, item.cluster = e.clip, ci
            item.text = "  ".join(f"{n} {v:.2f}" for n, v in zip(names, e.features))
        if c.pseudo.any():
            item = a.examples_list.add()
            item.name, item.cluster, item.pseudo = f"{int(c.pseudo.sum())} pseudoexample(s)", ci, True
    a["candidate_index"] = 0
    show_candidate(context)


def _collection(context):
    coll = bpy.data.collections.get(COLLECTION)
    if coll is None:
        coll = bpy.data.collections.new(COLLECTION)
    if coll.name not in context.scene.collection.children:
        context.scene.collection.children.link(coll)
    return coll


def ghost_armature(context):
    """The ghost: a wire copy of the group's armature showing a request's start pose (its own pose
    and action; the armature data is shared)."""
    group = chosen_group(context)
    if group.armature is None:
        raise MotionctlError(f"the clip group {group.name!r} has no armature")
    ob = bpy.data.objects.get(GHOST)
    if ob is not None and ob.data != group.armature.data:
        bpy.data.objects.remove(ob)
        ob = None
    if ob is None:
        ob = group.armature.copy()
        ob.name = GHOST
        ob.animation_data_clear()
        ob.display_type, ob.show_in_front = "WIRE", True
        ob.color = (0.3, 0.75, 1.0, 1.0)
        ob["motionctl_ghost"] = True
        _collection(context).objects.link(ob)
    ob.location = context.scene.cursor.location
    ob.rotation_euler = (0.0, 0.0, 0.0)
    return ob


def request_marker(context):
    ob = bpy.data.objects.get(REQUEST)
    if ob is None:
        ob = bpy.data.objects.new(REQUEST, None)
        ob.empty_display_size = 0.4
        _collection(context).objects.link(ob)
    return ob


def show_candidate(context) -> None:
    """Pose the ghost in the chosen candidate's start pose at the 3D cursor and put the request
    marker where its motion should end (walk: an arrow at the end of the cycle, facing the turn;
    jump: the landing spot).  Nothing to show: both hidden."""
    a = settings(context).active
    session = teaching_session(teaching_group())
    k = a.candidate_index
    cand = session.candidates[k] if session is not None and 0 <= k < len(session.candidates) else None
    ghost, marker = bpy.data.objects.get(GHOST), bpy.data.objects.get(REQUEST)
    if cand is None:
        for ob in (ghost, marker):
            if ob is not None:
                ob.hide_viewport = True
        return
    ghost = ghost_armature(context)
    ghost.animation_data_clear()
    rot, height = cand.pose
    PoseWriter(ghost).write(rot, (0.0, 0.0, height))
    marker = request_marker(context)
    point, heading = session.task.mark(cand.u)
    marker.empty_display_type = "SINGLE_ARROW" if session.task.steers else "PLAIN_AXES"
    marker.location = (ghost.location.x + point[0], ghost.location.y + point[1], ghost.location.z)
    marker.rotation_euler = (-math.pi / 2, 0.0, heading) if session.task.steers else (0.0, 0.0, 0.0)
    marker["motionctl_request"] = cand.describe(session.task)
    ghost.hide_viewport = marker.hide_viewport = False
    context.view_layer.update()


def on_candidate_index(self, context) -> None:
    try:
        show_candidate(context)
    except MotionctlError:
        pass


# --------------------------------------------------------------------------- operators

class ActiveJob(BackgroundJobOperator):
    """A step of the loop as a job on the session; ``finish`` shows the result."""

    job_label = JOB

    def out_path(self, context) -> str:
        return cache_path(context, ENGINE.name, chosen_group(context).name)

    def chosen(self, context) -> int:
        k = settings(context).active.candidate_index
        if not 0 <= k < len(session_of(context).candidates):
            raise MotionctlError("choose a request in the list (press Suggest first)")
        return k

    def finish(self, context, result) -> None:
        show_session(context, result)
        step = result.get("step")
        if step is not None:
            self.report({"INFO"}, f"{step.action}: {step.answer}")


class MOTIONCTL_OT_active_start(ActiveJob, bpy.types.Operator):
    """Start teaching a controller from the seed clip (or continue the group's saved Active Learning model)"""

    bl_idname = "motionctl.active_start"
    bl_label = "Start"
    resume: bpy.props.BoolProperty(name="Continue", default=False, options={"SKIP_SAVE"},
                                   description="Continue the group's saved Active Learning model")

    def prepare(self, context):
        st = settings(context)
        group = chosen_group(context)
        model_path = ""
        if self.resume:
            entry = model_entry(group, ENGINE.name)
            if entry is None or not entry.path:
                raise MotionctlError(f"{group.name!r} has no Active Learning model to continue: press Start")
            model_path = resolve(entry.path)
        self._group = group.name
        return start_job, {"database": database_path(group), "clip_tags": ticked_clip_tags(st, group),
                           "settings_obj": engine_settings(context, ENGINE.name), "model_path": model_path,
                           "out_path": self.out_path(context)}

    def finish(self, context, result) -> None:
        for key in [k for k in STATE.live if k[0] == ENGINE.name]:  # one session at a time
            del STATE.live[key]
        STATE.live[(ENGINE.name, self._group)] = result["session"]
        super().finish(context, result)


class MOTIONCTL_OT_active_suggest(ActiveJob, bpy.types.Operator):
    """Find the requests the controller does worst (in the background; Esc cancels)"""

    bl_idname = "motionctl.active_suggest"
    bl_label = "Suggest"

    def prepare(self, context):
        return suggest_job, {"session": session_of(context)}


class MOTIONCTL_OT_active_answer(ActiveJob, bpy.types.Operator):
    """Answer the chosen request with a clip of the group: its example nearest the requested start joins the controller"""

    bl_idname = "motionctl.active_answer"
    bl_label = "Answer"

    def prepare(self, context):
        st = settings(context)
        session, k = session_of(context), self.chosen(context)
        group = chosen_group(context)
        item = st.clips.get(st.active.answer_clip)
        if item is None:
            raise MotionctlError("choose the clip that answers the request (Answer With)")
        if item.group != group.name:
            raise MotionctlError(f"clip {item.name!r} is on another skeleton ({item.group}) than {group.name!r}")
        tags = [t.strip() for t in item.tags.split(",") if t.strip()]
        return answer_job, {"session": session, "index": k, "database": database_path(group), "clip_name": item.name,
                            "tags": tags, "mirrored": st.active.mirrored, "out_path": self.out_path(context)}


class MOTIONCTL_OT_active_reject(ActiveJob, bpy.types.Operator):
    """The chosen request cannot be captured: it and requests near it are not asked again"""

    bl_idname = "motionctl.active_reject"
    bl_label = "Reject"

    def prepare(self, context):
        return step_job, {"session": session_of(context), "how": "reject", "index": self.chosen(context), "steps": 0,
                          "out_path": ""}


class MOTIONCTL_OT_active_accept_pseudo(ActiveJob, bpy.types.Operator):
    """Accept the chosen request's pseudoexample (a blend of existing examples) into the controller"""

    bl_idname = "motionctl.active_accept_pseudo"
    bl_label = "Accept Pseudoexample"

    def prepare(self, context):
        return step_job, {"session": session_of(context), "how": "pseudo", "index": self.chosen(context), "steps": 0,
                          "out_path": self.out_path(context)}


class MOTIONCTL_OT_active_auto(ActiveJob, bpy.types.Operator):
    """Let the library answer: the oracle takes the first request one of the ticked clips can do (Esc cancels)"""

    bl_idname = "motionctl.active_auto"
    bl_label = "Auto"

    def prepare(self, context):
        return step_job, {"session": session_of(context), "how": "auto", "index": -1,
                          "steps": settings(context).active.auto_steps, "out_path": self.out_path(context)}


class MOTIONCTL_OT_active_preview_pseudo(bpy.types.Operator):
    """Play the chosen request's pseudoexample on the ghost armature (baked to an action)"""

    bl_idname = "motionctl.active_preview_pseudo"
    bl_label = "Preview Pseudoexample"

    def execute(self, context):
        try:
            running = STATE.jobs.get(JOB)
            if running is not None and not running.done:
                raise MotionctlError(f"{JOB} is busy; wait for the step to finish")
            session = session_of(context)
            k = settings(context).active.candidate_index
            if not 0 <= k < len(session.candidates) or session.candidates[k].pseudo is None:
                raise MotionctlError("the chosen request has no pseudoexample")
            p = session.candidates[k].pseudo
            clip = blend_clip(session.ctrl, p.cluster, p.w, name=PSEUDO_ACTION)
            ghost = ghost_armature(context)
            old = bpy.data.actions.get(PSEUDO_ACTION)
            if old is not None:
                bpy.data.actions.remove(old)
            scene = context.scene
            act = bake_clip(ghost, clip, PSEUDO_ACTION, frame_start=scene.frame_start,
                            scene_fps=scene.render.fps / scene.render.fps_base)
            act.use_fake_user = False
            ghost.hide_viewport = False
            scene.frame_end = int(act.frame_range[1])
            scene.frame_set(scene.frame_start)
            if context.screen is not None and not context.screen.is_animation_playing:
                bpy.ops.screen.animation_play()
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Preview")
        return {"FINISHED"}


classes = (MOTIONCTL_OT_active_start, MOTIONCTL_OT_active_suggest, MOTIONCTL_OT_active_answer,
           MOTIONCTL_OT_active_reject, MOTIONCTL_OT_active_accept_pseudo, MOTIONCTL_OT_active_auto,
           MOTIONCTL_OT_active_preview_pseudo)
