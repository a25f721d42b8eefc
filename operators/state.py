"""Per-file state that only lives in memory, in one place.

Everything a .blend needs after it is reopened is on the scene (settings, results) or in its
cache files; what lives here is only what makes the session quicker or what Blender cannot
store: the engines' training caches (fragments and warm-start values), the last evaluation's
embedding, the last driven or played run, an engine panel's live session (the controller Active Learning
teaches), the running jobs and the viewport overlays.  It is
cleared when another file is opened, when a new file starts and when the extension is
unregistered (``clear``), so nothing leaks from one file into another.
"""

from __future__ import annotations


class FileState:
    """What this Blender session holds in memory for the open file."""

    def __init__(self):
        self.fit_cache: dict = {}  # engine name -> the dict its fit() reuses (fragments, values)
        self.evaluation: dict | None = None  # the last evaluation's result (maps and metrics)
        self.embedding = None  # the last evaluation's embedding (rebuilt from its cache when needed)
        self.last_run = None  # the last driven or played Clip
        self.live: dict = {}  # (engine, clip group) -> an engine panel's live session (Active Learning's)
        self.jobs: dict = {}  # job label -> running Job
        self.overlays: dict = {}  # name -> draw handler of a viewport overlay
        self.batches: dict = {}  # name -> GPU batch an overlay draws

    def clear(self) -> None:
        """Forget everything: cancel running jobs (their results are dropped), remove overlays."""
        for job in list(self.jobs.values()):
            job.cancel()
            job.orphaned = True
        remove_overlays(self)
        self.__init__()


def remove_overlays(state: FileState) -> None:
    if not state.overlays:
        return
    import bpy

    for handle in state.overlays.values():
        try:
            bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")
        except (ValueError, RuntimeError):  # already gone with its window
            pass
    state.overlays.clear()
    state.batches.clear()


STATE = FileState()
