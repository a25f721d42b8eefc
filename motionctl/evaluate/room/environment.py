"""Environments for evaluation (paper 004): rooms of annotated obstacles, read from JSON or made at
random, and rasterised onto the grid the graph is embedded in.

An obstacle is a wall (stops everything), a chasm (crossable only by the airborne part of a jump),
a low obstacle (jump or step over) or a region where only some motion types may be used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ...errors import MotionFileError, MotionctlError
from ...store import read_json
from ...tags import JUMPS, STEP_OVER, canonical_set


WALL, CHASM, LOW = 1, 2, 4
KINDS = {"wall": WALL, "chasm": CHASM, "low": LOW}
JUMP_TYPES = JUMPS  # may cross chasms
STEP_TYPES = STEP_OVER  # may cross low obstacles


# ----------------------------------------------------------------------------- environment

@dataclass
class Obstacle:
    """A polygon (points [K, 2]) or circle (centre, radius); kind wall | chasm | low | region.
    A region restricts motion types: ``allow`` (only these) or ``forbid`` (not these)."""

    kind: str
    points: np.ndarray | None = None
    centre: tuple | None = None
    radius: float = 0.0
    allow: tuple = ()
    forbid: tuple = ()

    def distance(self, p: np.ndarray) -> np.ndarray:
        """Distance from points [N, 2] to the shape (0 inside); a polygon's in blocks of points
        (each block holds points x edges numbers: memory stays bounded whatever the polygon)."""
        if self.points is None:
            return np.maximum(np.linalg.norm(p - np.asarray(self.centre), axis=1) - self.radius, 0.0)
        poly = np.asarray(self.points, dtype=float)
        step = max(1, BLOCK_PAIRS // len(poly))
        if len(p) <= step:
            return self._polygon_distance(p, poly)
        return np.concatenate([self._polygon_distance(p[i:i + step], poly) for i in range(0, len(p), step)])

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """(lowest x, y; highest x, y) of the shape."""
        if self.points is None:
            c = np.asarray(self.centre, dtype=float)
            return c - self.radius, c + self.radius
        poly = np.asarray(self.points, dtype=float)
        return poly.min(axis=0), poly.max(axis=0)

    @staticmethod
    def _polygon_distance(p: np.ndarray, poly: np.ndarray) -> np.ndarray:
        a, b = poly, np.roll(poly, -1, axis=0)
        ab = b - a
        t = np.clip(np.einsum("nkd,kd->nk", p[:, None] - a[None], ab) / np.maximum((ab**2).sum(1), 1e-12), 0, 1)
        d = np.linalg.norm(p[:, None] - (a[None] + t[..., None] * ab[None]), axis=2).min(axis=1)
        # Inside test (even-odd rule).
        x, y = p[:, 0:1], p[:, 1:2]
        cond = (a[None, :, 1] > y) != (b[None, :, 1] > y)
        # Where an edge straddles y its share r of the way there lies in [0, 1] (no overflow on near-flat edges).
        r = np.divide(y - a[None, :, 1], np.broadcast_to(ab[None, :, 1], cond.shape), out=np.zeros(cond.shape),
                      where=cond)
        xint = a[None, :, 0] + r * ab[None, :, 0]
        inside = (np.count_nonzero(cond & (x < xint), axis=1) % 2) == 1
        return np.where(inside, 0.0, d)


@dataclass
class Environment:
    """bounds (xmin, ymin, xmax, ymax) in metres; obstacles; walls enclose the bounds."""

    bounds: tuple
    obstacles: list = field(default_factory=list)
    name: str = "environment"

    def area(self) -> float:
        x0, y0, x1, y1 = self.bounds
        return float((x1 - x0) * (y1 - y0))


def read_environment(path) -> Environment:
    """JSON: {"bounds": [xmin, ymin, xmax, ymax], "obstacles": [{"kind": "wall", "polygon":
    [[x, y], ...]} or {"kind": "chasm", "circle": [x, y, r]} or {"kind": "region", "polygon":
    ..., "allow": ["sneak"]}]}; errors name the file and the obstacle."""
    path = os.fspath(path)
    data = read_json(path)
    try:
        return environment_from_dict(data, os.path.splitext(os.path.basename(path))[0])
    except MotionctlError as exc:
        raise MotionFileError(path, str(exc)) from None


MAX_ROOM = 200.0  # metres on a side: larger rooms need more memory than one machine gives the embedding
MAX_POINTS = 10000  # points of one obstacle's polygon
MAX_OBSTACLES = 1000  # obstacles in one room
BLOCK_PAIRS = 1 << 20  # points x polygon edges measured at once (tens of MB)
MAX_RASTER_PAIRS = 3e8  # cell x edge tests rasterising a room may take (a few seconds)
MAX_COORD = 10_000.0  # metres: an obstacle's points, centre and radius lie within this of the origin


def _numbers(value, count, where, what, most: float | None = None) -> list:
    """``count`` finite numbers (each within ±``most``), or MotionctlError naming ``where``."""
    ok = isinstance(value, (list, tuple)) and len(value) == count and \
        all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    if not ok or not all(np.isfinite(v) for v in value):
        raise MotionctlError(f"{where}: {what} must be {count} finite numbers, got {value!r}")
    if most is not None and any(abs(v) > most for v in value):
        raise MotionctlError(f"{where}: {what} must lie within {most:g} m of the origin, got {value!r} (a room's grid "
                             "is cut from these in whole cells: 1e30 m overflowed it)")
    return [float(v) for v in value]


def _types(value, where, key) -> tuple:
    """Motion types of a region's allow/forbid: a word or a list of words."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise MotionctlError(f"{where}: {key!r} must be a list of motion types like [\"sneak\"], got {value!r}")
    return tuple(v.strip() for v in value)


