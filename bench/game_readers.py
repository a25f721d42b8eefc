"""Game files read without Blender (issue 58.5): every bone's world transform per frame of every take
of an FBX file (the ``ufbx`` wheel, a C library with no Blender code in it) or a glTF 2.0 binary
(.glb: parsed here with struct, json and numpy), in Blender's world: metres, Z up, -Y forward.

Blender reading its own export back can hide a fault its exporter and importer share (a sign, an
axis, a frame offset made on the way out and undone on the way in); these readers share nothing
with Blender.  Bench-only code: the extension never imports it, and ufbx is a bench dependency
(``pip install -e .[bench]``), imported only when an FBX file is read.

Both return {"bones": [names], "takes": {name: {"first", "last" (frames at ``fps``: time 0 is frame
0), "first_key" (the frame of the earliest key), "world" [F, B, 4, 4]}}}, world matrices in metres
with their rotation columns of unit length.
"""

from __future__ import annotations

import json
import struct

import numpy as np

# glTF is Y up, +Z forward; Blender is Z up, -Y forward: Blender (x, y, z) = glTF (x, -z, y)
GLTF_TO_BLENDER = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])

_COMPONENTS = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_NORMALIZED = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}  # glTF 2.0 3.11: c / max, >= -1


def frame_times(first: int, last: int, fps: float) -> np.ndarray:
    """[F] times (s) of whole frames ``first``..``last`` at ``fps``."""
    return np.arange(first, last + 1, dtype=float) / fps


def unit_columns(m: np.ndarray) -> np.ndarray:
    """[..., 4, 4] with the 3x3 part's columns scaled to unit length (rotation without scale)."""
    out = np.array(m, dtype=float)
    out[..., :3, :3] /= np.linalg.norm(out[..., :3, :3], axis=-2, keepdims=True)
    return out


# --------------------------------------------------------------------------- glTF 2.0 binary


def read_glb_document(path: str) -> tuple:
    """(JSON document, BIN chunk bytes) of a .glb: a 12-byte header ("glTF", version 2, length),
    then chunks of (length, type, data), JSON first, BIN (when present) second."""
    with open(path, "rb") as fh:
        data = fh.read()
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    if magic != b"glTF" or version != 2:
        raise ValueError(f"{path}: not a glTF 2.0 binary (magic {magic!r}, version {version})")
    doc, binary, at = None, b"", 12
    while at + 8 <= min(length, len(data)):
        size, kind = struct.unpack_from("<II", data, at)
        chunk = data[at + 8:at + 8 + size]
        if kind == 0x4E4F534A:  # "JSON"
            doc = json.loads(chunk.decode("utf-8"))
        elif kind == 0x004E4942 and not binary:  # "BIN\0"
            binary = chunk
        at += 8 + size
    if doc is None:
        raise ValueError(f"{path}: no JSON chunk")
    return doc, binary


def accessor(doc: dict, binary: bytes, index: int) -> np.ndarray:
    """Accessor ``index`` as float64 [count, width] (normalized integers mapped to [-1, 1] / [0, 1],
    a bufferView's byteStride honoured; sparse accessors are refused: Blender writes none)."""
    acc = doc["accessors"][index]
    if "sparse" in acc:
        raise NotImplementedError("sparse glTF accessors")
    width, dtype = _WIDTH[acc["type"]], np.dtype(_COMPONENTS[acc["componentType"]])
    count = acc["count"]
    if "bufferView" not in acc:
        return np.zeros((count, width))
    view = doc["bufferViews"][acc["bufferView"]]
    if view.get("buffer", 0) != 0:
        raise NotImplementedError("a .glb whose data is not all in its BIN chunk")
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    stride = view.get("byteStride") or width * dtype.itemsize
    rows = np.frombuffer(binary, dtype=np.uint8, count=(count - 1) * stride + width * dtype.itemsize, offset=start)
    rows = np.lib.stride_tricks.as_strided(rows, shape=(count, width * dtype.itemsize), strides=(stride, 1))
    out = np.ascontiguousarray(rows).view(dtype).reshape(count, width).astype(float)
    if acc.get("normalized") and acc["componentType"] in _NORMALIZED:
        out = np.maximum(out / _NORMALIZED[acc["componentType"]], -1.0)
    return out


