"""What a saved model's arrays and JSON header must be, declared once (``Model.schema`` for the
arrays, ``Model.header`` for the engine's part of the header, ``base.HEADER`` for the common part)
and checked as a whole when a model file is loaded, before any engine code reads it (issues 37 and
57: a hand-edited, damaged or other-version file failed later, while driving, or played NaN; a
header's ``summary.top_speed`` of ``"x"``, a ``gamma`` of null or an ``n_frames`` of 10^12 met the
code that used them, each with its own traceback).

A header shape is built of ``Num`` (a JSON number, whole or not, in a range), ``Text`` (a string,
from a list of choices or not), ``Flag`` (true or false), ``Items`` (a list of one shape), ``Row``
(a list of so many shapes, a pair), ``Table`` (an object: its known keys' shapes, and what any other
key may hold), ``Cases`` (an object whose shape its own key chooses: a planning task's parameters)
and ``Plain`` (any JSON: figures only shown).  ``check_header`` names the first value that does not
fit by its place in the header ("model.task_params.gamma", "summary.sources[2]").

A schema maps array names to ``Array`` specs.  A name may hold ``#`` for a number ("g#_dx": one
array per group); a spec's ``high`` may name another array whose length bounds an index ("len:clip",
with ``#`` standing for the same number).  Every array in the file must match a spec, and every
spec without ``#`` that is not ``optional`` must be there.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ..errors import MotionFileError

KINDS = {"f": "floats", "i": "integers", "b": "booleans"}
# The largest finite float any model array may hold.  What a model saves is metres, radians, seconds,
# weights, costs and values, all under a few thousand on any library (the largest in the fuzz's seed
# models: 456, a field's values); the largest a setting can make is matching's scale for a feature
# weighted near 0 (its spread over the weight floor, 1e-9: about 1e10).  1e300 passed the finite
# check, then overflowed in play (its square is inf) and reached scipy as "array must not contain
# infs or NaNs"; a value of 1e15 keeps its squares and their sums finite.
MAGNITUDE = 1e15


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
        finite = a if spec.finite else a[np.isfinite(a)]  # (the few arrays that may hold ±inf: copied)
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
        if max(-low, high) > MAGNITUDE:
            fail(f"holds {high if high > -low else low:g}, beyond ±{MAGNITUDE:g} (no model saves a quantity so large)")
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


# ----------------------------------------------------------------------------- the JSON header

@dataclass(frozen=True)
class Num:
    """A finite JSON number from ``low`` to ``high`` (inclusive); ``whole``: an integer (``6``, not
    ``6.0`` or ``1e308``); ``optional``: may be null or absent."""

    low: float | None = None
    high: float | None = None
    whole: bool = False
    optional: bool = False


@dataclass(frozen=True)
class Text:
    """A JSON string of at most ``longest`` characters, one of ``choices`` when given; ``empty``:
    "" allowed."""

    choices: tuple | None = None
    empty: bool = True
    longest: int = 4096
    optional: bool = False


@dataclass(frozen=True)
class Flag:
    """true or false."""

    optional: bool = False


@dataclass(frozen=True)
class Items:
    """A JSON list of ``least`` to ``most`` values of shape ``item``; ``rising``: numbers in
    ascending order (a table's sample points)."""

    item: object
    least: int = 0
    most: int | None = None
    optional: bool = False
    rising: bool = False


@dataclass(frozen=True)
class Row:
    """A JSON list of exactly ``len(items)`` values, each of its own shape (a pair: ``Row((Text(),
    Flag()))``)."""

    items: tuple
    optional: bool = False


@dataclass(frozen=True)
class Table:
    """A JSON object: each key of ``fields`` of its shape (absent only when the shape is optional,
    or the key is one of ``absent``: a file from before it, read with its default); any other key of
    shape ``others`` (None: refused, as an array this engine never saves is)."""

    fields: dict
    others: object = None
    optional: bool = False
    absent: tuple = ()


@dataclass(frozen=True)
class Cases:
    """A JSON object whose key ``key`` chooses its shape among ``tables`` {value: Table}."""

    key: str
    tables: dict
    optional: bool = False


@dataclass(frozen=True)
class Plain:
    """Any JSON value (figures that are only shown)."""

    optional: bool = True


MISSING = object()


def check_header(path, shape, doc, where: str = "") -> None:
    """MotionFileError naming ``path`` and the first value of the header ``doc`` (parsed JSON) that
    does not fit ``shape``, by its place in the header ("model.task_params.gamma")."""
    problem = _misfit(shape, doc, where)
    if problem is not None:
        place, what = problem
        raise MotionFileError(path, f"its header's {place or 'top level'!r} {what} (a damaged or hand-edited file?)")


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _range(low, high) -> str:
    if low is not None and high is not None:
        return f"from {low:g} to {high:g}"
    return f"at least {low:g}" if low is not None else f"at most {high:g}"


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _misfit(shape, v, where):
    """(place, what is wrong) or None."""
    if v is MISSING or v is None:
        if shape.optional:
            return None
        return where, "is missing" if v is MISSING else "must not be null"
    if isinstance(shape, Plain):
        return None
    if isinstance(shape, Num):
        kind = "a whole number" if shape.whole else "a number"
        if not _number(v) or (shape.whole and not isinstance(v, int)):
            return where, f"must be {kind}, got {_show(v)}"
        if isinstance(v, float) and not np.isfinite(v):
            return where, f"must be a finite number, got {v}"
        if (shape.low is not None and v < shape.low) or (shape.high is not None and v > shape.high):
            return where, f"must be {kind} {_range(shape.low, shape.high)}, got {_show(v)}"
        return None
    if isinstance(shape, Text):
        if not isinstance(v, str) or len(v) > shape.longest or (not v and not shape.empty):
            return where, f"must be {'text' if shape.empty else 'text that is not empty'}, got {_show(v)}"
        if shape.choices is not None and v not in shape.choices:
            return where, f"must be one of {sorted(shape.choices)}, got {_show(v)}"
        return None
    if isinstance(shape, Flag):
        return None if isinstance(v, bool) else (where, f"must be true or false, got {_show(v)}")
    if isinstance(shape, (Items, Row)):
        if not isinstance(v, list):
            return where, f"must be a list, got {_show(v)}"
        if isinstance(shape, Row):
            if len(v) != len(shape.items):
                return where, f"must be a list of {len(shape.items)}, got {len(v)}"
            pairs = zip(shape.items, v)
        else:
            if len(v) < shape.least or (shape.most is not None and len(v) > shape.most):
                return where, f"must hold {_range(shape.least, shape.most)} values, got {len(v):,}"
            pairs = ((shape.item, x) for x in v)
        for i, (s, x) in enumerate(pairs):
            problem = _misfit(s, x, f"{where}[{i}]")
            if problem is not None:
                return problem
        if getattr(shape, "rising", False) and any(b < a for a, b in zip(v, v[1:])):
            return where, f"must be in ascending order, got {_show(v)}"
        return None
    if not isinstance(v, dict):
        return where, f"must be a table, got {_show(v)}"
    if isinstance(shape, Cases):
        chosen = shape.tables.get(v.get(shape.key)) if isinstance(v.get(shape.key), str) else None
        if chosen is None:
            return _join(where, shape.key), f"must be one of {sorted(shape.tables)}, got {_show(v.get(shape.key))}"
        return _misfit(chosen, v, where)
    for key, s in shape.fields.items():
        if key in shape.absent and key not in v:
            continue
        problem = _misfit(s, v.get(key, MISSING), _join(where, key))
        if problem is not None:
            return problem
    for key, x in v.items():
        if key in shape.fields:
            continue
        if shape.others is None:
            return _join(where, key), "is not a field this engine writes (another version's file?)"
        problem = _misfit(shape.others, x, _join(where, key))
        if problem is not None:
            return problem
    return None


def settings_shape(cls) -> Table:
    """The shape a settings dataclass takes in a header (``settings.to_dict``): each option's kind
    (a whole number for an int, true or false for a bool, a list for a tuple), nested groups as
    tables; keys it does not know are let through (``from_dict`` ignores an older version's).  The
    ranges are the options' own, checked by ``settings.validate`` (a float 7.0 for the field's
    Neighbours passed it and failed later, in an index)."""
    out = {}
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(default):
            out[f.name] = settings_shape(type(default))
            continue
        optional = f.metadata.get("optional", False) or default is None
        kind = f.metadata.get("kind")
        if kind == "paths":
            out[f.name] = Items(Text(), optional=optional)
        elif isinstance(default, bool):
            out[f.name] = Flag(optional=optional)
        elif isinstance(default, int):
            out[f.name] = Num(whole=True, optional=optional)
        elif isinstance(default, float) or default is None:
            out[f.name] = Num(optional=optional)
        elif isinstance(default, str):
            out[f.name] = Text(optional=optional)
        elif isinstance(default, tuple):
            whole = bool(default) and all(isinstance(v, int) and not isinstance(v, bool) for v in default)
            out[f.name] = Items(Num(whole=whole) if all(_number(v) for v in default) else Plain(), optional=optional)
        else:
            out[f.name] = Plain()
    return Table(out, others=Plain(), optional=True)


def _join(where: str, key) -> str:
    return f"{where}.{key}" if where else str(key)


__all__ = ["Array", "Cases", "Flag", "Items", "Num", "Plain", "Row", "Table", "Text", "check_arrays", "check_header",
           "settings_shape", "spec_of"]