def environment_to_dict(env: Environment) -> dict:
    """The room as the JSON ``environment_from_dict`` (and ``read_environment``) reads."""
    obstacles = []
    for o in env.obstacles:
        d = {"kind": o.kind}
        if o.points is not None:
            d["polygon"] = np.asarray(o.points, dtype=float).tolist()
        else:
            d["circle"] = [float(o.centre[0]), float(o.centre[1]), float(o.radius)]
        if o.allow:
            d["allow"] = list(o.allow)
        if o.forbid:
            d["forbid"] = list(o.forbid)
        obstacles.append(d)
    return {"bounds": [float(b) for b in env.bounds], "obstacles": obstacles, "name": env.name}


def environment_from_dict(data, name="environment") -> Environment:
    """An Environment from JSON data; every problem is a MotionctlError naming the field."""
    if not isinstance(data, dict) or "bounds" not in data:
        raise MotionctlError('expected {"bounds": [xmin, ymin, xmax, ymax], "obstacles": [...]}')
    b = _numbers(data["bounds"], 4, "bounds", "[xmin, ymin, xmax, ymax]")
    if b[2] <= b[0] or b[3] <= b[1]:
        raise MotionctlError(f"bounds: min must be below max, got {data['bounds']!r}")
    if max(b[2] - b[0], b[3] - b[1]) > MAX_ROOM:
        raise MotionctlError(f"bounds: a room of {b[2] - b[0]:g} x {b[3] - b[1]:g} m is larger than {MAX_ROOM:g} m on "
                             "a side; split it into rooms or use a coarser cell")
    items = data.get("obstacles", [])
    if not isinstance(items, list):
        raise MotionctlError(f"obstacles: expected a list of obstacles, got {items!r}")
    if len(items) > MAX_OBSTACLES:  # each is rasterised over the whole grid (34,000 took 24 s)
        raise MotionctlError(f"obstacles: {len(items):,} obstacles are more than {MAX_OBSTACLES:,}; merge them")
    obstacles = []
    for i, o in enumerate(items):
        where = f"obstacles[{i}]"
        if not isinstance(o, dict):
            raise MotionctlError(f"{where}: expected an object")
        kind = o.get("kind", "wall")
        if kind not in ("wall", "chasm", "low", "region"):
            raise MotionctlError(f"{where}: unknown kind {kind!r} (wall, chasm, low or region)")
        if "polygon" in o:
            pts = o["polygon"]
            if not isinstance(pts, list) or len(pts) < 3:
                raise MotionctlError(f"{where}: a polygon needs at least 3 [x, y] points")
            if len(pts) > MAX_POINTS:  # rasterising a million-point polygon asked for 37 GiB
                raise MotionctlError(f"{where}: a polygon of {len(pts):,} points is more than {MAX_POINTS:,}; "
                                     "simplify it")
            ob = Obstacle(kind, points=np.array([_numbers(p, 2, where, "a polygon point", MAX_COORD) for p in pts]))
        elif "circle" in o:
            x, y, r = _numbers(o["circle"], 3, where, "a circle [x, y, radius]", MAX_COORD)
            if not r > 0:
                raise MotionctlError(f"{where}: a circle's radius must be positive, got {r:g}")
            ob = Obstacle(kind, centre=(x, y), radius=r)
        else:
            raise MotionctlError(f"{where}: needs a 'polygon' or a 'circle'")
        ob.allow, ob.forbid = _types(o.get("allow"), where, "allow"), _types(o.get("forbid"), where, "forbid")
        if kind == "region" and not (ob.allow or ob.forbid):
            raise MotionctlError(f"{where}: a region needs 'allow' or 'forbid' motion types")
        obstacles.append(ob)
    return Environment(tuple(b), obstacles, name)


