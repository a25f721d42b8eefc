"""What a motion graph can do in an environment (paper 004: Reitsma & Pollard 2007).

The environment is a 2-D map of annotated obstacles rasterised on a grid (0.2 m cells, 18 heading
bins, the character a 0.25 m disc).  A grid node is (x, y, heading bin, clip that brought the
character there); an edge plays a successor clip edited to end on any grid point inside its
footprint (Appendix A: an ellipsoid growing with the clip's arc length and duration) along a path
that respects the obstacles.  Footprint offsets and swept cells are precomputed per (heading bin,
clip), so testing an edge is a few array look-ups into the occupancy bitmap.  The strongly
connected component is found by the flood algorithm of section 4.2 on bit arrays with edges made
on demand (forward from a seed, then backward within what was reached), vectorised over whole
frontiers; selective actions are added by the augmented SCC of section 4.5.  Metrics (section 5):
coverage, per-action coverage, path and action efficiency (shortest paths in the embedded graph
against a reference grid path, Monte-Carlo pairs 4-7 m apart), local maneuverability.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import dijkstra

from . import quat
from .errors import MotionFileError
from .graph import ACTION_TYPES, MotionGraph
from .motion import Clip
from .jobs import check_stop, parallel_map
from .tags import JUMPS, STEP_OVER, canonical_set

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
        """Distance from points [N, 2] to the shape (0 inside)."""
        if self.points is None:
            return np.maximum(np.linalg.norm(p - np.asarray(self.centre), axis=1) - self.radius, 0.0)
        poly = np.asarray(self.points, dtype=float)
        a, b = poly, np.roll(poly, -1, axis=0)
        ab = b - a
        t = np.clip(np.einsum("nkd,kd->nk", p[:, None] - a[None], ab) / np.maximum((ab**2).sum(1), 1e-12), 0, 1)
        d = np.linalg.norm(p[:, None] - (a[None] + t[..., None] * ab[None]), axis=2).min(axis=1)
        # Inside test (even-odd rule).
        x, y = p[:, 0:1], p[:, 1:2]
        cond = (a[None, :, 1] > y) != (b[None, :, 1] > y)
        xint = a[None, :, 0] + (y - a[None, :, 1]) * ab[None, :, 0] / np.where(ab[None, :, 1] == 0, 1e-12, ab[None, :, 1])
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
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise MotionFileError(path, f"cannot read environment: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise MotionFileError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
    try:
        return environment_from_dict(data, os.path.splitext(os.path.basename(path))[0])
    except ValueError as exc:
        raise MotionFileError(path, str(exc)) from None


def environment_from_dict(data, name="environment") -> Environment:
    if not isinstance(data, dict) or "bounds" not in data:
        raise ValueError('expected {"bounds": [xmin, ymin, xmax, ymax], "obstacles": [...]}')
    b = data["bounds"]
    if not (isinstance(b, list) and len(b) == 4 and all(isinstance(v, (int, float)) for v in b)) or b[2] <= b[0] or b[3] <= b[1]:
        raise ValueError(f"bounds must be [xmin, ymin, xmax, ymax] with min < max, got {b!r}")
    obstacles = []
    for i, o in enumerate(data.get("obstacles", [])):
        where = f"obstacle {i}"
        if not isinstance(o, dict):
            raise ValueError(f"{where}: expected an object")
        kind = o.get("kind", "wall")
        if kind not in ("wall", "chasm", "low", "region"):
            raise ValueError(f"{where}: unknown kind {kind!r} (wall, chasm, low or region)")
        if "polygon" in o:
            pts = np.asarray(o["polygon"], dtype=float)
            if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 3 or not np.all(np.isfinite(pts)):
                raise ValueError(f"{where}: a polygon needs at least 3 [x, y] points")
            ob = Obstacle(kind, points=pts)
        elif "circle" in o:
            c = o["circle"]
            if not (isinstance(c, list) and len(c) == 3) or not c[2] > 0:
                raise ValueError(f"{where}: a circle is [x, y, radius] with radius > 0")
            ob = Obstacle(kind, centre=(float(c[0]), float(c[1])), radius=float(c[2]))
        else:
            raise ValueError(f"{where}: needs a 'polygon' or a 'circle'")
        ob.allow, ob.forbid = tuple(o.get("allow", ())), tuple(o.get("forbid", ()))
        if kind == "region" and not (ob.allow or ob.forbid):
            raise ValueError(f"{where}: a region needs 'allow' or 'forbid' motion types")
        obstacles.append(ob)
    return Environment(tuple(float(v) for v in b), obstacles, name)


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
        nx, ny = self.shape
        ix, iy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
        return np.stack((ix, iy), -1) * self.cell + self.origin + self.cell / 2

    def free(self) -> np.ndarray:
        """Cells a character can stand in (no wall, chasm or low obstacle)."""
        return (self.bits & (WALL | CHASM | LOW)) == 0


def rasterise(env: Environment, cell: float = 0.2, headings: int = 18, radius: float = 0.25) -> Grid:
    x0, y0, x1, y1 = env.bounds
    nx, ny = int(np.ceil((x1 - x0) / cell)), int(np.ceil((y1 - y0) / cell))
    if nx < 1 or ny < 1:
        raise ValueError("environment bounds are smaller than one grid cell")
    grid = Grid(np.array([x0, y0]), cell, headings, np.zeros((nx, ny), dtype=np.int64), [])
    pts = grid.centres().reshape(-1, 2)
    # The room's own walls.
    edge = np.minimum.reduce([pts[:, 0] - x0, x1 - pts[:, 0], pts[:, 1] - y0, y1 - pts[:, 1]])
    bits = np.where(edge < radius, WALL, 0)
    for ob in env.obstacles:
        near = ob.distance(pts) < (radius if ob.kind != "region" else 1e-9)
        if ob.kind == "region":
            bit = 8 << len(grid.regions)
            grid.regions.append((bit, canonical_set(ob.allow), canonical_set(ob.forbid)))
            bits = bits | np.where(ob.distance(pts) <= 0, bit, 0)
        else:
            bits = bits | np.where(near, KINDS[ob.kind], 0)
    grid.bits = bits.reshape(nx, ny)
    return grid


# ----------------------------------------------------------------------------- footprints

@dataclass
class EditModel:
    """Appendix A: the end of a clip may move within (s + α d) · (r_x, r_y, r_θ) of where it
    would land, s its arc length (m) and d its duration (s)."""

    r_x: float = 0.1
    r_y: float = 0.1
    r_theta: float = 0.15
    alpha: float = 1.0
    scale: float = 1.0  # the paper's "edit size" (1.0 = 100%)


@dataclass(eq=False)
class Footprints:
    """Per (start heading bin h, clip c): grid offsets (dx, dy, dh) of every reachable end grid
    point, and the cells each edited path sweeps (relative to the start cell)."""

    offsets: list  # [h][c] -> int [K, 3]
    swept: list  # [h][c] -> int [K, S, 2] (padded by repeating the last cell)
    cost: list  # [h][c] -> float [K]: arc length of the edited path (m)
    rev: list  # [h'][c] -> int [R, 4]: (start h, dx, dy, k) of starts whose footprint hits h'


def path_length(path: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1).sum())


def footprints(graph: MotionGraph, grid: Grid, edit: EditModel) -> Footprints:
    H, cell = grid.headings, grid.cell
    hb = 2 * np.pi / H
    offsets = [[None] * graph.n for _ in range(H)]
    swept = [[None] * graph.n for _ in range(H)]
    costs = [[None] * graph.n for _ in range(H)]
    rev = [[[] for _ in range(graph.n)] for _ in range(H)]
    for c in range(graph.n):
        path = graph.root_paths[c]
        end = path[-1]
        s = path_length(path)
        d = graph.duration[c]
        radii = edit.scale * (s + edit.alpha * d) * np.array([edit.r_x, edit.r_y, edit.r_theta])
        seg = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1))))
        frac = (seg + edit.alpha * np.linspace(0, d, len(path))) / max(s + edit.alpha * d, 1e-9)
        for h in range(H):
            th = h * hb
            # Clip frame -> world: local x right, y forward; heading th faces (-sin th, cos th).
            rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
            nat = rot @ end[:2]
            reach = max(radii[0], radii[1]) + cell
            lo = np.floor((nat - reach) / cell).astype(int)
            hi = np.ceil((nat + reach) / cell).astype(int)
            gx, gy = np.meshgrid(np.arange(lo[0], hi[0] + 1), np.arange(lo[1], hi[1] + 1), indexing="ij")
            cand = np.column_stack((gx.ravel(), gy.ravel()))
            dpos = rot.T @ (cand * cell - nat).T  # in the clip's start frame
            dh_nat = end[2] / hb
            dhs = np.arange(int(np.floor(dh_nat - radii[2] / hb)) - 1, int(np.ceil(dh_nat + radii[2] / hb)) + 2)
            dth = dhs * hb - end[2]
            e = (dpos[0][:, None] / max(radii[0], 1e-9)) ** 2 + (dpos[1][:, None] / max(radii[1], 1e-9)) ** 2 + \
                (dth[None, :] / max(radii[2], 1e-9)) ** 2
            ci, hi_ = np.nonzero(e <= 1.0)
            off = np.column_stack((cand[ci], dhs[hi_]))
            offsets[h][c] = off.astype(np.int64)
            # Edited paths (eq. 16): each frame moved by its share of the end correction.
            corr = off[:, :2] * cell - nat  # [K, 2] world correction of the end
            pts = (rot @ path[:, :2].T).T  # [n, 2] natural path, world-aligned
            edited = pts[None] + frac[None, :, None] * corr[:, None, :]
            cells = np.floor(edited / cell + 0.5).astype(np.int64)  # start cell centre at 0
            swept[h][c] = cells
            costs[h][c] = np.linalg.norm(np.diff(edited, axis=1), axis=2).sum(axis=1)
            for k, (dx, dy, dh) in enumerate(off.tolist()):
                rev[(h + dh) % H][c].append((h, dx, dy, k))
    rev = [[np.array(r, dtype=np.int64).reshape(-1, 4) for r in row] for row in rev]
    return Footprints(offsets, swept, costs, rev)


# ----------------------------------------------------------------------------- embedding

@dataclass(eq=False)
class Embedding:
    """The embedded graph: bit arrays over all grid nodes (x, y, heading, clip)."""

    graph: MotionGraph
    grid: Grid
    fp: Footprints
    scc: np.ndarray  # bool [nx, ny, H, C]
    forbidden: np.ndarray  # int [C]: cell bits each clip may not touch
    selective: np.ndarray  # bool [C]
    stats: dict = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return int(self.scc.sum())


def clip_permissions(graph: MotionGraph, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    """(forbidden cell bits per clip, selective per clip).  Walls stop everything; chasms only
    jumps; low obstacles jumps and steps; regions their disallowed types.  Actions (pick, duck,
    kick, punch...) are selective: optional, never needed to connect the environment."""
    forbid = np.zeros(graph.n, dtype=np.int64)
    selective = np.zeros(graph.n, dtype=bool)
    for c in range(graph.n):
        types = canonical_set(graph.types[c])
        if graph.actions[c] is not None:
            types.add(graph.actions[c][0])
        f = WALL
        if not types & JUMP_TYPES:
            f |= CHASM
        if not types & STEP_TYPES:
            f |= LOW
        for bit, allow, deny in grid.regions:
            if (allow and not types & allow) or (types & deny):
                f |= bit
        forbid[c] = f
        # Only the clip holding the action instance is selective; the rest of a "walk, kick" take is locomotion.
        selective[c] = bool(graph.actions[c] is not None and graph.actions[c][0] in ACTION_TYPES and
                            graph.actions[c][0] not in JUMP_TYPES)
    return forbid, selective


class Expander:
    """Edges made on demand, vectorised over many nodes at once."""

    def __init__(self, graph: MotionGraph, grid: Grid, fp: Footprints, forbidden: np.ndarray):
        self.graph, self.grid, self.fp, self.forbidden = graph, grid, fp, forbidden
        self.H, self.C = grid.headings, graph.n
        nx, ny = grid.shape
        self.shape = (nx, ny, self.H, self.C)
        succ = graph.successors()
        self.succ_ptr = np.r_[0, np.cumsum([len(s) for s in succ])]
        self.succ = np.array([x for s in succ for x in s], dtype=np.int64)
        pred = [[] for _ in range(graph.n)]
        for a, b in graph.edges.tolist():
            pred[b].append(a)
        self.pred_ptr = np.r_[0, np.cumsum([len(p) for p in pred])]
        self.pred = np.array([x for p in pred for x in p], dtype=np.int64)
        # Flatten footprints: table index (h, c) -> rows of a big offset table.  Each edited
        # path keeps only its distinct cells (in order), padded by repeating the last one.
        rows, swept, costs = [], [], []
        start = np.zeros((self.H, self.C + 1), dtype=np.int64)
        distinct = [[_distinct_cells(fp.swept[h][c]) for c in range(self.C)] for h in range(self.H)]
        smax = max(max((len(p) for p in d), default=1) for row in distinct for d in row)
        n = 0
        for h in range(self.H):
            for c in range(self.C):
                start[h, c] = n
                rows.append(fp.offsets[h][c])
                sw = np.zeros((len(fp.offsets[h][c]), smax, 2), dtype=np.int64)
                for k, cells in enumerate(distinct[h][c]):
                    sw[k, :len(cells)] = cells
                    sw[k, len(cells):] = cells[-1]
                swept.append(sw)
                costs.append(fp.cost[h][c])
                n += len(fp.offsets[h][c])
            start[h, self.C] = n
        self.fp_start = start
        self.fp_count = np.array([[len(fp.offsets[h][c]) for c in range(self.C)] for h in range(self.H)])
        self.off = np.concatenate(rows)
        self.sw = np.concatenate(swept)
        self.cost = np.concatenate(costs)
        # Reverse footprints flattened the same way: (target heading, clip) -> (start h, dx, dy, k).
        rev_rows, rstart = [], np.zeros((self.H, self.C + 1), dtype=np.int64)
        n = 0
        for h in range(self.H):
            for c in range(self.C):
                rstart[h, c] = n
                rev_rows.append(fp.rev[h][c])
                n += len(fp.rev[h][c])
            rstart[h, self.C] = n
        self.rev_start = rstart
        self.rev_count = np.diff(rstart, axis=1)
        self.rev = np.concatenate(rev_rows) if n else np.zeros((0, 4), dtype=np.int64)
        self.pad = int(max(np.abs(self.sw).max(initial=0), np.abs(self.off[:, :2]).max(initial=0))) + 2
        padded = np.full((nx + 2 * self.pad, ny + 2 * self.pad), WALL, dtype=np.int64)  # outside = wall
        padded[self.pad:self.pad + nx, self.pad:self.pad + ny] = grid.bits
        self.bits = padded.ravel()
        self.width = padded.shape[1]
        self.node_ok = (grid.bits[:, :, None] & forbidden[None, None, :]) == 0  # [nx, ny, C]
        # Swept cells as flat offsets into the padded bitmap.
        self.sw_flat = self.sw[..., 0] * self.width + self.sw[..., 1]
        # Which edit rows are clear of what their clip may not touch, from every cell: one bool
        # per (cell, row), built in blocks; edges then look their path up instead of its cells.
        row_clip = np.concatenate([np.full(self.fp_count[h, c], c, dtype=np.int64)
                                   for h in range(self.H) for c in range(self.C)])
        forb = forbidden[row_clip]
        gx, gy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
        base = ((gx + self.pad) * self.width + (gy + self.pad)).ravel()
        n_rows, n_sw = self.sw_flat.shape
        self.path_ok = np.zeros((nx * ny, n_rows), dtype=bool)
        block = max(1, (1 << 23) // max(1, n_rows * n_sw))
        for i in range(0, len(base), block):
            cells = self.bits[base[i:i + block, None, None] + self.sw_flat[None]]  # [B, rows, S]
            self.path_ok[i:i + block] = ~np.any(cells & forb[None, :, None], axis=2)

    def decode(self, ids):
        return np.unravel_index(ids, self.shape)

    def encode(self, x, y, h, c):
        return np.ravel_multi_index((x, y, h, c), self.shape)

    def valid_nodes(self) -> np.ndarray:
        return np.broadcast_to(self.node_ok[:, :, None, :], self.shape)

    def _paths_free(self, x, y, table_rows, clip):
        return self.path_ok[x * self.shape[1] + y, table_rows]

    def out_edges(self, ids: np.ndarray, allow=None):
        """(source index into ids, target node ids, table rows) of valid edges from nodes ``ids``;
        ``allow``: bool [C] of clips that may be played (None: all)."""
        x, y, h, c = self.decode(ids)
        n_succ = self.succ_ptr[c + 1] - self.succ_ptr[c]
        src = np.repeat(np.arange(len(ids)), n_succ)
        k = np.arange(n_succ.sum()) - np.repeat(np.cumsum(n_succ) - n_succ, n_succ)
        c2 = self.succ[self.succ_ptr[c][src] + k]
        if allow is not None:
            keep = allow[c2]
            src, c2 = src[keep], c2[keep]
        cnt = self.fp_count[h[src], c2]
        src2 = np.repeat(src, cnt)
        kk = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        rows = self.fp_start[h[src2], np.repeat(c2, cnt)] + kk
        clip = np.repeat(c2, cnt)
        off = self.off[rows]
        tx, ty = x[src2] + off[:, 0], y[src2] + off[:, 1]
        th = (h[src2] + off[:, 2]) % self.H
        nx, ny = self.shape[:2]
        inside = (tx >= 0) & (tx < nx) & (ty >= 0) & (ty < ny)
        src2, rows, clip, tx, ty, th = src2[inside], rows[inside], clip[inside], tx[inside], ty[inside], th[inside]
        ok = self.node_ok[tx, ty, clip] & self._paths_free(x[src2], y[src2], rows, clip)
        return src2[ok], self.encode(tx[ok], ty[ok], th[ok], clip[ok]), rows[ok]

    def in_edges(self, ids: np.ndarray, allow=None):
        """(target index into ids, source node ids) of valid edges into nodes ``ids``."""
        x, y, h, c = self.decode(ids)
        n_pred = self.pred_ptr[c + 1] - self.pred_ptr[c]
        tgt = np.repeat(np.arange(len(ids)), n_pred)
        k = np.arange(n_pred.sum()) - np.repeat(np.cumsum(n_pred) - n_pred, n_pred)
        c_prev = self.pred[self.pred_ptr[c][tgt] + k]
        if allow is not None:  # the clip played along the edge is c (the target's clip)
            keep = allow[c[tgt]]
            tgt, c_prev = tgt[keep], c_prev[keep]
        cnt = self.rev_count[h[tgt], c[tgt]]
        t2 = np.repeat(tgt, cnt)
        kk = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        rr = self.rev[np.repeat(self.rev_start[h[tgt], c[tgt]], cnt) + kk]  # (start h, dx, dy, k)
        cp = np.repeat(c_prev, cnt)
        sx, sy = x[t2] - rr[:, 1], y[t2] - rr[:, 2]
        nx, ny = self.shape[:2]
        inside = (sx >= 0) & (sx < nx) & (sy >= 0) & (sy < ny)
        t2, cp, rr, sx, sy = t2[inside], cp[inside], rr[inside], sx[inside], sy[inside]
        clip = c[t2]
        rows = self.fp_start[rr[:, 0], clip] + rr[:, 3]
        ok = self.node_ok[sx, sy, cp] & self._paths_free(sx, sy, rows, clip)
        return t2[ok], self.encode(sx[ok], sy[ok], rr[ok, 0], cp[ok])


def _distinct_cells(cells: np.ndarray) -> list:
    """Per edited path [K, n, 2], its distinct cells in order of first visit."""
    out = []
    for path in cells:
        keep = np.r_[True, np.any(path[1:] != path[:-1], axis=1)]
        p = path[keep]
        _, first = np.unique(p, axis=0, return_index=True)
        out.append(p[np.sort(first)])
    return out


def flood(exp: Expander, seeds: np.ndarray, forward: bool, within: np.ndarray | None = None, allow=None,
          chunk: int = 20000, should_stop=None) -> np.ndarray:
    """Breadth-first flood on bit arrays (section 4.2): every node reachable from (forward) or
    reaching (backward) the seeds, expanding only nodes in ``within`` if given.  Each pass expands
    the whole frontier at once, in chunks."""
    n = int(np.prod(exp.shape))
    reached = np.zeros(n, dtype=bool)
    seeds = np.asarray(seeds, dtype=np.int64)
    reached[seeds] = True
    frontier = seeds
    while len(frontier):
        check_stop(should_stop, "embedding")
        new = []
        for i in range(0, len(frontier), chunk):
            part = frontier[i:i + chunk]
            if forward:
                _, tgt, _ = exp.out_edges(part, allow)
            else:
                _, tgt = exp.in_edges(part, allow)
            if within is not None:
                tgt = tgt[within[tgt]]
            tgt = tgt[~reached[tgt]]
            reached[tgt] = True
            new.append(np.unique(tgt))
        frontier = np.concatenate(new) if new else np.zeros(0, dtype=np.int64)
    return reached


def strongly_connected(exp: Expander, seed: int, within: np.ndarray | None = None, allow=None,
                       should_stop=None) -> np.ndarray:
    fwd = flood(exp, np.array([seed]), True, within, allow, should_stop=should_stop)
    bwd = flood(exp, np.array([seed]), False, fwd, allow, should_stop=should_stop)
    return fwd & bwd


@dataclass
class EmbedSettings:
    cell: float = 0.2
    headings: int = 18
    radius: float = 0.25
    edit: EditModel = field(default_factory=EditModel)
    augment_depth: int = 3  # clips of the paths added from each selective action (section 4.5)
    seeds: int = 8  # random seeds tried for the backbone SCC
    seed: int = 0


def embed(graph: MotionGraph, env: Environment, settings: EmbedSettings | None = None, progress=None,
          should_stop=None) -> Embedding:
    """Embed the graph in the environment: backbone SCC of locomotion (jumps only where an
    obstacle needs them... here: jumps allowed, actions selective), then the augmented SCC."""
    s = settings or EmbedSettings()
    t0 = time.perf_counter()
    grid = rasterise(env, s.cell, s.headings, s.radius)
    fp = footprints(graph, grid, s.edit)
    forbidden, selective = clip_permissions(graph, grid)
    exp = Expander(graph, grid, fp, forbidden)
    if progress:
        progress(0.05, "footprints ready")
    valid = np.ascontiguousarray(exp.valid_nodes()).ravel()
    backbone = ~selective
    rng = np.random.default_rng(s.seed)
    candidates = np.flatnonzero(valid & np.broadcast_to(backbone[None, None, None, :], exp.shape).ravel())
    if len(candidates) == 0:
        raise ValueError("no grid node is free: the environment is too cluttered for the character")
    # First seed: the open cell farthest from obstacles, the best-connected locomotion clip.
    from scipy.ndimage import distance_transform_edt

    room = distance_transform_edt(grid.free())
    degree = np.bincount(graph.edges[:, 0], minlength=graph.n) + np.bincount(graph.edges[:, 1], minlength=graph.n)
    degree = np.where(backbone, degree, -1)
    ox, oy = np.unravel_index(np.argmax(room), room.shape)
    first_seed = int(exp.encode(ox, oy, 0, int(np.argmax(degree))))
    # Later seeds: random locomotion nodes in the more open half of the floor (a node boxed in
    # by obstacles is rarely in the big component).
    cx = exp.decode(candidates)[:2]
    open_ = room[cx] >= 0.5 * room.max()
    if open_.any():
        candidates = candidates[open_]
    best = None
    tried = 0
    for tried in range(1, 4 * s.seeds + 1):
        if tried > s.seeds and best.sum() >= 1000:
            break  # past the usual seeds only while nothing but tiny components turned up
        check_stop(should_stop, "embedding")
        seed = first_seed if tried == 1 and valid[first_seed] else int(rng.choice(candidates))
        scc = strongly_connected(exp, seed, allow=backbone, should_stop=should_stop)
        if best is None or scc.sum() > best.sum():
            best = scc
        if progress:
            progress(0.05 + 0.5 * min(tried, s.seeds) / s.seeds, f"backbone SCC {int(best.sum())} nodes (seed {tried})")
        if best.sum() > 0.1 * len(candidates):
            break
    scc = best
    backbone_nodes = int(scc.sum())
    # Augment with selective actions reached from the backbone, and short paths back.
    added = scc.copy()
    if selective.any():
        # Every node one step off the backbone (an action clip, or the clip leading into one),
        # then paths of up to ``augment_depth`` further clips from there.
        ids = np.flatnonzero(scc)
        off = []
        for i in range(0, len(ids), 20000):
            check_stop(should_stop, "embedding")
            _, tgt, _ = exp.out_edges(ids[i:i + 20000])
            off.append(np.unique(tgt[~scc[tgt]]))
        frontier = np.unique(np.concatenate(off)) if off else np.zeros(0, np.int64)
        added[frontier] = True
        for _ in range(s.augment_depth):
            if len(frontier) == 0:
                break
            tgts = []
            for i in range(0, len(frontier), 20000):
                _, tgt, _ = exp.out_edges(frontier[i:i + 20000])
                tgts.append(tgt[~added[tgt]])
            tgt = np.unique(np.concatenate(tgts))
            added[tgt] = True
            frontier = tgt
        if progress:
            progress(0.7, "augmented SCC")
        seed = int(np.flatnonzero(scc)[0])
        scc = strongly_connected(exp, seed, within=added, should_stop=should_stop)
    out = Embedding(graph, grid, fp, scc.reshape(exp.shape), forbidden, selective)
    out.stats = {"nodes": int(scc.sum()), "backbone_nodes": backbone_nodes, "grid_nodes": int(np.prod(exp.shape)),
                 "valid_nodes": int(valid.sum()), "seeds_tried": tried, "seconds": time.perf_counter() - t0,
                 "bytes_per_node": 4 / 8}
    out._expander = exp
    if progress:
        progress(1.0, f"embedded: {out.n_nodes} nodes in the SCC")
    return out


def count_edges(emb: Embedding, chunk: int = 20000) -> int:
    exp = emb._expander
    ids = np.flatnonzero(emb.scc.ravel())
    total = 0
    inside = emb.scc.ravel()
    for i in range(0, len(ids), chunk):
        _, tgt, _ = exp.out_edges(ids[i:i + chunk])
        total += int(inside[tgt].sum())
    return total


# ----------------------------------------------------------------------------- metrics

def coverage(emb: Embedding) -> dict:
    """XY and XYθ coverage (eq. 6) with their maps: cells (and cell-headings) holding at least one
    node of the embedded graph, over the cells a character can stand in."""
    free = emb.grid.free()
    xy = emb.scc.any(axis=3)
    cov_xy = xy.any(axis=2) & free
    cov_xya = xy & free[:, :, None]
    return {"xy": float(cov_xy.sum() / max(free.sum(), 1)),
            "xya": float(cov_xya.sum() / max(free.sum() * emb.grid.headings, 1)),
            "map": emb.scc.sum(axis=(2, 3)).astype(np.int32), "free": free}


def coverage_rgba(result) -> np.ndarray:
    """[ny, nx, 4] float colours: obstacles dark red, uncovered free cells grey, covered cells
    green, brighter where more nodes (ways to be there) exist."""
    cov = result["coverage_map"].astype(float)
    free = result["free"]
    img = np.zeros(cov.shape + (4,))
    img[..., 3] = 1.0
    img[~free] = (0.45, 0.08, 0.08, 1.0)
    img[free & (cov == 0)] = (0.35, 0.35, 0.35, 1.0)
    on = free & (cov > 0)
    t = np.log1p(cov[on]) / max(np.log1p(cov.max()), 1e-9)
    img[on, 0] = 0.1 + 0.3 * t
    img[on, 1] = 0.4 + 0.6 * t
    img[on, 2] = 0.1 + 0.3 * t
    return np.transpose(img, (1, 0, 2))  # rows = y


def action_kinds(graph: MotionGraph) -> np.ndarray:
    """str [C]: each clip's action type ("" for none), for vectorised selection of nodes."""
    return np.array([a[0] if a is not None else "" for a in graph.actions], dtype=object)


