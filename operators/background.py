"""One way to run any long core job from Blender (Blender's operator_modal_timer.py pattern).

A job is a core function ``fn(progress=..., should_stop=..., **inputs)``.  ``prepare`` (main
thread) turns Blender data into plain inputs; the worker thread runs the function and never
touches bpy; a 0.1 s timer drains its queue on the main thread, shows progress in the panel and
the status bar, and finally calls ``finish`` (main thread) to write bpy data.  ``finish`` may be
a generator: each ``yield (fraction, message)`` hands control back to Blender for a tick, so
building many data-blocks does not freeze the UI, and Esc then undoes what was built
(``abort``).  Esc or the Cancel button sets the stop event: the core checks it between chunks,
raises Cancelled, and nothing is written, so the previous result stays intact.  With no UI
(``bpy.app.background``, tests, scripts) the same operator runs the job synchronously.
"""

from __future__ import annotations

import queue
import threading
import time
import types

import bpy

from ..motionctl.jobs import Eta
from ..motionctl.errors import Cancelled, MotionctlError
from .common import report_error
from .state import STATE


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
        self.orphaned = False  # its file was closed: the result is dropped
        self.done = False
        self.t0 = time.perf_counter()
        self.eta = Eta(self.t0)
        self.latest = (0.0, "starting")
        self.shown = 0.0  # when the panel last showed it

    def _progress(self, fraction: float, message: str) -> None:
        self.events.put(("progress", float(fraction), str(message), time.perf_counter()))  # when: the pace

    def run(self) -> None:
        """Run to the end in the calling thread (worker thread, or synchronously)."""
        try:
            self.result = self.fn(progress=self._progress, should_stop=self.stop.is_set, **self.inputs)
        except Cancelled:
            self.cancelled = True
        except BaseException as exc:  # reported on the main thread, never raised into Blender's loop
            self.error = exc
        finally:
            self.done = True
            self.events.put(("done", 1.0, "", time.perf_counter()))

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
                kind, fraction, message, when = self.events.get_nowait()
            except queue.Empty:
                return latest
            if kind == "progress":
                latest = self.latest = (fraction, message)
                self.eta.update(fraction, when)

    def seconds(self) -> float:
        return time.perf_counter() - self.t0

    def status(self) -> str:
        """The latest step with the time elapsed and left ("training... (0:42 elapsed, about 1:10 left)", or
        "time left unknown" while ``Eta`` cannot tell)."""
        return f"{self.latest[1]} ({self.eta.text()})"


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


def interactive(context) -> bool:
    """True when a window can show progress (not background mode, not a script without a window)."""
    return not bpy.app.background and getattr(context, "window", None) is not None


