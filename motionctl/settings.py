"""Settings dataclasses that describe themselves: one declaration gives the engine its defaults,
the Blender panel its properties and the command line its options.

An engine's ``Settings`` is a dataclass whose fields are made with ``setting(...)`` (label,
description, range, unit, choices) or are themselves such dataclasses (nested groups, e.g. the
fragment cutting inside the fragment controller's settings).  ``options(cls)`` flattens the tree
into uniquely named ``Option``s; ``from_flat`` builds a validated instance from a flat dict (what
a property group or the command line holds), naming the parameter that is out of range.
Fields made with ``internal(...)`` are stored with a model and never shown; each declares the range
a stored value must keep, so a damaged or hand-edited model file is refused naming the value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields, is_dataclass

from .errors import MotionctlError


def setting(default, label: str, description: str, *, min=None, max=None, soft_max=None, unit: str | None = None,
            choices=None, group: str = "", optional: bool = False, subtype: str | None = None, ui: bool = True,
            name: str | None = None, kind: str | None = None, on_value=None, shown_when: tuple | None = None):
    """A dataclass field that describes itself.

    min, max     allowed range (inclusive); soft_max: where a slider stops
    unit         "LENGTH", "TIME", "VELOCITY", "ROTATION" or None (Blender units)
    choices      [(value, label, description), ...] for an enumeration
    group        heading the panel draws the option under
    optional     the value may be None ("off"): Blender draws a toggle next to it
    subtype      Blender subtype ("FACTOR", "PERCENTAGE", "FILE_PATH", ...)
    ui           False: command line and archives only (advanced)
    name         flat name when the field's own name would clash with another group's
    kind         "paths" for a tuple of file paths (else found from the default)
    on_value     for an optional setting whose default is None (off): its value when turned on
    shown_when   (option name, value): the panel shows this option only then; a "paths" option is
                 shown as the scene's list of trace files, which fills it
    """
    meta = {"setting": True, "label": label, "description": description, "min": min, "max": max,
            "soft_max": soft_max, "unit": unit, "choices": tuple(choices) if choices else None, "group": group,
            "optional": optional, "subtype": subtype, "ui": ui, "name": name, "kind": kind,
            "on_value": on_value, "shown_when": tuple(shown_when) if shown_when else None}
    return field(default=default, metadata=meta)


def internal(default, *, min=None, max=None, optional: bool = False, kind: str | None = None):
    """A field stored with a model, never shown, with the range (inclusive) a stored value must keep;
    ``optional``: None is allowed; ``kind`` as ``setting``'s (found from the default otherwise)."""
    return field(default=default, metadata={"internal": True, "min": min, "max": max, "optional": optional,
                                            "kind": kind})


def nested(cls, group: str = ""):
    """A field holding another settings dataclass (its options join the parent's)."""
    return field(default_factory=cls, metadata={"nested": True, "group": group})


@dataclass(frozen=True)
class Option:
    """One exposed setting, flattened: ``name`` unique in the engine, ``path`` the attributes to
    reach it, ``kind`` float | int | bool | str | floats | ints | paths (tuples)."""

    name: str
    path: tuple
    kind: str
    default: object
    label: str
    description: str
    min: object = None
    max: object = None
    soft_max: object = None
    unit: str | None = None
    choices: tuple | None = None
    group: str = ""
    optional: bool = False
    subtype: str | None = None
    ui: bool = True
    size: int = 0
    on_value: object = None
    shown_when: tuple | None = None


def _kind(value, f) -> tuple[str, int]:
    if isinstance(value, bool):
        return "bool", 0
    if isinstance(value, int):
        return "int", 0
    if isinstance(value, float) or value is None:
        return "float", 0
    if isinstance(value, str):
        return "str", 0
    if isinstance(value, tuple):
        return ("ints" if all(isinstance(v, int) for v in value) else "floats"), len(value)
    raise TypeError(f"setting {f.name!r} has an unsupported default {value!r}")