def action_centres_cells(emb: Embedding, ids: np.ndarray):
    """(node index, cell x, cell y) of the action centres of nodes whose clip is an action."""
    exp = emb._expander
    x, y, h, c = exp.decode(ids)
    hb = 2 * np.pi / emb.grid.headings
    out_i, out_x, out_y = [], [], []
    for clip in np.unique(c):
        act = emb.graph.actions[clip]
        if act is None:
            continue
        sel = np.flatnonzero(c == clip)
        path = emb.graph.root_paths[clip]
        end, mid = path[-1], path[min(act[1], len(path) - 1)]
        th_start = h[sel] * hb - end[2]
        d = mid[:2] - end[:2]  # centre relative to the end, in the clip's start frame
        cs, sn = np.cos(th_start), np.sin(th_start)
        wx, wy = cs * d[0] - sn * d[1], sn * d[0] + cs * d[1]
        out_i.append(sel)
        out_x.append(np.floor(x[sel] + wx / emb.grid.cell + 0.5).astype(np.int64))
        out_y.append(np.floor(y[sel] + wy / emb.grid.cell + 0.5).astype(np.int64))
    if not out_i:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(out_i), np.concatenate(out_x), np.concatenate(out_y)


def action_coverage(emb: Embedding, centres=None) -> dict:
    """Per action type, the fraction of free cells where its centre can happen (eq. 7), and maps;
    ``centres``: ``action_centres_cells`` of the SCC's nodes if already computed."""
    ids = np.flatnonzero(emb.scc.ravel())
    idx, cx, cy = action_centres_cells(emb, ids) if centres is None else centres
    free = emb.grid.free()
    nx, ny = free.shape
    out = {}
    kinds = action_kinds(emb.graph)[emb._expander.decode(ids[idx])[3]]
    for kind in sorted({a[0] for a in emb.graph.actions if a is not None}):
        ok = (kinds == kind) & (cx >= 0) & (cx < nx) & (cy >= 0) & (cy < ny)
        m = np.zeros((nx, ny), dtype=bool)
        m[cx[ok], cy[ok]] = True
        m &= free
        out[kind] = {"coverage": float(m.sum() / max(free.sum(), 1)), "map": m}
    return out


