"""BVH reader and writer.

The reader accepts any channel layout (3, 6 or any other count on any joint, rotations in any
order), End Sites, tabs, CRLF and exponent notation, and any nesting depth.  Given the file's
axes and unit it converts to motionctl's Z-up metres exactly as Blender's BVH importer does;
left unset, the unit and up axis are detected from the motion (``motionctl.io.orient``), since the
rest pose of many exporters says nothing about either.  The MOTION block is parsed
in bulk (one split and one conversion for the whole block; per-line value counts are found with
array operations), so reading is tens of MB/s.  Any malformed file raises ``MotionFileError``
naming the file and line, and no partial clip is ever returned.
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np

from .. import quat
from ..errors import MotionFileError
from ..clip import Clip
from ..tags import apply_tags
from ..store import atomic_file
from ..store import read_bytes
from .roots import extra_root, fold_root
from .orient import Orientation, floor_lift, orient
from ..skeleton import POS_CHANNELS, ROT_CHANNELS, Skeleton, axis_conversion

KNOWN_CHANNELS = {c.lower(): c for c in POS_CHANNELS + ROT_CHANNELS}
MAX_CHANNELS = 64  # per joint; real files use 0, 3 or 6
MAX_VALUE = 1e8  # |position| in file units or |angle| in degrees beyond this is not capture
FRAME_TIME = (1e-4, 10.0)  # seconds: 10 kHz to 0.1 Hz


# --------------------------------------------------------------------------- reading

class _Tokens:
    """Header tokens with their 1-based line numbers."""

    def __init__(self, lines, path, first_line=1):
        self.items = [(tok, n) for n, line in enumerate(lines, first_line) for tok in line.split()]
        self.i = 0
        self.path = path
        self.last_line = first_line + max(len(lines) - 1, 0)

    def peek(self):
        return self.items[self.i] if self.i < len(self.items) else (None, self.last_line)

    def next(self, what):
        if self.i >= len(self.items):
            raise MotionFileError(self.path, f"file ends while expecting {what}", self.last_line)
        item = self.items[self.i]
        self.i += 1
        return item

    def expect(self, word):
        tok, line = self.next(repr(word))
        if tok.lower() != word.lower():
            raise MotionFileError(self.path, f"expected {word!r}, found {tok!r}", line)
        return line

    def number(self, what):
        tok, line = self.next(what)
        try:
            value = float(tok)
        except ValueError:
            raise MotionFileError(self.path, f"non-numeric value {tok!r} for {what}", line) from None
        if not abs(value) <= MAX_VALUE:  # also NaN and inf
            raise MotionFileError(self.path, f"{what} is {tok!r}: not a finite number in range", line)
        return value, line


class _Names:
    """Unique joint names in linear time; duplicates get Blender's ".001" suffixes."""

    def __init__(self):
        self.names, self.taken, self.next_suffix = [], set(), {}

    def add(self, name: str) -> str:
        if name in self.taken:
            k = self.next_suffix.get(name, 1)
            while f"{name}.{k:03d}" in self.taken:
                k += 1
            self.next_suffix[name] = k + 1
            name = f"{name}.{k:03d}"
        self.taken.add(name)
        self.names.append(name)
        return name


