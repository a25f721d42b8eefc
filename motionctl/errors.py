"""User errors: one base class, so a caller can tell "the input is wrong" from "motionctl has a bug".

``MotionctlError`` is raised for anything the user can fix (a bad file, a setting out of range, a
clip selection that cannot work); its message names the file, line or parameter at fault.  Every
other exception escaping motionctl is a bug.  ``MotionctlError`` derives from ``ValueError`` so
code that catches bad values keeps working, but callers that report errors catch it alone.
"""

from __future__ import annotations

import os


class MotionctlError(ValueError):
    """Input the user can fix: the message says what and where."""


class MotionFileError(MotionctlError):
    """A motion file (BVH, ASF, AMC, trace, cache) that cannot be read as it is."""

    def __init__(self, path, message: str, line: int | None = None):
        self.path = os.fspath(path) if path is not None else "<memory>"
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class SkeletonMismatchError(MotionctlError):
    """A clip whose skeleton differs from the database's; names the first joint that differs."""

    def __init__(self, clip_name: str, joint: str, detail: str):
        self.clip_name = clip_name
        self.joint = joint
        super().__init__(f"clip {clip_name!r} is on another skeleton: joint {joint!r} {detail}")


class Cancelled(RuntimeError):
    """Raised inside a long job when its ``should_stop()`` callback answers True (not an error)."""


__all__ = ["Cancelled", "MotionFileError", "MotionctlError", "SkeletonMismatchError"]