def reference_graph(grid: Grid, hops: int = 5):
    """Sparse graph over free cells: each connected to the free cells within ``hops`` in x and y
    with a clear line of sight, weighted by distance (the paper's reference paths)."""
    free = grid.free()
    nx, ny = free.shape
    idx = np.arange(nx * ny).reshape(nx, ny)
    rows, cols, w = [], [], []
    xs, ys = np.nonzero(free)
    for dx in range(-hops, hops + 1):
        for dy in range(-hops, hops + 1):
            if dx == 0 and dy == 0:
                continue
            tx, ty = xs + dx, ys + dy
            ok = (tx >= 0) & (tx < nx) & (ty >= 0) & (ty < ny)
            sx, sy, tx, ty = xs[ok], ys[ok], tx[ok], ty[ok]
            ok = free[tx, ty]
            steps = max(abs(dx), abs(dy)) * 2
            for t in np.linspace(0, 1, steps + 1)[1:-1]:
                px = np.floor(sx + t * dx + 0.5).astype(int)
                py = np.floor(sy + t * dy + 0.5).astype(int)
                ok &= free[px, py]
            rows.append(idx[sx[ok], sy[ok]])
            cols.append(idx[tx[ok], ty[ok]])
            w.append(np.full(ok.sum(), np.hypot(dx, dy) * grid.cell))
    return sparse.csr_matrix((np.concatenate(w), (np.concatenate(rows), np.concatenate(cols))), shape=(nx * ny, nx * ny))