def _slerp(q0: np.ndarray, q1: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Shortest-arc spherical interpolation of unit quaternions [N, 4] (x, y, z, w) by ``u`` [N]."""
    d = np.sum(q0 * q1, axis=1)
    q1 = np.where(d[:, None] < 0.0, -q1, q1)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    near = s < 1e-9
    w0 = np.where(near, 1.0 - u, np.sin((1.0 - u) * theta) / np.where(near, 1.0, s))
    w1 = np.where(near, u, np.sin(u * theta) / np.where(near, 1.0, s))
    out = w0[:, None] * q0 + w1[:, None] * q1
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def sample(times: np.ndarray, values: np.ndarray, interpolation: str, t: np.ndarray, rotation: bool) -> np.ndarray:
    """A sampler's value [T, W] at times ``t`` (glTF 2.0 Appendix C): STEP, LINEAR (slerp for
    rotations) or CUBICSPLINE (Hermite with tangents scaled by the key interval; outputs are
    (in-tangent, value, out-tangent) triples); held at the first and last key outside them."""
    if interpolation == "CUBICSPLINE":
        values = values.reshape(len(times), 3, -1)
        a, v, b = values[:, 0], values[:, 1], values[:, 2]
    else:
        v = values
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 1)
    k1 = np.minimum(k + 1, len(times) - 1)
    dt = times[k1] - times[k]
    u = np.where(dt > 0.0, (t - times[k]) / np.where(dt > 0.0, dt, 1.0), 0.0)
    u = np.clip(u, 0.0, 1.0)
    if interpolation == "STEP":
        out = v[np.where(u >= 1.0, k1, k)]
    elif interpolation == "CUBICSPLINE":
        u2, u3 = u * u, u * u * u
        h = [2 * u3 - 3 * u2 + 1, u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2]
        out = (h[0][:, None] * v[k] + (h[1] * dt)[:, None] * b[k] + h[2][:, None] * v[k1]
               + (h[3] * dt)[:, None] * a[k1])
        if rotation:
            out = out / np.linalg.norm(out, axis=1, keepdims=True)
    elif rotation:
        out = _slerp(v[k], v[k1], u)
    else:
        out = (1.0 - u)[:, None] * v[k] + u[:, None] * v[k1]
    return out


def trs_matrix(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """[N, 4, 4] = T @ R @ S of translations [N, 3], unit quaternions [N, 4] (x, y, z, w), scales [N, 3]."""
    x, y, z, w = (q / np.linalg.norm(q, axis=1, keepdims=True)).T
    r = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                  2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                  2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1).reshape(-1, 3, 3)
    m = np.zeros((len(t), 4, 4))
    m[:, :3, :3] = r * s[:, None, :]
    m[:, :3, 3] = t
    m[:, 3, 3] = 1.0
    return m


def read_glb(path: str, fps: float) -> dict:
    """Every joint's world matrix (Blender's world: metres, Z up) at every whole frame of every
    animation of a .glb.  Joints are the nodes of the file's skins, named by their node names.  A
    node's local transform is its animated TRS channels over its rest TRS (or ``matrix``); world
    matrices follow the node hierarchy from the scene's roots.  An animation's frames run from the
    first key of any of its channels to the last (time 0 is frame 0)."""
    doc, binary = read_glb_document(path)
    nodes = doc.get("nodes", [])
    joints = sorted({j for skin in doc.get("skins", []) for j in skin["joints"]})
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}
    order, seen = [], set()

    def visit(i):  # parents before children
        if i not in seen:
            if i in parent:
                visit(parent[i])
            seen.add(i)
            order.append(i)

    for i in range(len(nodes)):
        visit(i)
    takes = {}
    for anim in doc.get("animations", []):
        samplers = anim["samplers"]
        inputs = {s["input"]: accessor(doc, binary, s["input"])[:, 0] for s in samplers}
        start = min(float(x.min()) for x in inputs.values())
        end = max(float(x.max()) for x in inputs.values())
        first, last = int(round(start * fps)), int(round(end * fps))
        t = frame_times(first, last, fps)
        trs = {i: [np.tile(nodes[i].get(k, d), (len(t), 1)).astype(float)
                   for k, d in (("translation", [0.0, 0.0, 0.0]), ("rotation", [0.0, 0.0, 0.0, 1.0]),
                                ("scale", [1.0, 1.0, 1.0]))] for i in range(len(nodes))}
        for ch in anim["channels"]:
            target = ch["target"]
            if "node" not in target or target["path"] not in ("translation", "rotation", "scale"):
                continue  # morph weights: no bone
            s = samplers[ch["sampler"]]
            slot = ("translation", "rotation", "scale").index(target["path"])
            trs[target["node"]][slot] = sample(inputs[s["input"]], accessor(doc, binary, s["output"]),
                                               s.get("interpolation", "LINEAR"), t, slot == 1)
        world = {}
        for i in order:
            if "matrix" in nodes[i]:  # column-major; a node with a matrix is never animated (glTF 3.7.2.2)
                local = np.broadcast_to(np.array(nodes[i]["matrix"], dtype=float).reshape(4, 4).T, (len(t), 4, 4))
            else:
                local = trs_matrix(*trs[i])
            world[i] = world[parent[i]] @ local if i in parent else GLTF_TO_BLENDER @ local
        takes[anim.get("name", "")] = {"first": first, "last": last, "start_s": start, "end_s": end, "first_key": first,
                                       "world": unit_columns(np.stack([world[j] for j in joints], axis=1))}
    return {"bones": [nodes[j].get("name", str(j)) for j in joints], "takes": takes}


# --------------------------------------------------------------------------- FBX (ufbx)


def ufbx_version() -> str | None:
    try:
        from importlib import metadata

        return metadata.version("ufbx")
    except Exception:  # noqa: BLE001 - not installed
        return None


def _matrix(m) -> np.ndarray:
    """ufbx's affine Matrix (four column Vec3s) as a 4x4 array."""
    out = np.eye(4)
    out[:3, :4] = np.array([tuple(c) for c in (m.c0, m.c1, m.c2, m.c3)], dtype=float).T
    return out


