"""Cache files that belong to one .blend: named per file and data-block, beside the file, found again.

Large arrays (group databases, trained models, evaluations, the last run, recorded traces) live
in ``.npz``/``.csv`` files.  Each file's caches are named ``<id>_<kind>_<data-block>`` where
``id`` is a random stable id stored on the scene, so two .blend files in one folder, or two
unsaved sessions, never share a cache.  Unsaved, they live in ``<temp>/motionctl_cache/<id>/``;
saved, in ``//motionctl_cache/`` beside the .blend, referenced by relative paths.  Saving to a
new place (Save As, Save Copy) gives the new file its own id and copies its caches beside it
(a Save As of an unsaved file then removes the temp ones), so the file that stays behind keeps
its own; opening a .blend that
was copied outside Blender does the same.  Scene properties that hold cache paths are listed in
``CACHE_PROPERTIES``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid

import bpy
from bpy.app.handlers import persistent

from .state import STATE

FOLDER = "motionctl_cache"
KEEP_DAYS = 14  # an unsaved session's temp caches untouched this long are removed at start-up


def settings_of(scene):
    return scene.motionctl


def file_id(st) -> str:
    """The scene's stable cache id (made on first use)."""
    if not st.file_id:
        st.file_id = uuid.uuid4().hex[:10]
    return st.file_id


def cache_dir(context=None, create: bool = True) -> str:
    """Where this file's caches live now: beside the saved .blend, else in a temp folder of its own."""
    scene = (context or bpy.context).scene
    if bpy.data.filepath:
        path = os.path.join(os.path.dirname(bpy.data.filepath), FOLDER)
    else:
        path = os.path.join(tempfile.gettempdir(), FOLDER, file_id(settings_of(scene)))
    if create:
        os.makedirs(path, exist_ok=True)
    return path


def safe_name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:60] or "motionctl"


def cache_path(context, kind: str, name: str = "", ext: str = ".npz") -> str:
    """Absolute path of this file's cache ``kind`` for data-block ``name``."""
    st = settings_of(context.scene)
    parts = [file_id(st), kind] + ([safe_name(name)] if name else [])
    return os.path.join(cache_dir(context), "_".join(parts) + ext)


def stored(path: str) -> str:
    """How a cache path is kept on the scene: relative ("//motionctl_cache/...") once saved."""
    if not path:
        return ""
    if bpy.data.filepath:
        try:
            return bpy.path.relpath(path)
        except ValueError:  # another drive
            return path
    return path


def resolve(path: str) -> str:
    """The absolute path of a stored cache path."""
    return bpy.path.abspath(path) if path else ""


# Scene properties holding cache paths: (collection path on st or "", attribute).
def cache_properties(st) -> list:
    """Every (owner, attribute) on the scene settings that holds a cache path."""
    out = [(st, "last_run"), (st.preview, "run_commands"), (st.evaluate, "result_path"), (st.evaluate, "map_path")]
    for g in st.groups:
        out.append((g, "database"))
        out += [(m, "path") for m in g.models]
    out += [(t, "path") for t in st.traces]
    return out


def relocate(st, old_dir: str, new_dir: str, new_id: str, move: bool) -> dict:
    """Copy (or move) every cache file of ``st`` that lives in ``old_dir`` to ``new_dir``, renamed
    to ``new_id``; the properties point at the new files (relative to ``new_dir``'s .blend).
    Returns {(owner, attribute): old stored value}, to undo a Save Copy."""
    os.makedirs(new_dir, exist_ok=True)
    old_id = st.file_id
    undo = {}
    for owner, attr in cache_properties(st):
        value = getattr(owner, attr)
        src = resolve(value)
        if not value or not os.path.isfile(src):
            continue
        if os.path.normpath(os.path.dirname(src)) != os.path.normpath(old_dir):
            continue  # the user's own file (a trace kept elsewhere): left where it is
        name = os.path.basename(src)
        if old_id and name.startswith(old_id + "_"):
            name = new_id + name[len(old_id):]
        dst = os.path.join(new_dir, name)
        if os.path.normpath(src) != os.path.normpath(dst):
            (shutil.move if move else shutil.copy2)(src, dst)
        undo[(owner, attr)] = value
        setattr(owner, attr, "//" + os.path.join(FOLDER, name).replace(os.sep, "/"))
    return undo