def shortest_path(emb: Embedding, starts: np.ndarray, goal: np.ndarray, goal_xy, bound: float = np.inf,
                  parents: dict | None = None):
    """Best path (by cost with the 0.5 m/s minimum speed) from any node in ``starts`` to any node
    with ``goal`` [N] True, by vectorised A*: open nodes are expanded in buckets of cost + straight
    distance to the goal cell (a node may be reopened when a cheaper way in is found), and
    nothing that cannot beat the best path found is expanded.  Returns (cost, true length);
    with ``parents`` given, fills {"end": node, "node": {node: previous}, "row": {node: edit row}}
    along the best path."""
    exp = emb._expander
    inside = emb.scc.ravel()
    n = inside.size
    dist = np.full(n, np.inf)
    true = np.full(n, np.inf)
    par = np.full(n, -1, dtype=np.int64) if parents is not None else None
    prow = np.full(n, -1, dtype=np.int64) if parents is not None else None
    starts = np.asarray(starts, dtype=np.int64)
    dist[starts] = 0.0
    true[starts] = 0.0
    best, best_true, best_node = bound, np.inf, -1
    gx, gy = goal_xy
    hit = starts[goal[starts]]
    if len(hit):
        if parents is not None:
            parents.update(end=int(hit[0]), node={}, row={})
        return 0.0, 0.0
    cell = emb.grid.cell

    def heuristic(ids):
        x, y = exp.decode(ids)[:2]
        return np.hypot(x - gx, y - gy) * cell

    # Best-first in buckets: expand every open node whose cost + straight distance to the goal is
    # within ``bucket`` of the smallest; stop when no open node can beat the best path found.
    bucket = 4 * cell
    open_ids = np.unique(starts)
    while len(open_ids):
        f_open = dist[open_ids] + heuristic(open_ids)
        f_min = f_open.min()
        if f_min >= best:
            break
        sel = f_open <= f_min + bucket
        frontier, open_ids = open_ids[sel], open_ids[~sel]
        src, tgt, rows = exp.out_edges(frontier)
        keep = inside[tgt]
        src, tgt, rows = src[keep], tgt[keep], rows[keep]
        c = exp.decode(tgt)[3]
        step = np.maximum(exp.cost[rows], 0.5 * emb.graph.duration[c])
        nd = dist[frontier[src]] + step
        nt = true[frontier[src]] + exp.cost[rows]
        ok = (nd + heuristic(tgt) < best) & (nd < dist[tgt])
        tgt, nd, nt, srcn, rows = tgt[ok], nd[ok], nt[ok], frontier[src[ok]], rows[ok]
        if len(tgt) == 0:
            continue
        order = np.lexsort((nd, tgt))
        tgt, nd, nt, srcn, rows = tgt[order], nd[order], nt[order], srcn[order], rows[order]
        first = np.r_[True, tgt[1:] != tgt[:-1]]
        tgt, nd, nt, srcn, rows = tgt[first], nd[first], nt[first], srcn[first], rows[first]
        dist[tgt] = nd
        true[tgt] = nt
        if par is not None:
            par[tgt] = srcn
            prow[tgt] = rows
        g = goal[tgt]
        if g.any():
            j = np.argmin(np.where(g, nd, np.inf))
            if nd[j] < best:
                best, best_true, best_node = float(nd[j]), float(nt[j]), int(tgt[j])
        open_ids = np.union1d(open_ids, tgt[~g])
    if parents is not None and best_node >= 0:
        chain, rowmap, node = {}, {}, best_node
        while par[node] >= 0:
            chain[node], rowmap[node] = int(par[node]), int(prow[node])
            node = int(par[node])
        parents.update(end=best_node, node=chain, row=rowmap)
    return best, best_true