def read_fbx(path: str, fps: float) -> dict:
    """Every bone's (LimbNode's) world matrix (Blender's world: metres, Z up, -Y forward) at every
    whole frame of every animation stack of an FBX file, as ufbx evaluates it.  ufbx converts the
    file to that space on load (``target_axes`` right-handed Z up, ``target_unit_meters`` 1: the
    file's GlobalSettings UpAxis/FrontAxis/CoordAxis and UnitScaleFactor, folded into the root
    node's transform), so a file in centimetres and one in metres read alike.  Each node's local
    transform per frame is ufbx's ``evaluate_transform`` (its curves, pre/post rotations and pivots);
    world matrices are their products down the hierarchy from the root's, checked at rest against
    ufbx's own ``node_to_world`` (which would catch an inherit mode that does not compose so).  Not
    ``evaluate_scene``: its scenes crash the garbage collector in ufbx 0.0.5's binding.  Bone names
    are the file's (ufbx drops the "Model::" class prefix; a namespace such as "mixamorig:" stays).
    A stack's frames run from its time_begin to its time_end (LocalStart and LocalStop)."""
    import ufbx

    takes = {}
    with ufbx.load_file(path, target_axes=ufbx.axes_right_handed_z_up, target_unit_meters=1.0,
                        space_conversion=ufbx.SpaceConversion.TRANSFORM_ROOT, ignore_geometry=True) as scene:
        fix = _owes_reference(scene)
        listed = scene.nodes
        nodes = [fix(listed[i]) for i in range(len(listed))]
        parent = [-1 if p is None else p.typed_id for p in (fix(n.parent) for n in nodes)]
        order = sorted(range(len(nodes)), key=lambda i: nodes[i].node_depth)  # parents first
        bones = [i for i in range(len(nodes)) if fix(nodes[i].bone) is not None]
        names = [nodes[i].name for i in bones]
        rest = np.array([_matrix(n.node_to_world) for n in nodes])
        local = np.array([_transform_matrix(n.local_transform) for n in nodes])
        composed = _compose(local[None], parent, order, rest)[0]
        off = np.abs(composed[bones] - rest[bones]).max() if bones else 0.0
        if off > 1e-6 * max(1.0, float(np.abs(rest[bones]).max())):
            raise ValueError(f"{path}: the bones' rest transforms do not compose to ufbx's node_to_world (off by {off:g})")
        stacks = scene.anim_stacks
        for s in range(len(stacks)):
            stack = fix(stacks[s])
            anim = stack.anim
            first, last = int(round(stack.time_begin * fps)), int(round(stack.time_end * fps))
            times = frame_times(first, last, fps)
            local = np.array([[_transform_matrix(ufbx.evaluate_transform(anim, n, float(t))) if parent[i] >= 0
                               else rest[i] for i, n in enumerate(nodes)] for t in times])
            world = _compose(local, parent, order, rest)[:, bones]
            keys = [c.min_time for c in _curves(stack, fix) if len(c.keyframes)]
            takes[stack.name] = {"first": first, "last": last, "start_s": float(stack.time_begin),
                                 "end_s": float(stack.time_end),
                                 "first_key": int(round(min(keys) * fps)) if keys else None,
                                 "world": unit_columns(world)}
        axes = scene.settings.axes  # the file's own (ufbx converts the nodes, not the settings)
        settings = {"unit_meters": float(scene.settings.unit_meters),
                    "axes": [a.name.lower() for a in (axes.right, axes.up, axes.front)],
                    "fps": float(scene.settings.frames_per_second)}
    return {"bones": names, "takes": takes, "settings": settings}  # nothing of ufbx's kept: freed