_PENDING: dict = {}  # what save_pre changed, undone by save_post for a Save Copy


@persistent
def on_save_pre(filepath, *_):
    """Saving to a place other than the file's own: give the new file its own id and caches."""
    target = os.path.abspath(filepath)
    _PENDING.clear()
    for scene in bpy.data.scenes:
        st = settings_of(scene)
        if not st.file_id and not any(True for _ in st.groups):
            continue
        if st.owner and os.path.abspath(bpy.path.abspath(st.owner)) == target:
            continue  # an ordinary save: the caches are already beside it
        old_dir = (os.path.join(os.path.dirname(bpy.data.filepath), FOLDER) if bpy.data.filepath else
                   os.path.join(tempfile.gettempdir(), FOLDER, file_id(st)))
        new_dir = os.path.join(os.path.dirname(target), FOLDER)
        new_id = uuid.uuid4().hex[:10]
        # Copied, not moved, even from the temp folder: a Save Copy keeps working on the old files
        # (save_post removes the temp ones after a Save As).
        undo = relocate(st, old_dir, new_dir, new_id, move=False)
        _PENDING[scene.name] = (st.file_id, st.owner, undo, bool(bpy.data.filepath))
        st.file_id = new_id
        st.owner = target


@persistent
def on_save_post(filepath, *_):
    """After a Save Copy the open file is still the old one: give it back its own caches."""
    if os.path.abspath(bpy.data.filepath) == os.path.abspath(filepath):
        for old_id, _, undo, was_saved in _PENDING.values():  # a Save As of an unsaved file: its temp
            if not was_saved:                                 # caches now live beside the .blend
                for value in undo.values():
                    if os.path.isfile(value) and os.path.dirname(os.path.dirname(value)) == \
                            os.path.join(tempfile.gettempdir(), FOLDER):
                        os.remove(value)
        _PENDING.clear()
        return
    for scene in bpy.data.scenes:
        if scene.name not in _PENDING:
            continue
        old_id, old_owner, undo, _ = _PENDING[scene.name]
        st = settings_of(scene)
        st.file_id, st.owner = old_id, old_owner
        for (owner, attr), value in undo.items():
            setattr(owner, attr, value)
    _PENDING.clear()


@persistent
def on_load_pre(*_):
    STATE.clear()


@persistent
def on_load_post(*_):
    """A .blend copied outside Blender shares its original's id: give it its own caches."""
    STATE.clear()
    if not bpy.data.filepath:
        return
    here = os.path.abspath(bpy.data.filepath)
    for scene in bpy.data.scenes:
        st = settings_of(scene)
        if not st.owner or os.path.abspath(bpy.path.abspath(st.owner)) == here:
            continue
        folder = os.path.join(os.path.dirname(here), FOLDER)
        new_id = uuid.uuid4().hex[:10]
        relocate(st, folder, folder, new_id, move=False)
        st.file_id, st.owner = new_id, here


HANDLERS = (("save_pre", on_save_pre), ("save_post", on_save_post), ("load_pre", on_load_pre),
            ("load_post", on_load_post))


def prune_temp(keep_days: float = KEEP_DAYS, now: float | None = None) -> list:
    """Remove unsaved sessions' temp cache folders (``<temp>/motionctl_cache/<id>``) whose newest
    file is older than ``keep_days``: a session never saved leaves its caches behind, and they
    would otherwise pile up for good.  A recent one (a crash, Blender's quit.blend recovery) keeps
    them.  Returns the folders removed."""
    root = os.path.join(tempfile.gettempdir(), FOLDER)
    if not os.path.isdir(root):
        return []
    limit = (time.time() if now is None else now) - keep_days * 86400.0
    removed = []
    for entry in os.scandir(root):
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            newest = max([entry.stat().st_mtime] + [f.stat().st_mtime for f in os.scandir(entry.path)])
        except OSError:
            continue
        if newest < limit:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def register() -> None:
    try:
        prune_temp()
    except OSError:  # a temp folder we may not list: nothing of ours to prune
        pass
    for name, fn in HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if fn not in handlers:
            handlers.append(fn)


def unregister() -> None:
    for name, fn in HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        while fn in handlers:
            handlers.remove(fn)
    STATE.clear()