# ----------------------------------------------------------------------------- a best path as motion

def sample_best_path(emb: Embedding, seed: int = 0, min_dist: float = 4.0, max_dist: float = 7.0, tries: int = 200,
                     should_stop=None) -> list | None:
    """A random pair of covered cells ``min_dist``-``max_dist`` apart and the best path between
    them in the embedded graph, as edges [(clip, start cell x, y, heading bin, edit row)] in order;
    None if no tried pair has a path."""
    exp = emb._expander
    rng = np.random.default_rng(seed)
    ids = np.flatnonzero(emb.scc.ravel())
    x, y, _, _ = exp.decode(ids)
    cells = np.unique(np.column_stack((x, y)), axis=0)
    for _ in range(tries):
        check_stop(should_stop, "best path")
        a, b = cells[rng.integers(0, len(cells), 2)]
        if not min_dist <= np.hypot(*(a - b)) * emb.grid.cell <= max_dist:
            continue
        goal = np.zeros(emb.scc.size, dtype=bool)
        goal[ids[(x == b[0]) & (y == b[1])]] = True
        parents = {}
        best, _ = shortest_path(emb, ids[(x == a[0]) & (y == a[1])], goal, b, parents=parents)
        if np.isfinite(best):
            out, node = [], parents["end"]
            while node in parents["node"]:
                prev = parents["node"][node]
                px, py, ph, _ = exp.decode(np.array([prev]))
                out.append((int(exp.decode(np.array([node]))[3][0]), int(px[0]), int(py[0]), int(ph[0]),
                            int(parents["row"][node])))
                node = prev
            return out[::-1]
    return None


