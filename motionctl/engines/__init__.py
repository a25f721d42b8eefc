"""Every controller motionctl can train, behind one interface (``base``; DESIGN.md 3.0).

``ENGINES`` maps an engine's name to its registry line (``base.Engine``): label, description,
``Settings``, ``fit`` and ``Model``.  A new engine is one folder here plus one line below.
``load_model`` opens any saved model, whichever engine wrote it.
"""

from __future__ import annotations

import os

from ..errors import MotionFileError
from ..store import archive_format, check_writable, npz_path
from .active import ENGINE as ACTIVE
from .base import Engine, Model
from .field import ENGINE as FIELD
from .fragments import ENGINE as FRAGMENTS
from .graph import ENGINE as GRAPH
from .matching import ENGINE as MATCHING
from .planning import ENGINE as PLANNING

ENGINES: dict[str, Engine] = {e.name: e for e in (FRAGMENTS, PLANNING, GRAPH, FIELD, ACTIVE, MATCHING)}


def engine_of(path) -> Engine:
    """The engine that wrote a model file (from its archive header)."""
    fmt = archive_format(path, "model")
    name = fmt.removeprefix("motionctl.").split("/")[0]
    if name not in ENGINES:
        raise MotionFileError(os.fspath(path), f"not a motionctl model (format {fmt!r})")
    return ENGINES[name]


def load_model(path) -> Model:
    """Any engine's saved model."""
    return engine_of(path).Model.load(path)


def train_to_file(engine: str, library, settings, path, *, progress=None, should_stop=None, cache=None, check=None):
    """Fit ``engine`` and save the model to ``path`` only once training has finished: a cancelled
    or failed job writes nothing, and an earlier file there stays intact.  ``check(model, library)``,
    if given, adds figures to the model's summary before it is saved (the panel and the command line
    pass ``evaluate.looks.model_looks``).  A folder that cannot take the file fails before training
    (``store.check_writable``).  Returns (model, path)."""
    check_writable(npz_path(path))
    model = ENGINES[engine].fit(library, settings, progress=progress, should_stop=should_stop, cache=cache)
    if check is not None:
        model.info.update(check(model, library))
    return model, model.save(path)


__all__ = ["ENGINES", "Engine", "Model", "engine_of", "load_model", "train_to_file"]