def _parse_hierarchy(tokens: _Tokens):
    """Joints, parents, offsets, channels and end sites; iterative, so any nesting depth parses."""
    names, parents, offsets, channels, end_parent, end_offsets = _Names(), [], [], [], [], []
    tokens.expect("HIERARCHY")
    tok, line = tokens.next("ROOT")
    if tok.upper() != "ROOT":
        raise MotionFileError(tokens.path, f"expected 'ROOT', found {tok!r}", line)
    stack = []  # (joint index, line its '{' was on)

    def open_joint(parent, keyword_line):
        # Name: every token on the keyword's line up to '{' (Blender joins spaces with '_').
        parts = []
        while True:
            tok, line = tokens.peek()
            if tok is None or line != keyword_line or tok == "{":
                break
            parts.append(tok)
            tokens.i += 1
        if not parts:
            raise MotionFileError(tokens.path, "joint without a name", keyword_line)
        name = names.add("_".join(parts))
        open_line = tokens.expect("{")
        parents.append(parent)
        tokens.expect("OFFSET")
        offsets.append([tokens.number(f"OFFSET of {name}")[0] for _ in range(3)])
        chans = []
        if (tokens.peek()[0] or "").upper() == "CHANNELS":
            tokens.i += 1
            count, cline = tokens.number(f"CHANNELS count of {name}")
            if count != int(count) or not 0 <= count <= MAX_CHANNELS:
                raise MotionFileError(tokens.path, f"bad channel count {count:g} for {name}", cline)
            for _ in range(int(count)):
                tok, line = tokens.next(f"a channel name of {name}")
                if tok.lower() not in KNOWN_CHANNELS:
                    raise MotionFileError(tokens.path, f"unknown channel {tok!r} on joint {name!r}", line)
                chan = KNOWN_CHANNELS[tok.lower()]
                if chan in chans:
                    raise MotionFileError(tokens.path, f"channel {chan} listed twice on joint {name!r}", line)
                chans.append(chan)
        channels.append(tuple(chans))
        stack.append((len(names.names) - 1, open_line))

    open_joint(-1, line)
    while stack:
        idx, open_line = stack[-1]
        name = names.names[idx]
        if tokens.peek()[0] is None:
            raise MotionFileError(tokens.path, f"missing '}}' for joint {name!r} opened at line {open_line}",
                                  tokens.last_line)
        tok, line = tokens.next("'}'")
        up = tok.upper()
        if tok == "}":
            stack.pop()
        elif up == "JOINT":
            open_joint(idx, line)
        elif up == "END":
            tokens.expect("Site")
            # Some exporters name end sites; skip anything before '{'.
            while tokens.peek()[0] not in ("{", None):
                tokens.i += 1
            tokens.expect("{")
            tokens.expect("OFFSET")
            end_parent.append(idx)
            end_offsets.append([tokens.number(f"End Site OFFSET of {name}")[0] for _ in range(3)])
            tokens.expect("}")
        elif up in ("MOTION", "ROOT"):
            raise MotionFileError(tokens.path, f"missing '}}' for joint {name!r} opened at line {open_line}", line)
        else:
            raise MotionFileError(tokens.path, f"unexpected {tok!r} inside joint {name!r}", line)
    tok, line = tokens.peek()
    if tok is not None:
        if tok == "}":
            raise MotionFileError(tokens.path, "unbalanced '}' after the hierarchy", line)
        if tok.upper() == "ROOT":
            raise MotionFileError(tokens.path, "files with several ROOT joints are not supported", line)
        raise MotionFileError(tokens.path, f"unexpected {tok!r} after the hierarchy", line)
    return (names.names, parents, np.array(offsets, dtype=float).reshape(-1, 3), channels, end_parent,
            np.array(end_offsets, dtype=float).reshape(-1, 3))


_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True
_NUMERIC = _WS.copy()
_NUMERIC[[ord(c) for c in "0123456789.+-eE"]] = True