def path_motion(emb: Embedding, edges: list, clips) -> Clip:
    """The motion along a path of ``sample_best_path``: each graph clip's frames with the root on
    its edited path (eq. 16), in world coordinates.  ``clips``: the graph's source clips, in the
    order of ``graph.names``."""
    from .motion import resample
    from .synth import frame_table

    graph, exp, grid = emb.graph, emb._expander, emb.grid
    table = frame_table([resample(c, graph.fps) for c in clips])
    hb = 2 * np.pi / grid.headings
    roots, rots = [], []
    for clip, sx, sy, sh, row in edges:
        src, lo, hi = int(graph.source[clip]), int(graph.start[clip]), int(graph.end[clip])
        rows = table.first[src] + np.arange(lo, hi)
        full = graph.root_paths[clip]
        path = full[:hi - lo]
        th = sh * hb
        rot2 = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        end_off = exp.off[row]
        corr = end_off[:2] * grid.cell - rot2 @ full[-1, :2]
        dth = end_off[2] * hb - full[-1, 2]
        frac = np.linspace(0, 1, len(path) + 1)[:-1]
        start = grid.origin + (np.array([sx, sy]) + 0.5) * grid.cell
        ground = start + (rot2 @ path[:, :2].T).T + frac[:, None] * corr
        local = table.local_rot[rows].copy()
        local[:, 0] = quat.mul(quat.about_axis(2, th + path[:, 2] + frac * dth), local[:, 0])
        roots.append(np.column_stack((ground, table.height[rows])))
        rots.append(local)
    return Clip("best_path", table.skeleton, graph.fps, np.concatenate(roots), quat.make_continuous(np.concatenate(rots)))


