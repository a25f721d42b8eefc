"""What a saved model's arrays must be, declared once per engine (``Model.schema``) and checked when
a model file is loaded, before any engine code reads it (issue 37: a hand-edited, damaged or
other-version file failed later, while driving, or played NaN).

A schema maps array names to ``Array`` specs.  A name may hold ``#`` for a number ("g#_dx": one
array per group); a spec's ``high`` may name another array whose length bounds an index ("len:clip",
with ``#`` standing for the same number).  Every array in the file must match a spec, and every
spec without ``#`` that is not ``optional`` must be there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import MotionFileError

KINDS = {"f": "floats", "i": "integers", "b": "booleans"}


@dataclass(frozen=True)
class Array:
    """One array: its kind ("f" floats, "i" integers, "b" booleans), its number of axes (None: any),
    whether floats must be finite (``finite=False``: ±inf allowed, never NaN), the least and
    (exclusive) greatest value of integers (``high``: a number or "len:<array>"), whether each
    integer is -1 or past its own position (``forward``: a flattened tree's children, so a walk
    down it ends), the trailing axes' sizes it must have (``tail``), an array whose shape it must
    share (``like``), and whether it may be absent."""

    kind: str
    ndim: int | None
    finite: bool = True
    forward: bool = False
    low: float | None = None
    high: int | str | None = None
    tail: tuple = ()
    like: str | None = None
    optional: bool = False


def _pattern(name: str):
    return re.compile("^" + re.escape(name).replace("\\#", "([0-9]+)") + "$")


def spec_of(schema: dict, name: str) -> tuple[str, Array] | None:
    """(the schema's key, its spec) for array ``name``, or None when the schema has none."""
    for key, spec in schema.items():
        if _pattern(key).match(name):
            return key, spec
    return None


def check_arrays(path, schema: dict, arrays) -> None:
    """MotionFileError naming ``path`` and the array unless every array of the open archive
    ``arrays`` (a mapping or NpzFile) matches ``schema``."""
    names = [n for n in (arrays.files if hasattr(arrays, "files") else arrays.keys()) if n != "meta"]  # the header
    patterns = [(key, _pattern(key)) for key in schema]
    loaded = {}

    def get(name):
        if name not in loaded:
            loaded[name] = np.asarray(arrays[name])
        return loaded[name]

    matched = []
    for name in names:
        match = next(((key, m) for key, p in patterns if (m := p.match(name))), None)
        if match is None:
            raise MotionFileError(path, f"array {name!r} is not one this engine saves (another version's file?)")
        key, m = match
        number = m.group(1) if m.groups() else None
        matched.append((name, schema[key], lambda ref, number=number: ref.replace("#", number) if number else ref))
    for name, spec, _ in matched:  # each array by itself first, then against the arrays it refers to
        _check_own(path, name, get(name), spec)
    for name, spec, named in matched:
        _check_against(path, name, get(name), spec, named, get, names)
    for key, spec in schema.items():
        if "#" not in key and not spec.optional and key not in names:
            raise MotionFileError(path, f"array {key!r} is missing")


def _fail(path, name, problem):
    raise MotionFileError(path, f"array {name!r} {problem}")


def _check_own(path, name, a, spec: Array) -> None:
    def fail(problem):
        _fail(path, name, problem)

    if a.dtype.kind not in (spec.kind, "u" if spec.kind == "i" else spec.kind):
        fail(f"holds {a.dtype} where {KINDS[spec.kind]} belong")
    if spec.ndim is not None and a.ndim != spec.ndim:
        fail(f"has {a.ndim} axes where {spec.ndim} belong")
    if spec.tail and tuple(a.shape[a.ndim - len(spec.tail):]) != tuple(spec.tail):
        fail(f"has shape {a.shape}, its last axes must be {spec.tail}")
    if spec.kind == "f" and a.size:
        if np.isnan(a).any():
            fail("holds NaN")
        if spec.finite and not np.isfinite(a).all():
            fail("holds an infinite value")
    if spec.kind == "i" and a.size:
        if spec.low is not None and a.min() < spec.low:
            fail(f"holds {int(a.min())}, below {spec.low}")
        if isinstance(spec.high, int) and a.max() >= spec.high:
            fail(f"holds {int(a.max())}, out of range (under {spec.high})")
        if spec.forward and np.any((a != -1) & (a <= np.arange(a.size).reshape(a.shape))):
            fail("points back to an earlier node (a walk down the tree would never end)")


def _check_against(path, name, a, spec: Array, named, get, names) -> None:
    def fail(problem):
        _fail(path, name, problem)

    if spec.like is not None:
        other = named(spec.like)
        if other in names and get(other).shape != a.shape:
            fail(f"has shape {a.shape}, unlike {other!r} {get(other).shape}")
    if spec.kind == "i" and a.size and isinstance(spec.high, str):
        other = named(spec.high.removeprefix("len:"))
        if other not in names:
            raise MotionFileError(path, f"array {other!r} is missing")
        if a.max() >= len(get(other)):
            fail(f"holds {int(a.max())}, out of range (under {len(get(other))}, the length of {other!r})")


__all__ = ["Array", "check_arrays", "spec_of"]