def options(cls, _path=(), _group="") -> list:
    """Every exposed Option of a settings dataclass (nested groups flattened), in declaration order."""
    out = []
    for f in fields(cls):
        if f.metadata.get("nested"):
            out += options(f.default_factory, _path + (f.name,), f.metadata.get("group") or _group)
        elif f.metadata.get("setting"):
            m = f.metadata
            kind, size = (m["kind"], 0) if m.get("kind") else _kind(f.default, f)
            out.append(Option(m["name"] or f.name, _path + (f.name,), kind, f.default, m["label"], m["description"],
                              m["min"], m["max"], m["soft_max"], m["unit"], m["choices"], m["group"] or _group,
                              m["optional"], m["subtype"], m["ui"], size, m.get("on_value"), m.get("shown_when")))
    names = [o.name for o in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup and not _path:
        raise TypeError(f"{cls.__name__}: settings {sorted(dup)} appear twice; give one a name=")
    return out


def _get(obj, path):
    for p in path:
        obj = getattr(obj, p)
    return obj


def to_flat(settings) -> dict:
    """{option name: value} of every exposed option."""
    return {o.name: _get(settings, o.path) for o in options(type(settings))}


def check(option: Option, value):
    """The value converted to the option's kind, or MotionctlError naming the option."""
    if value is None and option.optional:
        return None
    try:
        if option.kind == "bool":
            value = bool(value)
        elif option.kind == "int":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            value = int(value)
        elif option.kind == "float":
            value = float(value)
        elif option.kind == "str":
            value = str(value)
        elif option.kind == "paths":
            value = tuple(str(v) for v in value)
        else:
            value = tuple((int if option.kind == "ints" else float)(v) for v in value)
            if option.size and len(value) != option.size:
                raise MotionctlError(f"setting {option.name!r} needs {option.size} values, got {len(value)}")
    except (TypeError, ValueError) as exc:
        if isinstance(exc, MotionctlError):
            raise
        raise MotionctlError(f"setting {option.name!r} must be {option.kind}, got {value!r}") from None
    values = value if isinstance(value, tuple) else (value,)
    if option.kind in ("int", "float", "ints", "floats"):
        for v in values:
            if v != v or v in (float("inf"), float("-inf")):
                raise MotionctlError(f"setting {option.name!r} must be a finite number, got {v}")
            if option.min is not None and v < option.min:
                raise MotionctlError(f"setting {option.name!r} must be at least {option.min}, got {v}")
            if option.max is not None and v > option.max:
                raise MotionctlError(f"setting {option.name!r} must be at most {option.max}, got {v}")
    if option.choices and value not in [c[0] for c in option.choices]:
        raise MotionctlError(f"setting {option.name!r} must be one of {[c[0] for c in option.choices]}, got {value!r}")
    return value


def from_flat(cls, values: dict | None = None, base=None):
    """A ``cls`` instance: defaults (or ``base``'s values), overridden by ``values`` {option name:
    value}; every value checked.  Unknown names are an error naming them."""
    obj = dataclasses.replace(base) if base is not None else cls()
    obj = _deep_copy(obj)
    opts = {o.name: o for o in options(cls)}
    unknown = sorted(set(values or {}) - set(opts))
    if unknown:
        raise MotionctlError(f"unknown setting(s) {unknown} for {cls.__name__}")
    for name, value in (values or {}).items():
        o = opts[name]
        target = _get(obj, o.path[:-1])
        setattr(target, o.path[-1], check(o, value))
    validate(obj)
    return obj


def _deep_copy(obj):
    kw = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        kw[f.name] = _deep_copy(v) if is_dataclass(v) else v
    return type(obj)(**kw)


def validate(settings) -> None:
    """Check every exposed option of an instance, and run its own ``validate()`` if it has one."""
    for o in options(type(settings)):
        check(o, _get(settings, o.path))
    _validate_tree(settings)


def _validate_tree(obj) -> None:
    for f in fields(obj):
        v = getattr(obj, f.name)
        if is_dataclass(v):
            _validate_tree(v)
        elif f.metadata.get("internal"):
            setattr(obj, f.name, check(_internal_option(f), v))
    own = getattr(obj, "check", None)
    if callable(own):
        own()


def _internal_option(f) -> Option:
    m = f.metadata
    kind, size = _kind(f.default, f)
    if m["kind"]:
        kind = m["kind"]
    if isinstance(f.default, tuple) or kind in ("ints", "floats"):
        size = 0  # any length
    return Option(f.name, (f.name,), kind, f.default, f.name, "", m["min"], m["max"], optional=m["optional"], size=size)


def to_dict(settings) -> dict:
    """Every field (internal ones too), nested, as plain JSON: what a model archive stores."""
    return dataclasses.asdict(settings)


def from_dict(cls, data: dict):
    """Rebuild settings stored by ``to_dict`` (unknown keys ignored: archives from older versions)."""
    kw = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        v = data[f.name]
        if is_dataclass(f.default_factory if f.default is dataclasses.MISSING else f.default):
            if not isinstance(v, dict):
                raise MotionctlError(f"{f.name}: expected a table of options, got {v!r}")
            sub = f.default_factory if f.default is dataclasses.MISSING else type(f.default)
            v = from_dict(sub, v)
        elif isinstance(v, list):
            v = tuple(v)
        kw[f.name] = v
    return cls(**kw)


# ----------------------------------------------------------------------------- command line

def add_arguments(parser, cls) -> None:
    """One ``--option`` per exposed setting (dashes for underscores), its description as help."""
    for o in options(cls):
        flag = "--" + o.name.replace("_", "-")
        text = f"{o.label}: {o.description} (default {o.default!r})".replace("%", "%%")
        kw = {"dest": o.name, "default": None, "help": text}
        if o.kind == "bool":
            parser.add_argument(flag, action="store_true", dest=o.name, default=None, help=kw["help"])
            parser.add_argument("--no-" + o.name.replace("_", "-"), action="store_false", dest=o.name,
                                help=f"turn {o.label} off".replace("%", "%%"))
            continue
        if o.kind in ("ints", "floats", "paths"):
            kw["nargs"] = o.size or "+"
            kw["type"] = {"ints": int, "floats": float, "paths": str}[o.kind]
        else:
            kw["type"] = {"int": int, "float": float, "str": str}[o.kind]
        if o.choices:
            kw["choices"] = [c[0] for c in o.choices]
        parser.add_argument(flag, **kw)


def from_args(cls, args):
    """Settings from parsed command-line arguments (options left out keep their defaults)."""
    values = {}
    for o in options(cls):
        v = getattr(args, o.name, None)
        if v is not None:
            values[o.name] = tuple(v) if isinstance(v, list) else v
    return from_flat(cls, values)


__all__ = ["Option", "add_arguments", "check", "from_args", "from_dict", "from_flat", "nested", "options", "setting",
           "to_dict", "to_flat", "validate"]