def _transform_matrix(t) -> np.ndarray:
    """ufbx's Transform (translation, rotation quaternion x y z w, scale) as a 4x4 T @ R @ S."""
    return trs_matrix(np.array([tuple(t.translation)]), np.array([tuple(t.rotation)]), np.array([tuple(t.scale)]))[0]


def _compose(local: np.ndarray, parent: list, order: list, top: np.ndarray) -> np.ndarray:
    """[F, N, 4, 4] world matrices: a node's parent's world @ its local [F, N, 4, 4], in ``order``
    (parents first); a node with no parent (the scene's root) is ``top``'s."""
    world = np.empty_like(local)
    for i in order:
        world[:, i] = top[i] if parent[i] < 0 else world[:, parent[i]] @ local[:, i]
    return world


def _curves(stack, fix):
    layers = stack.layers
    for i in range(len(layers)):
        values = fix(layers[i]).anim_values
        for j in range(len(values)):
            for c in fix(values[j]).curves:
                if fix(c) is not None:
                    yield c


def _owes_reference(scene):
    """A function to pass every element (node, bone, stack, layer, curve...) ufbx hands out through,
    adding the reference ufbx 0.0.5's binding owes when it does.  Its ``Element_from`` returns the
    wrapper it caches for an element without a new reference (measured here: a node fetched twice
    keeps one reference), so each release of a fetched element takes one from the cache's: the
    wrapper is freed while cached, and the next fetch hands out freed memory (a segfault reading the
    second take of a file).  Checked on the scene, so a fixed binding is left alone."""
    import ctypes
    import sys

    probe = scene.nodes[0]
    before = sys.getrefcount(probe)
    again = scene.nodes[0]
    owed = sys.getrefcount(probe) == before  # a correct binding adds the second fetch's reference
    if owed:
        for _ in range(2):  # the two fetches above
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(probe))
    del again

    def fix(element):
        if owed and element is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(element))
        return element

    return fix


# --------------------------------------------------------------------------- comparison