def path_efficiency(emb: Embedding, pairs: int = 100, action: str | None = None, min_dist: float = 4.0,
                    max_ref: float = 7.0, seed: int = 0, ref=None, centres=None, should_stop=None) -> dict:
    """Monte-Carlo path (or action) efficiency (eqs. 8, 9): pairs of covered cells at least
    ``min_dist`` apart whose reference path is at most ``max_ref`` long; the shortest embedded
    path (ending in an ``action`` centred on the end cell, for action efficiency) over the
    reference path.  ``ref`` and ``centres`` (``reference_graph``, ``action_centres_cells`` of the
    SCC's nodes) may be passed in when already computed.  Returns mean, median, percentiles and
    all ratios."""
    exp = emb._expander
    grid = emb.grid
    rng = np.random.default_rng(seed)
    scc = emb.scc
    covered = np.argwhere(scc.any(axis=(2, 3)))
    ref = reference_graph(grid) if ref is None else ref
    nx, ny = grid.shape
    ids = np.flatnonzero(scc.ravel())
    node_x, node_y, _, node_c = exp.decode(ids)
    if action is not None:
        idx, cx, cy = action_centres_cells(emb, ids) if centres is None else centres
        is_act = action_kinds(emb.graph)[node_c[idx]] == action
        idx, cx, cy = idx[is_act], cx[is_act], cy[is_act]
        if len(idx) == 0:
            return {"pairs": 0, "ratios": [], "mean": float("nan"), "median": float("nan")}
    chosen, tries = [], 0
    while len(chosen) < pairs and tries < pairs * 50 and len(covered) > 1:
        tries += 1
        check_stop(should_stop, "path efficiency")
        a, b = covered[rng.integers(0, len(covered), 2)]
        if np.hypot(*(a - b)) * grid.cell < min_dist:
            continue
        d_ref = dijkstra(ref, indices=a[0] * ny + a[1], limit=max_ref + 1e-9)[b[0] * ny + b[1]]
        if not np.isfinite(d_ref) or d_ref > max_ref:
            continue
        if action is not None and not np.any((cx == b[0]) & (cy == b[1])):
            continue
        chosen.append((a, b, d_ref))

    def one(pair):
        a, b, d_ref = pair
        check_stop(should_stop, "path efficiency")
        starts = ids[(node_x == a[0]) & (node_y == a[1])]
        goal = np.zeros(scc.size, dtype=bool)
        if action is None:
            goal[ids[(node_x == b[0]) & (node_y == b[1])]] = True
        else:
            goal[ids[idx[(cx == b[0]) & (cy == b[1])]]] = True
        best, length = shortest_path(emb, starts, goal, b, bound=max(6.0 * d_ref, 10.0))
        return length / d_ref if np.isfinite(best) else None

    ratios = [r for r in parallel_map(one, chosen) if r is not None]
    r = np.array(ratios)
    return {"pairs": len(r), "ratios": r.tolist(), "mean": float(r.mean()) if len(r) else float("nan"),
            "median": float(np.median(r)) if len(r) else float("nan"),
            "p10": float(np.percentile(r, 10)) if len(r) else float("nan"),
            "p90": float(np.percentile(r, 90)) if len(r) else float("nan")}


def _centre_time(graph: MotionGraph, kind: str) -> np.ndarray:
    """Seconds from a clip's start to an instance of ``kind`` in it (inf if none)."""
    out = np.full(graph.n, np.inf)
    for c, a in enumerate(graph.actions):
        if a is not None and a[0] == kind:
            out[c] = a[1] / graph.fps
        elif kind in graph.types[c] and a is None and kind not in ACTION_TYPES:
            out[c] = 0.0  # a locomotion type is reached when its clip starts
    return out


def theoretical_maneuverability(graph: MotionGraph, kind: str) -> dict:
    """LM_T,k (eq. 13): mean over clips of half their duration plus the quickest path in the
    motion graph from their end to an instance of ``kind``."""
    centre = _centre_time(graph, kind)
    d = graph.duration
    f = np.full(graph.n, np.inf)  # time from the end of c to the instance
    a, b = graph.edges[:, 0], graph.edges[:, 1]
    for _ in range(graph.n + 1):
        g = np.minimum(centre[b], d[b] + f[b])  # entering b
        nf = f.copy()
        np.minimum.at(nf, a, g)
        if np.allclose(nf, f, equal_nan=True) or np.array_equal(nf, f):
            break
        f = nf
    lm = 0.5 * d + f
    ok = np.isfinite(lm)
    return {"mean": float(lm[ok].mean()) if ok.any() else float("inf"), "reachable": float(ok.mean()),
            "values": lm[ok].tolist()}


def practical_maneuverability(emb: Embedding, kind: str, sample: float = 1.0, seed: int = 0, chunk: int = 20000,
                              should_stop=None) -> dict:
    """LM_P,k (eq. 14): over (sampled) nodes of the embedded graph, half the clip's duration plus
    the quickest path in the embedded graph to an instance of ``kind``; computed for every node
    at once by label-correcting backwards from the nodes whose clip holds the instance."""
    exp = emb._expander
    graph = emb.graph
    centre = _centre_time(graph, kind)
    inside = emb.scc.ravel()
    ids = np.flatnonzero(inside)
    _, _, _, c = exp.decode(ids)
    n = inside.size
    g = np.full(n, np.inf)  # time from entering node's clip (i.e. from its start) to the instance
    f = np.full(n, np.inf)  # time from the end of the node's clip
    g[ids] = centre[c]
    frontier = ids[np.isfinite(g[ids])]
    d = graph.duration
    while len(frontier):
        check_stop(should_stop, "local maneuverability")
        new = []
        for i in range(0, len(frontier), chunk):
            part = frontier[i:i + chunk]
            t_idx, src = exp.in_edges(part)
            keep = inside[src]
            t_idx, src = t_idx[keep], src[keep]
            cand = g[part[t_idx]]
            better = cand < f[src] - 1e-9
            src, cand = src[better], cand[better]
            if len(src) == 0:
                continue
            order = np.lexsort((cand, src))
            src, cand = src[order], cand[order]
            first = np.r_[True, src[1:] != src[:-1]]
            src, cand = src[first], cand[first]
            f[src] = np.minimum(f[src], cand)
            _, _, _, cs = exp.decode(src)
            gg = np.minimum(centre[cs], d[cs] + f[src])
            improved = gg < g[src] - 1e-9
            g[src[improved]] = gg[improved]
            new.append(src[improved])
        frontier = np.unique(np.concatenate(new)) if new else np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    pick = ids if sample >= 1.0 else ids[rng.random(len(ids)) < sample]
    _, _, _, cp = exp.decode(pick)
    lm = 0.5 * d[cp] + f[pick]
    ok = np.isfinite(lm)
    return {"mean": float(lm[ok].mean()) if ok.any() else float("inf"),
            "median": float(np.median(lm[ok])) if ok.any() else float("inf"),
            "reachable": float(ok.mean()) if len(ok) else 0.0, "nodes": int(len(pick))}