class BackgroundJobOperator:
    """Mixin for operators that run a core job.  Subclasses define:

    job_label                 shown in the UI ("Train", "Import"...)
    prepare(context) -> (fn, inputs)   main thread: read Blender data into plain inputs; raise
                              MotionctlError with a clear message for bad input
    finish(context, result)   main thread: write the result into Blender data (may be a generator)
    abort(context)            main thread: undo a finish generator stopped half-way (optional)
    """

    job_label = "Job"
    cancel_note = "nothing was added"  # what Esc during ``finish`` leaves (after ``abort``)
    _timer = None
    _job: Job | None = None
    _steps = None

    def prepare(self, context):
        raise NotImplementedError

    def finish(self, context, result):
        raise NotImplementedError

    def abort(self, context) -> None:
        pass

    # --- shared machinery

    def _make_job(self, context):
        running = STATE.jobs.get(self.job_label)
        if running is not None and not running.done:
            raise MotionctlError(f"{self.job_label} is already running; cancel it first")
        fn, inputs = self.prepare(context)
        return Job(self.job_label, fn, inputs)

    def _fail(self, context, exc) -> set:
        show_progress(context, 0.0, f"{self.job_label} failed", running=False)
        return report_error(self, context, exc, self.job_label)

    def _concluded(self, context, job: Job):
        """After the worker: (status, finish generator or None)."""
        STATE.jobs.pop(self.job_label, None)
        if job.orphaned:
            return {"CANCELLED"}, None
        if job.cancelled:
            show_progress(context, 0.0, f"{self.job_label} cancelled; previous result kept", running=False)
            self.report({"WARNING"}, f"{self.job_label} cancelled; previous result kept")
            return {"CANCELLED"}, None
        if job.error is not None:
            return self._fail(context, job.error), None
        try:
            out = self.finish(context, job.result)
        except Exception as exc:  # noqa: BLE001 - reported, with a traceback when it is a bug
            self.abort(context)
            return self._fail(context, exc), None
        if isinstance(out, types.GeneratorType):
            return None, out
        show_progress(context, 1.0, f"{self.job_label} finished in {job.seconds():.1f} s", running=False)
        return {"FINISHED"}, None

    def _advance(self, context, steps, budget: float) -> set | None:
        """Run a finish generator for about ``budget`` seconds; a status when it is done."""
        t = time.perf_counter()
        try:
            while budget is None or time.perf_counter() - t < budget:
                fraction, message = next(steps)
                show_progress(context, fraction, message, running=True)
        except StopIteration:
            show_progress(context, 1.0, f"{self.job_label} finished in {self._job.seconds():.1f} s", running=False)
            return {"FINISHED"}
        except Exception as exc:  # noqa: BLE001
            self.abort(context)
            return self._fail(context, exc)
        return None

    def execute(self, context):
        """With a window: run in the background (the modal timer below); else synchronously."""
        try:
            job = self._make_job(context)
        except Exception as exc:  # noqa: BLE001 - bad input, or a bug in prepare
            return report_error(self, context, exc, self.job_label)
        self._job = job
        STATE.jobs[self.job_label] = job
        if interactive(context):
            show_progress(context, 0.0, f"{self.job_label} starting", running=True)
            job.start()
            wm = context.window_manager
            self._timer = wm.event_timer_add(0.1, window=context.window)
            wm.modal_handler_add(self)
            return {"RUNNING_MODAL"}
        job.run()
        last = job.drain()
        if last is not None:
            show_progress(context, last[0], last[1], running=False)
        status, steps = self._concluded(context, job)
        if steps is not None:
            status = self._advance(context, steps, None)
        return status

    def invoke(self, context, event):
        return self.execute(context)

    def modal(self, context, event):
        job = self._job
        cancel = event.type == "ESC" and event.value == "PRESS"
        if self._steps is not None:  # the finish step, a little every tick
            if cancel or job.stop.is_set():
                self._steps.close()
                self.abort(context)
                return self._end(context, {"CANCELLED"}, f"{self.job_label} cancelled; {self.cancel_note}")
            if event.type != "TIMER":
                return {"RUNNING_MODAL"}
            status = self._advance(context, self._steps, 0.05)
            return {"RUNNING_MODAL"} if status is None else self._end(context, status)
        if cancel:
            job.cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        latest = job.drain()
        now = time.perf_counter()
        if latest is not None or now - job.shown >= 1.0:  # the clock moves even while a step is long
            job.shown = now
            show_progress(context, job.latest[0], job.status(), running=True)
        if not job.done:
            return {"PASS_THROUGH"}
        if job.thread is not None:
            job.thread.join(timeout=1.0)
        status, steps = self._concluded(context, job)
        if steps is None:
            return self._end(context, status)
        self._steps = steps
        return {"RUNNING_MODAL"}

    def _end(self, context, status, message: str | None = None):
        if self._timer is not None:
            context.window_manager.event_timer_remove(self._timer)
            self._timer = None
        if message:
            show_progress(context, 0.0, message, running=False)
            self.report({"WARNING"}, message)
        return status

    def cancel(self, context):
        """Blender closed the operator (a file was loaded): stop the worker and drop its result."""
        if self._job is not None:
            self._job.cancel()
            self._job.orphaned = True
        if self._timer is not None:
            try:
                context.window_manager.event_timer_remove(self._timer)
            except (ReferenceError, RuntimeError):
                pass
            self._timer = None


def cancel_all() -> int:
    """Ask every running job to stop; returns how many were running."""
    running = [j for j in STATE.jobs.values() if j is not None and not j.done]
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
