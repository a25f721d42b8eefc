"""One way to run any long core job from Blender (Blender's operator_modal_timer.py pattern).

A job is a core function ``fn(progress=..., should_stop=..., **inputs)``.  ``prepare`` (main
thread) turns Blender data into plain inputs; the worker thread runs the function and never
touches bpy; a 0.1 s timer drains its queue on the main thread, updates the progress shown in
the panel and the status bar, and finally calls ``finish`` (main thread) to write bpy data.  Esc
or the Cancel button sets the stop event: the core checks it between chunks, raises Cancelled,
and nothing is written, so the previous result stays intact.  With no UI (``bpy.app.background``,
tests, the command line) the same operator runs the job synchronously in ``execute``.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback

import bpy

from ..motionctl.errors import Cancelled, MotionFileError

_ACTIVE: dict = {}  # job label -> Job, so the Cancel button can reach a running job


class Job:
    """A core function running in a worker thread, reporting through a queue."""

    def __init__(self, label: str, fn, inputs: dict):
        self.label = label
        self.fn = fn
        self.inputs = inputs
        self.stop = threading.Event()
        self.events: queue.Queue = queue.Queue()
        self.thread: threading.Thread | None = None
        self.result = None
        self.error: BaseException | None = None
        self.cancelled = False
        self.done = False
        self.t0 = time.perf_counter()

    def _progress(self, fraction: float, message: str) -> None:
        self.events.put(("progress", float(fraction), str(message)))

    def run(self) -> None:
        """Run to the end in the calling thread (worker thread, or synchronously)."""
        try:
            self.result = self.fn(progress=self._progress, should_stop=self.stop.is_set, **self.inputs)
        except Cancelled:
            self.cancelled = True
        except BaseException as exc:  # reported to the user, never raised into Blender's loop
            self.error = exc
            self.trace = traceback.format_exc()
        finally:
            self.done = True
            self.events.put(("done", 1.0, ""))

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name=f"motionctl-{self.label}", daemon=True)
        self.thread.start()

    def cancel(self) -> None:
        self.stop.set()

    def drain(self) -> tuple[float, str] | None:
        """Latest (fraction, message) reported since the last call, or None."""
        latest = None
        while True:
            try:
                kind, fraction, message = self.events.get_nowait()
            except queue.Empty:
                return latest
            if kind == "progress":
                latest = (fraction, message)

    def seconds(self) -> float:
        return time.perf_counter() - self.t0


def error_message(exc: BaseException) -> str:
    """What the user reads: the core's own message for bad input, else the exception type too."""
    if isinstance(exc, (MotionFileError, ValueError, FileNotFoundError, KeyError)):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def show_progress(context, fraction: float, message: str, running: bool = True) -> None:
    st = context.scene.motionctl
    st.job_progress = max(0.0, min(1.0, fraction))
    st.job_message = message
    st.job_running = running
    ws = getattr(context, "workspace", None)
    if ws is not None:
        ws.status_text_set(f"motionctl: {message} ({100 * fraction:.0f}%)  Esc to cancel" if running else None)
    for area in getattr(context.screen, "areas", []) if getattr(context, "screen", None) else []:
        if area.type in {"VIEW_3D", "STATUSBAR"}:
            area.tag_redraw()


class BackgroundJobOperator:
    """Mixin for operators that run a core job.  Subclasses define:

    job_label                 shown in the UI ("Train", "Build graph"...)
    prepare(context) -> (fn, inputs)   main thread: read Blender data into plain inputs;
                              raise ValueError with a clear message for bad input
    finish(context, result)   main thread: write the result into Blender data
    """

    job_label = "Job"
    _timer = None
    _job: Job | None = None

    def prepare(self, context):
        raise NotImplementedError

    def finish(self, context, result) -> None:
        raise NotImplementedError

    # --- shared machinery

    def _make_job(self, context):
        try:
            fn, inputs = self.prepare(context)
        except (ValueError, MotionFileError, FileNotFoundError) as exc:
            self.report({"ERROR"}, error_message(exc))
            return None
        if _ACTIVE.get(self.job_label) is not None and not _ACTIVE[self.job_label].done:
            self.report({"ERROR"}, f"{self.job_label} is already running; cancel it first")
            return None
        return Job(self.job_label, fn, inputs)

    def _conclude(self, context, job: Job) -> set:
        _ACTIVE.pop(self.job_label, None)
        if job.cancelled:
            show_progress(context, 0.0, f"{self.job_label} cancelled; previous result kept", running=False)
            self.report({"WARNING"}, f"{self.job_label} cancelled; previous result kept")
            return {"CANCELLED"}
        if job.error is not None:
            show_progress(context, 0.0, f"{self.job_label} failed", running=False)
            self.report({"ERROR"}, error_message(job.error))
            return {"CANCELLED"}
        try:
            self.finish(context, job.result)
        except (ValueError, MotionFileError) as exc:
            show_progress(context, 0.0, f"{self.job_label} failed", running=False)
            self.report({"ERROR"}, error_message(exc))
            return {"CANCELLED"}
        show_progress(context, 1.0, f"{self.job_label} finished in {job.seconds():.1f} s", running=False)
        return {"FINISHED"}

    def execute(self, context):
        """Synchronous path: no UI (background mode, tests, command line)."""
        job = self._make_job(context)
        if job is None:
            return {"CANCELLED"}
        _ACTIVE[self.job_label] = job
        job.run()
        last = job.drain()
        if last is not None:
            show_progress(context, last[0], last[1], running=False)
        return self._conclude(context, job)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        job = self._make_job(context)
        if job is None:
            return {"CANCELLED"}
        self._job = job
        _ACTIVE[self.job_label] = job
        show_progress(context, 0.0, f"{self.job_label} starting", running=True)
        job.start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        job = self._job
        if event.type == "ESC" and event.value == "PRESS":
            job.cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        latest = job.drain()
        if latest is not None:
            show_progress(context, latest[0], latest[1], running=True)
        if not job.done:
            return {"PASS_THROUGH"}
        context.window_manager.event_timer_remove(self._timer)
        if job.thread is not None:
            job.thread.join(timeout=1.0)
        return self._conclude(context, job)


def cancel_all() -> int:
    """Ask every running job to stop; returns how many were running."""
    running = [j for j in _ACTIVE.values() if j is not None and not j.done]
    for j in running:
        j.cancel()
    return len(running)


class MOTIONCTL_OT_cancel_job(bpy.types.Operator):
    """Stop the running motionctl job (the previous result is kept)"""

    bl_idname = "motionctl.cancel_job"
    bl_label = "Cancel"

    def execute(self, context):
        n = cancel_all()
        self.report({"INFO"}, "cancelling" if n else "no job is running")
        return {"FINISHED"}


classes = (MOTIONCTL_OT_cancel_job,)