def evaluate(graph: MotionGraph, env: Environment, settings: EmbedSettings | None = None, pairs: int = 100,
             lm_sample: float = 1.0, progress=None, should_stop=None) -> dict:
    """Embed and compute every metric; returns a plain dict (maps as arrays)."""
    t0 = time.perf_counter()
    sub = (lambda f, m: progress(0.5 * f, m)) if progress else None
    emb = embed(graph, env, settings, sub, should_stop)
    t_embed = time.perf_counter() - t0
    t1 = time.perf_counter()
    cov = coverage(emb)
    centres = action_centres_cells(emb, np.flatnonzero(emb.scc.ravel()))
    acts = action_coverage(emb, centres)
    if progress:
        progress(0.55, "path efficiency")
    ref = reference_graph(emb.grid)
    pe = path_efficiency(emb, pairs, None, ref=ref, should_stop=should_stop)
    ae = {}
    for kind in acts:
        if progress:
            progress(0.7, f"action efficiency: {kind}")
        ae[kind] = path_efficiency(emb, max(10, pairs // 4), kind, ref=ref, centres=centres, should_stop=should_stop)
    lm = {}
    for kind in sorted({a[0] for a in graph.actions if a is not None}):
        if progress:
            progress(0.85, f"local maneuverability: {kind}")
        lm[kind] = {"theoretical": theoretical_maneuverability(graph, kind),
                    "practical": practical_maneuverability(emb, kind, lm_sample, should_stop=should_stop)}
    result = {"environment": env.name, "nodes": emb.n_nodes, "embed_seconds": t_embed, "coverage_xy": cov["xy"],
              "coverage_xya": cov["xya"], "coverage_map": cov["map"], "free": cov["free"],
              "action_coverage": {k: v["coverage"] for k, v in acts.items()},
              "action_maps": {k: v["map"] for k, v in acts.items()},
              "path_efficiency": pe, "action_efficiency": ae, "maneuverability": lm,
              "metric_seconds": time.perf_counter() - t1, "embedding": emb}
    if progress:
        progress(1.0, f"coverage {100 * cov['xy']:.1f}% XY, path efficiency {pe['median']:.2f} median")
    return result


# ----------------------------------------------------------------------------- any controller

def graph_from_controller(table, next_fragment, pieces, controls, bins_of, steps: int = 5, start: int = 0,
                          max_clips: int = 600, fps: float = 60.0, types=None, airborne=None) -> MotionGraph:
    """The transition structure of a fragment controller as a motion graph, so it can be embedded
    and measured like one.  A clip is what the controller plays while one control is held for
    ``steps`` decisions from an entry fragment (0.5 s for 0.1 s fragments: fragments alone are
    shorter than a grid cell); it can be followed by the clip of any control from the fragment it
    ended on.  Entry fragments are explored breadth-first from ``start``.

    table        int [F, C] next fragment per (fragment, bin); next_fragment(f, bin) -> f'
    pieces       function fragment ids -> [K, 3] (clip, start, count) rows of ``table``'s frames
    controls     [M, 4] control vectors explored (e.g. walk/run in 8 directions, turns, stop, jump)
    bins_of      function controls [M, 4] -> bins [M]
    types        function fragment -> set of motion types (its source clip's tags)
    airborne     bool [M]: controls that press jump (their clips count as "jump" actions)
    """
    bins = bins_of(np.asarray(controls, dtype=float))
    airborne = np.zeros(len(bins), dtype=bool) if airborne is None else np.asarray(airborne, dtype=bool)
    entries = {int(start): 0}
    order = [int(start)]
    clip_seq, clip_entry, clip_ctrl = [], [], []
    i = 0
    while i < len(order) and len(clip_seq) + len(bins) <= max_clips:
        f = order[i]
        i += 1
        for m, b in enumerate(bins.tolist()):
            seq, g = [], f
            for _ in range(steps):
                g = int(next_fragment(g, b))
                seq.append(g)
            clip_seq.append(seq)
            clip_entry.append(f)
            clip_ctrl.append(m)
            if seq[-1] not in entries:
                entries[seq[-1]] = len(order)
                order.append(seq[-1])
    first_clip = {}
    for k, f in enumerate(clip_entry):
        first_clip.setdefault(f, k)
    edges = []
    for k, seq in enumerate(clip_seq):
        end = seq[-1]
        if end in first_clip:
            base = first_clip[end]
            edges += [(k, base + m) for m in range(len(bins))]
    n = len(clip_seq)
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    paths, starts, ends, tps, acts = [], [], [], [], []
    for k, seq in enumerate(clip_seq):
        rows = pieces(np.array(seq))
        frames = np.concatenate([table.first[c] + s + np.arange(cnt) for c, s, cnt in rows.tolist()])
        motion = table.motion[frames]
        yaw = np.concatenate(([0.0], np.cumsum(motion[:, 2])))
        cs, sn = np.cos(yaw[:-1]), np.sin(yaw[:-1])
        step = np.column_stack((cs * motion[:, 0] - sn * motion[:, 1], sn * motion[:, 0] + cs * motion[:, 1]))
        ground = np.vstack((np.zeros(2), np.cumsum(step, axis=0)))
        paths.append(np.column_stack((ground, yaw)))
        starts.append(0)
        ends.append(len(frames))
        tps.append(set(types(seq[len(seq) // 2])) if types else set())
        acts.append(("jump", len(frames) // 2) if airborne[clip_ctrl[k]] else None)
    if airborne.any():
        for t in (tps[k] for k in range(n) if acts[k] is not None):
            t.add("jump")
    adj = sparse.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(adj, directed=True, connection="strong")
    keep = labels == np.argmax(np.bincount(labels))
    remap = np.cumsum(keep) - 1
    e = edges[keep[edges[:, 0]] & keep[edges[:, 1]]]
    sel = np.flatnonzero(keep)
    stats = {"clips": int(len(sel)), "edges": int(len(e)), "entries": len(order), "controls": int(len(bins)),
             "steps_per_clip": steps, "seconds_kept": float(sum(ends[k] for k in sel) / fps)}
    return MotionGraph(fps, ["controller"], np.zeros(len(sel), dtype=np.int64), np.array([starts[k] for k in sel]),
                       np.array([ends[k] for k in sel]), remap[e], [tps[k] for k in sel], [acts[k] for k in sel],
                       stats, [paths[k] for k in sel])


def certify_controller(policy, fs, max_clips: int = 600) -> MotionGraph:
    """A trained fragment controller (``Policy`` + its ``FragmentSet``) as a motion graph for
    ``evaluate``: its clips are what it plays while a player holds one of 12 controls for 0.5 s
    (stand, walk in 8 directions at the data's 75th-percentile speed, turn left/right, jump)."""
    top = float(np.percentile(np.linalg.norm(fs.control[:, :2], axis=1), 75))
    ang = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    controls = [[0, 0, 0, 0]] + [[top * np.sin(a), top * np.cos(a), 0, 0] for a in ang]
    controls += [[0, top, 1.0, 0], [0, top, -1.0, 0], [0, top, 0, 1]]
    clip_tags = [set(c.tags) for c in fs.clips]
    return graph_from_controller(fs.frame_table(), lambda f, b: policy.table[f, b], fs.pieces, np.array(controls),
                                 policy.bins, steps=max(1, int(round(0.5 / fs.settings.length))),
                                 start=policy.start_fragment(controls[1]), fps=fs.fps, max_clips=max_clips,
                                 types=lambda f: clip_tags[int(fs.clip[f])],
                                 airborne=np.array([c[3] for c in controls]) > 0)