def _parse_motion(data: bytes, n_channels: int, n_frames: int, path: str, first_line: int) -> np.ndarray:
    """Frame values [F, C] from the bytes after 'Frame Time:', with per-line checks."""
    buf = np.frombuffer(data, dtype=np.uint8)
    is_ws = _WS[buf]
    starts = np.flatnonzero(~is_ws & np.concatenate(([True], is_ws[:-1])))
    newlines = np.flatnonzero(buf == 10)
    n_lines = len(newlines) + 1
    token_line = np.searchsorted(newlines, starts)
    counts = np.bincount(token_line, minlength=n_lines)
    bad_char = np.flatnonzero(~_NUMERIC[buf])
    if len(bad_char):
        at = int(bad_char[0])
        ln = int(np.searchsorted(newlines, at))
        tok_i = int(np.searchsorted(starts, at, side="right") - 1)
        tok = data[starts[tok_i]:].split(None, 1)[0].decode("latin-1") if tok_i >= 0 else chr(buf[at])
        raise MotionFileError(path, f"non-numeric value {tok[:40]!r} in frame data", first_line + ln)
    nonblank = np.flatnonzero(counts)
    wrong = nonblank[counts[nonblank] != n_channels]
    if len(wrong) and np.searchsorted(nonblank, wrong[0]) < n_frames:
        ln = int(wrong[0])
        frame = int(np.searchsorted(nonblank, ln))
        got = int(counts[ln])
        if ln == nonblank[-1] and len(nonblank) <= n_frames and got < n_channels:
            raise MotionFileError(
                path,
                f"truncated MOTION block: file ends in frame {frame} of {n_frames} ({got} of {n_channels} values)",
                first_line + ln,
            )
        raise MotionFileError(
            path, f"frame {frame} has {got} values, expected {n_channels} (one per channel)", first_line + ln
        )
    if len(nonblank) < n_frames:
        raise MotionFileError(
            path,
            f"truncated MOTION block: 'Frames: {n_frames}' but the file ends after {len(nonblank)} frame lines",
            first_line + (int(nonblank[-1]) if len(nonblank) else 0),
        )
    if len(nonblank) > n_frames:
        raise MotionFileError(
            path,
            f"'Frames: {n_frames}' does not match the {len(nonblank)} frame lines that follow",
            first_line + int(nonblank[n_frames]),
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # numpy 1.x: a partial parse, caught below
            values = np.fromstring(data, dtype=np.float64, sep=" ")
    except ValueError:  # numpy 2.x raises on the first token that is not a number: find it below
        values = np.empty(0)
    if len(values) != n_frames * n_channels:
        # A token made only of numeric characters but not a number ("1.2.3", "--5").
        for k, tok in enumerate(data.split()):
            try:
                float(tok)
            except ValueError:
                ln = int(token_line[k])
                raise MotionFileError(path, f"non-numeric value {tok.decode()[:40]!r} in frame data",
                                      first_line + ln) from None
        raise MotionFileError(path, "frame data could not be read as numbers", first_line)
    bad = np.flatnonzero(~(np.abs(values) <= MAX_VALUE))  # overflowing (1e999 -> inf) or absurd values
    if len(bad):
        k = int(bad[0])
        raise MotionFileError(path, f"frame {k // max(n_channels, 1)}: value {values[k]:g} is not a finite number "
                              f"in range (|value| <= {MAX_VALUE:g})", first_line + int(token_line[k]))
    return values.reshape(n_frames, n_channels)


_FRAMES = re.compile(rb"^[ \t]*Frames:[ \t]*(\S+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_FRAME_TIME = re.compile(rb"^[ \t]*Frame[ \t]+Time:[ \t]*(\S+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_MOTION = re.compile(rb"^[ \t]*MOTION[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)


def parse_bvh_oriented(data: bytes, path: str = "<memory>", unit_scale: float | None = None,
                       name: str | None = None, axis_forward: str | None = None, axis_up: str | None = None,
                       floor: str = "keep", fold_roots: bool = True) -> tuple[Clip, Orientation]:
    """A Clip (Z up, metres) from the bytes of a BVH file, and what was decided about its units,
    axes and floor (``motionctl.io.orient``).

    unit_scale   metres per file unit (None: detected from the motion)
    axis_forward, axis_up   the file's axes, as in Blender's importer ("-Z", "Y" for most files);
                 None: up detected from the motion, forward paired with it
    floor        "keep", "auto" (stance feet on z = 0) or "lowest" (lowest point on z = 0)
    fold_roots   fold a root with a single child (an extra root above the hips: ``motionctl.io.roots``)
                 into it, so the hips carry the root motion; False keeps the file's joints
    """
    if b"\n" not in data and b"\r" in data:
        data = data.replace(b"\r", b"\n")  # classic Mac line endings
    m = _MOTION.search(data)
    header_end = m.start() if m else len(data)
    header_lines = data[:header_end].decode("latin-1").replace("\r", " ").split("\n")
    tokens = _Tokens(header_lines, path)
    if not tokens.items:
        raise MotionFileError(path, "empty file", 1)
    names, parents, offsets, channels, end_parent, end_offsets = _parse_hierarchy(tokens)
    if m is None:
        raise MotionFileError(path, "no MOTION section (file truncated?)", tokens.last_line)
    line_of = lambda pos: data.count(b"\n", 0, pos) + 1  # noqa: E731  (header only: cheap)

    def header_field(pattern, start: int, expected: str, what: str, convert):
        """(the match right after ``start``, its number); a clear error naming the line if not."""
        match = pattern.search(data, start)
        if match is None or data[start:match.start()].strip():
            raise MotionFileError(path, expected, line_of(start) + 1)
        try:
            return match, convert(match.group(1))
        except ValueError:
            raise MotionFileError(path, f"non-numeric {what} {match.group(1).decode('latin-1')[:40]!r}",
                                  line_of(match.start())) from None

    fm, n_frames = header_field(_FRAMES, m.end(), "expected 'Frames: N' after MOTION", "frame count", int)
    tm, frame_time = header_field(_FRAME_TIME, fm.end(), "expected 'Frame Time: seconds' after 'Frames:'",
                                  "frame time", float)
    if n_frames < 1:
        raise MotionFileError(path, f"'Frames: {n_frames}': the file holds no motion", line_of(fm.start()))
    if not FRAME_TIME[0] <= frame_time <= FRAME_TIME[1]:
        raise MotionFileError(path, f"'Frame Time: {frame_time:g}' must be between {FRAME_TIME[0]:g} and "
                              f"{FRAME_TIME[1]:g} s", line_of(tm.start()))
    body_start = tm.end() + 1 if data[tm.end():tm.end() + 1] == b"\n" else tm.end()
    n_channels = sum(len(c) for c in channels)
    values = _parse_motion(data[body_start:], n_channels, n_frames, path, line_of(body_start))

    skel_file, root_pos, local_rot, local_pos = _to_motion(names, parents, offsets, channels, end_parent,
                                                           end_offsets, values)
    why = extra_root(skel_file, root_pos, local_rot, local_pos) if fold_roots else None
    if why:
        note = f"extra root {skel_file.names[0]!r} folded into {skel_file.names[1]!r} (it {why})"
        skel_file, root_pos, local_rot, local_pos = fold_root(skel_file, root_pos, local_rot, local_pos)
    try:
        skeleton, root_pos, local_rot, local_pos, info = orient(skel_file, root_pos, local_rot, local_pos, unit_scale,
                                                                axis_up, axis_forward)
        if why:
            info.notes.append(note)
        info.floor = floor_lift(skeleton, root_pos, local_rot, local_pos, floor)
    except ValueError as exc:  # an axis or floor setting that is not one
        raise MotionFileError(path, str(exc)) from None
    root_pos[:, 2] += info.floor
    if floor == "auto":
        info.detected.add("floor")
    fps = 1.0 / frame_time
    if abs(fps - round(fps)) < 1e-3 * fps:
        fps = float(round(fps))  # "Frame Time: .0083333" means 120 fps
    clip_name = name or os.path.splitext(os.path.basename(path))[0]
    return Clip(clip_name, skeleton, fps, root_pos, local_rot, local_pos, source=path), info


def parse_bvh(data: bytes, path: str = "<memory>", unit_scale: float | None = None, name: str | None = None,
              axis_forward: str | None = None, axis_up: str | None = None, floor: str = "keep") -> Clip:
    """A Clip from the bytes of a BVH file (see ``parse_bvh_oriented``)."""
    return parse_bvh_oriented(data, path, unit_scale, name, axis_forward, axis_up, floor)[0]


def _to_motion(names, parents, offsets_file, channels, end_parent, end_offsets_file, values):
    """Channel values [F, C] -> skeleton, root positions, local rotations and positions, in the
    file's own axes and units (``motionctl.io.orient`` converts them)."""
    skeleton = Skeleton(names, parents, offsets_file, channels, end_parent, end_offsets_file, 1.0)
    n_frames, n_joints = len(values), len(names)
    local_rot = quat.identity((n_frames, n_joints))
    trans = np.broadcast_to(offsets_file, (n_frames, n_joints, 3)).copy()
    has_pos = np.zeros(n_joints, dtype=bool)
    col = 0
    by_order: dict[str, tuple[list, list]] = {}  # Euler order -> (joints, their value columns)
    for j, chans in enumerate(channels):
        rot_axes = "".join(c[0] for c in chans if c in ROT_CHANNELS)
        for k, c in enumerate(chans):
            if c in POS_CHANNELS:
                trans[:, j, "XYZ".index(c[0])] = values[:, col + k]
                has_pos[j] = True
        if rot_axes:
            joints, cols = by_order.setdefault(rot_axes, ([], []))
            joints.append(j)
            cols.append([col + k for k, c in enumerate(chans) if c in ROT_CHANNELS])
        col += len(chans)
    for order, (joints, cols) in by_order.items():  # one call per Euler order, all joints at once
        local_rot[:, joints] = quat.from_euler(np.radians(values[:, np.array(cols)]), order)
    root_pos = trans[:, 0].copy()
    local_pos = trans if has_pos[1:].any() else None
    return skeleton, root_pos, local_rot, local_pos


def read_bvh_oriented(path, unit_scale: float | None = None, tags: bool = True, axis_forward: str | None = None,
                      axis_up: str | None = None, floor: str = "keep",
                      fold_roots: bool = True) -> tuple[Clip, Orientation]:
    """Read a BVH file into a Clip (Z up, metres) and its Orientation; tags from a sidecar JSON
    (its tags or description) or the file name."""
    path = os.fspath(path)
    clip, info = parse_bvh_oriented(read_bytes(path), path, unit_scale, axis_forward=axis_forward, axis_up=axis_up,
                                    floor=floor, fold_roots=fold_roots)
    return (apply_tags(clip, path) if tags else clip), info


def read_bvh(path, unit_scale: float | None = None, tags: bool = True, axis_forward: str | None = None,
             axis_up: str | None = None, floor: str = "keep", fold_roots: bool = True) -> Clip:
    """Read a BVH file into a Clip (see ``read_bvh_oriented``)."""
    return read_bvh_oriented(path, unit_scale, tags, axis_forward, axis_up, floor, fold_roots)[0]


# --------------------------------------------------------------------------- writing

def clip_channels(clip: Clip, unit_scale: float | None = None, axis_forward: str = "-Z",
                  axis_up: str = "Y") -> np.ndarray:
    """[F, C] BVH channel values of a clip in the skeleton's channel layout (file units, degrees),
    in a file whose axes are ``axis_forward`` / ``axis_up`` (BVH's usual -Z / Y by default).

    Euler angles are made continuous over time (each frame picks the equivalent triple nearest
    the previous one), so written curves have no 360-degree jumps.
    """
    sk = clip.skeleton
    scale = sk.unit_scale if unit_scale is None else unit_scale
    conv = axis_conversion(axis_forward, axis_up)  # file -> motionctl
    back = conv.T
    q = quat.from_matrix(conv)
    rot_file = quat.mul(quat.mul(quat.conj(q), clip.local_rot), q)
    if clip.local_pos is not None:
        trans = clip.local_pos.copy()
    else:
        trans = np.broadcast_to(sk.offsets, (clip.n_frames, sk.n_joints, 3)).copy()
    trans[:, 0] = clip.root_pos
    trans_file = trans @ back.T / scale
    cols = []
    for j, chans in enumerate(sk.channels):
        rot_axes = "".join(c[0] for c in chans if c in ROT_CHANNELS)
        eul = None
        if rot_axes:
            full = rot_axes + "".join(a for a in "XYZ" if a not in rot_axes)
            eul = _continuous_euler(quat.to_euler(rot_file[:, j], full))
        for c in chans:
            if c in POS_CHANNELS:
                cols.append(trans_file[:, j, "XYZ".index(c[0])])
            else:
                cols.append(np.degrees(eul[:, rot_axes.index(c[0])]))
    return np.stack(cols, axis=1) if cols else np.zeros((clip.n_frames, 0))


def _continuous_euler(eul: np.ndarray) -> np.ndarray:
    """Choose, per frame, between the two equivalent Tait-Bryan triples and 2*pi shifts so the
    angles move as little as possible from frame to frame."""
    if len(eul) < 2:
        return eul
    alt = np.stack((eul[:, 0] + np.pi, np.pi - eul[:, 1], eul[:, 2] + np.pi), axis=1)
    alt = (alt + np.pi) % (2 * np.pi) - np.pi
    # Switching branch relative to the previous frame is symmetric in the two branches, so each
    # frame's decision is independent and a running parity gives the continuous choice.
    wrapped = lambda d: np.abs((d + np.pi) % (2 * np.pi) - np.pi)  # noqa: E731
    d_same = wrapped(np.diff(eul, axis=0)).sum(axis=1)
    d_swap = wrapped(alt[1:] - eul[:-1]).sum(axis=1)
    flip = np.concatenate(([False], d_swap + 1e-9 < d_same))
    parity = np.cumsum(flip) % 2 == 1
    chosen = np.where(parity[:, None], alt, eul)
    return np.unwrap(chosen, axis=0)


def format_bvh(clip: Clip, unit_scale: float | None = None, precision: int | None = None, axis_forward: str = "-Z",
               axis_up: str = "Y") -> str:
    """The text of a BVH file for ``clip`` (see ``write_bvh``)."""
    sk = clip.skeleton
    scale = sk.unit_scale if unit_scale is None else unit_scale
    back = axis_conversion(axis_forward, axis_up).T
    offs = sk.offsets @ back.T / scale
    ends = sk.end_offsets @ back.T / scale
    if precision is None:  # decimals enough for 1e-8 m in any unit (at least 6): metres keep what centimetres do
        precision = max(6, int(np.ceil(np.log10(scale) + 8 - 1e-9)))
    fmt = f"%.{precision}f"
    out = ["HIERARCHY"]

    def vec(v):
        return " ".join(fmt % x for x in v)

    def write(j, depth):
        pad = "\t" * depth
        out.append(f"{pad}{'ROOT' if j == 0 else 'JOINT'} {sk.names[j]}")
        out.append(pad + "{")
        out.append(f"{pad}\tOFFSET {vec(offs[j])}")
        out.append(f"{pad}\tCHANNELS {len(sk.channels[j])}" + "".join(" " + c for c in sk.channels[j]))
        for k in sk.children(j):
            write(int(k), depth + 1)
        for e in np.flatnonzero(sk.end_parent == j):
            out.append(f"{pad}\tEnd Site")
            out.append(pad + "\t{")
            out.append(f"{pad}\t\tOFFSET {vec(ends[e])}")
            out.append(pad + "\t}")
        out.append(pad + "}")

    write(0, 0)
    values = clip_channels(clip, scale, axis_forward, axis_up)
    out.append("MOTION")
    out.append(f"Frames: {clip.n_frames}")
    out.append(f"Frame Time: {1.0 / clip.fps:.8f}")
    body = "\n".join(out) + "\n"
    # One C-level formatting call for the whole block (no per-frame Python loop).
    row = " ".join([fmt] * values.shape[1]) + "\n"
    return body + (row * clip.n_frames) % tuple(values.ravel().tolist())


def write_bvh(clip: Clip, path, unit_scale: float | None = None, precision: int | None = None,
              axis_forward: str = "-Z", axis_up: str = "Y") -> None:
    """Write a clip as BVH (Y up unless told otherwise, the skeleton's file units and channel
    layout; ``precision`` decimals, by default enough for 1e-8 m, at least 6); atomic."""
    path = os.fspath(path)
    text = format_bvh(clip, unit_scale, precision, axis_forward, axis_up)
    with atomic_file(path, "w", encoding="ascii", newline="\n") as fh:
        fh.write(text)