def match_bones(ours: list, theirs: list) -> list:
    """[(index in ``ours``, index in ``theirs``)] of bones named alike: the same name, else the same
    name after a namespace ("mixamorig:Hips" and "Hips"; FBX tools add or drop "ns:" prefixes)."""
    exact = {n: i for i, n in enumerate(theirs)}
    bare = {n.rsplit(":", 1)[-1]: i for i, n in enumerate(theirs)}
    out = []
    for i, n in enumerate(ours):
        j = exact.get(n, bare.get(n.rsplit(":", 1)[-1]))
        if j is not None:
            out.append((i, j))
    return out


def rotation_angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Degrees between rotation matrices [..., 3, 3], from the chord ||a - b|| = 2 sqrt(2) sin(angle / 2)
    (arccos of the trace loses everything under ~0.03 degree to float32 rounding near 1)."""
    chord = np.linalg.norm(np.asarray(a, float) - np.asarray(b, float), axis=(-2, -1))
    return np.degrees(2.0 * np.arcsin(np.clip(chord / (2.0 * np.sqrt(2.0)), 0.0, 1.0)))


def world_errors(before: dict, read: dict) -> dict:
    """Every matched bone's world head (mm) and rotation (degrees) in a file, as a reader evaluates
    it, against what Blender played: ``before`` is {"bones", "takes": {name: {"frames": (first,
    last), "world" [F, B, 4, 4]}}}, ``read`` a reader's answer.  A take's Blender frame ``first + k``
    is the file's frame ``k`` (every take starts at time 0); frames only one side has are counted
    in ``frames_missing``.  Max and p95 over every bone and frame of every take together."""
    pairs = match_bones(before["bones"], read["bones"])
    ours, theirs = [i for i, _ in pairs], [j for _, j in pairs]
    mm, deg, where, missing = [], [], [], 0
    for name, take in before["takes"].items():
        got = read["takes"].get(name)
        first, last = take["frames"]
        if got is None:
            missing += last - first + 1
            continue
        k0, k1 = max(0, got["first"]), min(last - first, got["last"])
        both = max(0, k1 - k0 + 1)
        missing += (last - first + 1 - both) + (got["last"] - got["first"] + 1 - both)
        if not both:
            continue
        a = take["world"][k0:k1 + 1][:, ours]
        b = got["world"][k0 - got["first"]:k1 - got["first"] + 1][:, theirs]
        mm.append(1e3 * np.linalg.norm(a[..., :3, 3] - b[..., :3, 3], axis=-1))
        deg.append(rotation_angle_deg(unit_columns(a)[..., :3, :3], b[..., :3, :3]))
        where += [(name, first + k) for k in range(k0, k1 + 1)]
    out = {"bones_compared": len(pairs), "bones_in_file": len(read["bones"]),
           "bones_unmatched": sorted(set(before["bones"]) - {before["bones"][i] for i in ours}),
           "takes_found": {n: [t["first"], t["last"]] for n, t in read["takes"].items()},
           "takes_equal": sorted(read["takes"]) == sorted(before["takes"]),
           "first_frame": min((t["first"] for t in read["takes"].values()), default=None),
           "first_key_frame": min((t["first_key"] for t in read["takes"].values() if t["first_key"] is not None),
                                  default=None),
           "frames_compared": len(where), "frames_missing": missing}
    if not mm:
        return out | {"world_error_mm_max": None, "world_error_mm_p95": None, "world_angle_deg_max": None,
                      "world_angle_deg_p95": None, "worst_bone": None, "worst_take": None, "worst_frame": None}
    mm, deg = np.concatenate(mm), np.concatenate(deg)
    f, b = np.unravel_index(int(np.argmax(mm)), mm.shape)
    return out | {"world_error_mm_max": float(mm.max()), "world_error_mm_p95": float(np.percentile(mm, 95)),
                  "world_angle_deg_max": float(deg.max()), "world_angle_deg_p95": float(np.percentile(deg, 95)),
                  "worst_bone": before["bones"][ours[b]], "worst_take": where[f][0], "worst_frame": int(where[f][1])}