def random_environment(width: float, depth: float, clutter: float, seed: int = 0, chasm: bool = False) -> Environment:
    """A room with random boxes and pillars covering about ``clutter`` of its area."""
    rng = np.random.default_rng(seed)
    obstacles, covered = [], 0.0
    area = width * depth
    while covered < clutter * area:
        if rng.random() < 0.6:
            w, h = rng.uniform(0.4, 2.0, 2)
            x, y = rng.uniform(0, width - w), rng.uniform(0, depth - h)
            obstacles.append(Obstacle("wall", points=np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])))
            covered += w * h
        else:
            r = rng.uniform(0.2, 0.6)
            obstacles.append(Obstacle("wall", centre=(rng.uniform(r, width - r), rng.uniform(r, depth - r)), radius=r))
            covered += np.pi * r * r
    if chasm:
        y = depth * 0.7
        obstacles.append(Obstacle("chasm", points=np.array([[0, y], [width, y], [width, y + 0.5], [0, y + 0.5]])))
    return Environment((0.0, 0.0, width, depth), obstacles, f"random_{width:g}x{depth:g}_{clutter:g}")


@dataclass
class Grid:
    """Rasterised environment: ``bits`` [nx, ny] per cell (WALL/CHASM/LOW, region bits from 8 up)
    with the character's radius already added; cell (i, j) is centred at origin + (i + ½, j + ½)·cell."""

    origin: np.ndarray
    cell: float
    headings: int
    bits: np.ndarray
    regions: list  # [(bit, allow, forbid)]

    @property
    def shape(self):
        return self.bits.shape

    def centres(self) -> np.ndarray:
        """[nx, ny, 2] world centres of the grid cells."""
        nx, ny = self.shape
        ix, iy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
        return np.stack((ix, iy), -1) * self.cell + self.origin + self.cell / 2

    def free(self) -> np.ndarray:
        """Cells a character can stand in (no wall, chasm or low obstacle)."""
        return (self.bits & (WALL | CHASM | LOW)) == 0


def rasterise(env: Environment, cell: float = 0.2, headings: int = 18, radius: float = 0.25) -> Grid:
    """The environment on a grid of ``cell`` metres: obstacles widened by the character's ``radius``, regions
    as bits."""
    x0, y0, x1, y1 = env.bounds
    nx, ny = int(np.ceil((x1 - x0) / cell)), int(np.ceil((y1 - y0) / cell))
    if nx < 1 or ny < 1:
        raise MotionctlError("environment bounds are smaller than one grid cell")
    grid = Grid(np.array([x0, y0]), cell, headings, np.zeros((nx, ny), dtype=np.int64), [])
    centres = grid.centres()
    # The room's own walls.
    edge = np.minimum.reduce([centres[..., 0] - x0, x1 - centres[..., 0], centres[..., 1] - y0, y1 - centres[..., 1]])
    bits = np.where(edge < radius, WALL, 0)
    work = 0
    for ob in env.obstacles:  # each over the cells of its box widened by the radius: a slice of the grid
        lo, hi = ob.box()
        (i0, j0), (i1, j1) = (np.clip(np.floor((c - grid.origin) / cell).astype(int) + pad, 0, (nx, ny))
                              for c, pad in ((lo - radius, -1), (hi + radius, 2)))
        cells = centres[i0:i1, j0:j1].reshape(-1, 2)
        work += len(cells) * (1 if ob.points is None else len(ob.points))
        if work > MAX_RASTER_PAIRS:
            raise MotionctlError(f"the room's obstacles are too detailed for a {cell:g} m grid (over "
                                 f"{MAX_RASTER_PAIRS:.0e} cell-edge tests): simplify their polygons or use fewer")
        d = ob.distance(cells).reshape(i1 - i0, j1 - j0)
        if ob.kind == "region":
            bit = 8 << len(grid.regions)
            grid.regions.append((bit, canonical_set(ob.allow), canonical_set(ob.forbid)))
            bits[i0:i1, j0:j1] |= np.where(d <= 0, bit, 0)
        else:
            bits[i0:i1, j0:j1] |= np.where(d < radius, KINDS[ob.kind], 0)
    grid.bits = bits
    return grid
