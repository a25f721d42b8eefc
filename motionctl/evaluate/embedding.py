"""Embedding a motion graph in an environment (paper 004, sections 4.2 and 4.5).

A grid node is (x, y, heading bin, clip that brought the character there); an edge plays a
successor clip edited to end on any grid point inside its footprint, along a path clear of
what the clip may not touch.  Edges are made on demand (``Expander``), vectorised over whole
frontiers; strongly connected components are found by flooding bit arrays forward and backward
from a seed, and the largest by forward-backward decomposition (``largest_component``, with a
proof that no larger one was missed); selective actions join by the augmented SCC.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.ndimage import distance_transform_edt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..arrays import ranks
from ..engines.graph.build import ACTION_TYPES, MotionGraph
from ..errors import MotionctlError
from ..jobs import Shared, check_memory, check_stop, n_workers, parallel_map
from ..tags import canonical_set
from .environment import CHASM, JUMP_TYPES, LOW, STEP_TYPES, WALL, Environment, Grid, rasterise
from .grid import EditModel, Footprints, footprints

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
    backbone: np.ndarray | None = None  # bool [nx, ny, H, C]: the locomotion SCC the actions were added to

    @property
    def n_nodes(self) -> int:
        return int(self.scc.sum())

    def cell_nodes(self, x: int, y: int) -> np.ndarray:
        """Ids of the SCC's nodes on cell (x, y): one contiguous block of ids, H * C long."""
        block = self.scc.shape[2] * self.scc.shape[3]
        return (int(x) * self.scc.shape[1] + int(y)) * block + np.flatnonzero(self.scc[x, y])


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
    """Edges of the embedded graph made on demand, vectorised over many nodes at once.

    A node is (cell x, cell y, heading bin h, clip c), numbered by ``encode``/``decode`` over
    ``shape`` = (nx, ny, H, C).  An edge from a node plays a successor clip c2 with one of its
    edits ("table rows"): landing offsets and swept cells depend only on (h, c2), so they are
    tabulated once and shared by every cell.

    H, C               heading bins, clips
    succ_ptr, succ     CSR successors: the clips after c are succ[succ_ptr[c]:succ_ptr[c + 1]]
    pred_ptr, pred     CSR predecessors, the same way
    fp_start [H, C+1]  first table row of (h, c2); fp_count [H, C] their number
    off [R, 3]         per table row: landing (dx cells, dy cells, d heading bins)
    sw [R, S, 2]       per table row: the distinct cells it sweeps (padded with its last cell)
    cost [R]           per table row: the edited path's length (m)
    rev_start, rev_count, rev [*, 4]
                       reverse footprints: rows landing at heading h with clip c, as
                       (start heading, dx, dy, table row), for backward search
    pad, width, bits   the grid's obstacle bitmap padded by ``pad`` cells of wall, flattened
                       (row width ``width``), so swept cells index it without bounds checks
    sw_flat [R, S]     the swept cells as offsets into ``bits``
    node_ok [nx, ny, C]      the clip may stand on the cell
    path_ok [nx * ny, R]     the table row's swept cells, from that cell, avoid what its clip may not touch
    """

    def __init__(self, graph: MotionGraph, grid: Grid, fp: Footprints, forbidden: np.ndarray, should_stop=None):
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
        # Every clip ends with its feet on the ground: no node on a chasm, whatever may fly over one.
        self.node_ok = (grid.bits[:, :, None] & (forbidden | CHASM)[None, None, :]) == 0  # [nx, ny, C]
        # Swept cells as flat offsets into the padded bitmap.
        self.sw_flat = self.sw[..., 0] * self.width + self.sw[..., 1]
        # Which edit rows are clear of what their clip may not touch, from every cell: one bool
        # per (cell, row), built in tiles of cells (``parallel_map`` pieces: threads, or a Dask
        # cluster's workers); edges then look their path up instead of its cells.
        row_clip = np.concatenate([np.full(self.fp_count[h, c], c, dtype=np.int64)
                                   for h in range(self.H) for c in range(self.C)])
        forb = forbidden[row_clip]
        gx, gy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
        base = ((gx + self.pad) * self.width + (gy + self.pad)).ravel()
        n_rows, n_sw = self.sw_flat.shape
        flies = (forbidden & CHASM) == 0
        self.jump_row = np.full(n_rows, -1, dtype=np.int64)  # row -> index among the rows of such clips
        jr = np.flatnonzero(flies[row_clip])
        self.jump_row[jr] = np.arange(len(jr))
        check_memory(float(nx * ny) * (n_rows + len(jr)) + 8.0 * (1 << 23) * n_workers(),
                     f"the obstacle tables of {graph.n} clips over {nx * ny} cells",
                     "use fewer clips (a larger Min Clip, or a smaller library) or a coarser Cell")
        # Clips that may pass over a chasm (jumps) do so only in the air: the cells their edited
        # paths sweep on the ground must be clear of chasms too.  In the backbone a jump is used
        # only where it is needed, crossing a chasm or a low obstacle (paper 004, section 4.5).
        ground = []
        for h in range(self.H):
            for c in np.flatnonzero(flies):
                air = graph.in_air(int(c))
                ground += _distinct_cells(fp.swept[h][c][:, ~air] if (~air).any() else fp.swept[h][c][:, :1])
        gmax = max((len(g) for g in ground), default=1)
        gw = np.zeros((len(ground), gmax, 2), dtype=np.int64)
        for k, cells in enumerate(ground):
            gw[k, :len(cells)], gw[k, len(cells):] = cells, cells[-1]
        ground_flat = gw[..., 0] * self.width + gw[..., 1]
        self.path_ok = np.zeros((nx * ny, n_rows), dtype=bool)
        self.needed = np.zeros((nx * ny, len(jr)), dtype=bool)  # [cell, jump row]: crosses an obstacle
        # Rows by their number of distinct cells, so each batch of rows tests only as many cells as its
        # longest (most sweep a few cells; the padding to the longest of all would be most of the work),
        # on the bitmap in the smallest integer type holding its bits.
        length = 1 + np.any(self.sw[:, 1:] != self.sw[:, :-1], axis=2).sum(axis=1)
        order = np.argsort(length, kind="stable")
        present = int(np.bitwise_or.reduce(self.bits))
        small = np.min_scalar_type(present)
        block = max(1, (1 << 23) // max(1, int(length.sum()), len(jr) * max(n_sw, gmax)))
        tiles = [(i, min(i + block, len(base))) for i in range(0, len(base), block)]

        def put(i, res):
            a, b = tiles[i]
            self.path_ok[a:b], self.needed[a:b] = res

        parallel_map(_obstacle_tile, tiles, None,
                     Shared(bits=self.bits.astype(small), base=base, order=order, sw_sorted=self.sw_flat[order],
                            length_sorted=length[order], forb_sorted=(forb[order] & present).astype(small), jr=jr,
                            sw_jr=self.sw_flat[jr], ground_flat=ground_flat, chasm=small.type(CHASM & present),
                            chasm_low=small.type((CHASM | LOW) & present)), should_stop, None, "embedding tiles",
                     collect=put)
        self._edge_tables()

    def _edge_tables(self):
        """Every edge out of (or into) a node, tabulated by the node's (heading bin, clip) key
        ``h * C + c``, which is ``id % (H * C)``, so an edge costs a few gathers, not a decode and an
        encode of both ends.  Cells are numbered here on the grid padded by ``pad`` cells
        (``cell_pad``), so a far end off the grid needs no bounds test: ``node_ok_pad`` is False there.
        out_ptr [H*C+1] and per edge out of a key: out_row (edit row), out_clip (clip played),
        out_dcell (padded cell offset), out_delta (node-id offset to the target); in_ptr, in_row,
        in_clip (the source's clip), in_dcell, in_delta the same for edges into a key."""
        H, C, pad = self.H, self.C, self.pad
        nx, ny = self.shape[:2]
        wy = ny + 2 * pad
        sx, sy = ny * H * C, H * C
        gx, gy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
        self.cell_pad = ((gx + pad) * wy + gy + pad).ravel()
        self.cell_unpad = np.full((nx + 2 * pad) * wy, -1, dtype=np.int64)
        self.cell_unpad[self.cell_pad] = np.arange(nx * ny)
        node_ok_pad = np.zeros((nx + 2 * pad, wy, C), dtype=bool)
        node_ok_pad[pad:pad + nx, pad:pad + ny] = self.node_ok
        self.node_ok_pad = node_ok_pad.ravel()
        hk = np.repeat(np.arange(H), C)  # key -> h
        ck = np.tile(np.arange(C), H)  # key -> c
        # Out: key (h, c) -> each successor c2 (in order), each edit row of (h, c2).
        n_succ = np.diff(self.succ_ptr)
        k_of = np.repeat(np.arange(H * C), n_succ[ck])
        c2 = self.succ[self.succ_ptr[ck[k_of]] + ranks(n_succ[ck])]
        cnt = self.fp_count[hk[k_of], c2]
        k_of, c2 = np.repeat(k_of, cnt), np.repeat(c2, cnt)
        h = hk[k_of]
        self.out_row = self.fp_start[h, c2] + ranks(cnt)
        dx, dy, dh = self.off[self.out_row].T
        self.out_ptr = np.r_[0, np.cumsum(np.bincount(k_of, minlength=H * C))]
        self.out_clip = c2
        self.out_dcell = dx * wy + dy
        self.out_delta = dx * sx + dy * sy + ((h + dh) % H - h) * C + (c2 - ck[k_of])
        # In: key (h, c) -> each predecessor cp (in order), each reverse row (start h, dx, dy, k) of (h, c).
        n_pred = np.diff(self.pred_ptr)
        per_key = self.rev_count.ravel() * n_pred[ck]
        k_of = np.repeat(np.arange(H * C), per_key)
        r = ranks(per_key)
        nrev = np.maximum(self.rev_count.ravel()[k_of], 1)
        rev = self.rev[self.rev_start[hk[k_of], ck[k_of]] + r % nrev]
        cp = self.pred[self.pred_ptr[ck[k_of]] + r // nrev]
        h, c = hk[k_of], ck[k_of]
        self.in_ptr = np.r_[0, np.cumsum(np.bincount(k_of, minlength=H * C))]
        self.in_row = self.fp_start[rev[:, 0], c] + rev[:, 3]
        self.in_clip = cp
        self.in_dcell = -rev[:, 1] * wy - rev[:, 2]
        self.in_delta = -rev[:, 1] * sx - rev[:, 2] * sy + (rev[:, 0] - h) * C + (cp - c)

    def __getstate__(self):
        """What a cluster's worker needs for edges and paths: not the graph's clips, the footprints'
        lists or the obstacle bitmap, which stay with the caller."""
        return {k: v for k, v in self.__dict__.items() if k not in ("graph", "fp", "bits", "sw", "sw_flat", "_shared")}

    def shared(self) -> Shared:
        """This expander as one ``Shared`` (a cluster receives its edge tables once per embedding)."""
        if getattr(self, "_shared", None) is None:
            self._shared = Shared(exp=self)
        return self._shared

    def decode(self, ids):
        """(x, y, heading bin, clip) of node ids."""
        return np.unravel_index(ids, self.shape)

    def encode(self, x, y, h, c):
        """Node ids of (x, y, heading bin, clip) arrays."""
        return np.ravel_multi_index((x, y, h, c), self.shape)

    def valid_nodes(self) -> np.ndarray:
        """bool [nx, ny, H, C]: nodes whose cell the clip may stand on."""
        return np.broadcast_to(self.node_ok[:, :, None, :], self.shape)


    def _edges(self, ids: np.ndarray, allow, backbone: bool, forward: bool):
        """(index into ids, node ids at the other end, edit rows) of the valid edges out of
        (``forward``) or into the nodes ``ids``, from the key tables of ``_edge_tables``."""
        ptr, row_of, clip_of, dcell, delta = ((self.out_ptr, self.out_row, self.out_clip, self.out_dcell,
                                               self.out_delta) if forward else
                                              (self.in_ptr, self.in_row, self.in_clip, self.in_dcell, self.in_delta))
        ids = np.asarray(ids, dtype=np.int64)
        hc = self.H * self.C
        key = ids % hc
        cell = ids // hc
        where = None
        if allow is not None and not forward:  # the clip played into a node is its own clip
            keep = allow[key % self.C]
            ids, key, cell, where = ids[keep], key[keep], cell[keep], np.flatnonzero(keep)
        cnt = ptr[key + 1] - ptr[key]
        src = np.repeat(np.arange(len(ids)), cnt)
        e = np.repeat(ptr[key] - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))
        far_cell = self.cell_pad[cell][src] + dcell[e]
        far_clip = clip_of[e]
        ok = self.node_ok_pad[far_cell * self.C + far_clip]
        if allow is not None and forward:
            ok &= allow[far_clip]
        src, e, far_cell = src[ok], e[ok], far_cell[ok]
        rows = row_of[e]
        path_cell = cell[src] if forward else self.cell_unpad[far_cell]  # the edge's path starts at its source
        ok = self.path_ok.reshape(-1)[path_cell * self.path_ok.shape[1] + rows]
        if backbone and self.needed.shape[1]:
            j = self.jump_row[rows]
            ok &= (j < 0) | self.needed[path_cell, np.maximum(j, 0)]
        src, e, rows = src[ok], e[ok], rows[ok]
        return (src if where is None else where[src]), ids[src] + delta[e], rows

    def out_edges(self, ids: np.ndarray, allow=None, backbone: bool = False):
        """(source index into ids, target node ids, table rows) of valid edges from nodes ``ids``;
        ``allow``: bool [C] of clips that may be played (None: all); ``backbone``: jumps only where
        they cross an obstacle."""
        return self._edges(ids, allow, backbone, True)

    def in_edges(self, ids: np.ndarray, allow=None, backbone: bool = False):
        """(target index into ids, source node ids) of valid edges into nodes ``ids``."""
        return self._edges(ids, allow, backbone, False)[:2]


def _obstacle_tile(tile, bits, base, order, sw_sorted, length_sorted, forb_sorted, jr, sw_jr, ground_flat, chasm,
                   chasm_low, batch=4096):
    """Cells a:b of ``Expander.path_ok`` and ``Expander.needed``: whether each edit row's swept cells
    avoid what its clip may not touch (jumps: their cells on the ground avoid chasms too), and
    whether a jump row crosses a chasm or a low obstacle.  Rows come sorted by their number of
    distinct cells (``order``), in batches that test only that many."""
    a, b = tile
    cell = base[a:b, None, None]
    ok = np.empty((b - a, len(order)), dtype=bool)
    for i in range(0, len(order), batch):
        j = min(i + batch, len(order))
        sw = sw_sorted[None, i:j, :int(length_sorted[j - 1])]
        ok[:, order[i:j]] = ~np.any(bits[cell + sw] & forb_sorted[None, i:j, None], axis=2)
    needed = np.zeros((b - a, len(jr)), dtype=bool)
    if len(jr):
        ok[:, jr] &= ~np.any(bits[cell + ground_flat[None]] & chasm, axis=2)
        needed[:] = np.any(bits[cell + sw_jr[None]] & chasm_low, axis=2)
    return ok, needed


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
          chunk: int = 20000, should_stop=None, backbone: bool = False) -> np.ndarray:
    """Breadth-first flood on bit arrays (section 4.2): every node reachable from (forward) or
    reaching (backward) the seeds, expanding only nodes in ``within`` if given.  Each pass expands
    the whole frontier at once, in chunks."""
    n = int(np.prod(exp.shape))
    reached = np.zeros(n, dtype=bool)
    seeds = np.asarray(seeds, dtype=np.int64)
    reached[seeds] = True
    frontier = seeds
    shared = (exp.shared(), Shared(within=within, allow=allow))
    while len(frontier):
        check_stop(should_stop, "embedding")
        pieces = [(frontier[i:i + chunk], forward, backbone) for i in range(0, len(frontier), chunk)]
        found = parallel_map(_expand_piece, pieces, None, shared, should_stop, None, "embedding flood")
        tgt = np.concatenate(found)
        frontier = np.unique(tgt[~reached[tgt]])  # sort only what is new
        reached[frontier] = True
    return reached


def _expand_piece(piece, exp, within, allow):
    """Nodes one edge after (forward) or before the nodes ``ids``, inside ``within`` (with repeats)."""
    ids, forward, backbone = piece
    tgt = exp.out_edges(ids, allow, backbone)[1] if forward else exp.in_edges(ids, allow, backbone)[1]
    return tgt[within[tgt]] if within is not None else tgt


def strongly_connected(exp: Expander, seed: int, within: np.ndarray | None = None, allow=None,
                       should_stop=None) -> np.ndarray:
    """bool [N]: the strongly connected component holding ``seed`` (forward flood, then backward within it)."""
    fwd = flood(exp, np.array([seed]), True, within, allow, should_stop=should_stop)
    bwd = flood(exp, np.array([seed]), False, fwd, allow, should_stop=should_stop)
    return fwd & bwd


@dataclass
class EmbedSettings:
    """The grid (cell metres, heading bins), the character's radius, the editing model, how far the augmented
    SCC reaches past actions, and the seeds tried for the backbone."""
    cell: float = 0.2
    headings: int = 18
    radius: float = 0.25
    edit: EditModel = field(default_factory=EditModel)
    augment_depth: int = 3  # clips of the paths added from each selective action (section 4.5)
    seeds: int = 8  # the search for the largest backbone SCC gives up after 4x this many seeds unproven
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
    exp = Expander(graph, grid, fp, forbidden, should_stop)
    if progress:
        progress(0.05, "footprints ready")
    valid = np.ascontiguousarray(exp.valid_nodes()).ravel()
    backbone = ~selective
    domain = valid & np.broadcast_to(backbone[None, None, None, :], exp.shape).ravel()
    if not domain.any():
        raise MotionctlError("no grid node is free: the environment is too cluttered for the character")
    # Seeds: first a node of the open cell farthest from obstacles (``first_seed``), then random
    # nodes of the part searched, preferring the more open half of the floor.
    room = distance_transform_edt(grid.free())
    ox, oy = np.unravel_index(np.argmax(room), room.shape)
    first_seed = _first_seed(exp, domain, backbone, int(ox), int(oy))
    open_cells = np.broadcast_to((room >= 0.5 * room.max())[:, :, None, None], exp.shape).ravel()
    sub = (lambda f, m: progress(0.05 + 0.5 * f, m)) if progress else None
    best, search = largest_component(exp, domain, backbone, first_seed, open_cells, np.random.default_rng(s.seed),
                                     4 * s.seeds, sub, should_stop, backbone=True)
    tried = search["searches"]
    scc = best
    backbone_nodes = int(scc.sum())
    if selective.any() or (exp.jump_row >= 0).any():  # actions, and jumps where no obstacle needs them
        added, first = augmented_nodes(exp, scc, s.augment_depth, should_stop)
        if progress:
            progress(0.7, "augmented SCC")
        scc = grown_component(exp, scc, first, added, should_stop)
    out = Embedding(graph, grid, fp, scc.reshape(exp.shape), forbidden, selective, backbone=best.reshape(exp.shape))
    out.stats = {"nodes": int(scc.sum()), "backbone_nodes": backbone_nodes, "grid_nodes": int(np.prod(exp.shape)),
                 "valid_nodes": int(valid.sum()), "seeds_tried": tried, "largest_proven": search["proven"],
                 "largest_bound": search["bound"], "unused_clips": unused_clips(graph, out.scc),
                 "seconds": time.perf_counter() - t0,
                 "bytes_per_node": 4 / 8}
    out._expander = exp
    if progress:
        progress(1.0, f"embedded: {out.n_nodes} nodes in the SCC")
    return out


def _first_seed(exp: Expander, domain: np.ndarray, allow: np.ndarray, x: int, y: int) -> int:
    """The node of cell (x, y) most likely in the largest component, so the first search finds it
    and the parts left are too small to search: its clip is in the largest strongly connected set
    of clips (every cycle of the embedded graph plays clips of one such set), and it has the most
    edges both in and out within ``domain`` (a node without both is in no cycle at all), ties
    going to the clip with the most transitions."""
    graph, C = exp.graph, exp.C
    e = graph.edges[allow[graph.edges[:, 0]] & allow[graph.edges[:, 1]]]
    _, label = connected_components(csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(C, C)),
                                    directed=True, connection="strong")
    sizes = np.bincount(label, weights=allow.astype(float))
    clip_ok = allow & (label == np.argmax(sizes))
    block = exp.H * C
    ids = (x * exp.shape[1] + y) * block + np.arange(block)
    ids = ids[domain[ids] & clip_ok[ids % C]]
    if not len(ids):
        ids = np.flatnonzero(domain)[:1]
    src, tgt, _ = exp.out_edges(ids, allow, backbone=True)
    out_deg = np.bincount(src[domain[tgt]], minlength=len(ids))
    t, src = exp.in_edges(ids, allow, backbone=True)
    in_deg = np.bincount(t[domain[src]], minlength=len(ids))
    clip_deg = np.bincount(e.ravel(), minlength=C)[ids % C]
    return int(ids[np.lexsort((-clip_deg, -np.minimum(out_deg, in_deg)))[0]])


def unused_clips(graph: MotionGraph, scc: np.ndarray) -> list:
    """Clips with no node in the component (never played in this room), as "name frames a-b"."""
    used = scc.any(axis=(0, 1, 2))
    return [f"{graph.names[graph.source[c]]} frames {graph.start[c]}-{graph.end[c]}" for c in np.flatnonzero(~used)]


def largest_component(exp: Expander, domain: np.ndarray, allow, first_seed: int, preferred: np.ndarray, rng,
                      max_searches: int = 32, progress=None, should_stop=None,
                      backbone: bool = False) -> tuple[np.ndarray, dict]:
    """The largest strongly connected component of the embedded graph restricted to ``domain``
    (bool [N]; edges playing clips in ``allow``), by forward decomposition: the SCC S of a seed is
    what reaches it within its forward set F, and every other SCC lies wholly inside F minus S or
    outside F (an SCC with a node in F has all of them there), so those parts are searched next,
    largest first.  A part no
    larger than the best SCC found cannot hold a larger one: when every part left is that small,
    the answer is proven.  A part is trimmed (``trim``) before it is searched, so a seed is not
    wasted on a node in no cycle; the first search, from ``first_seed`` over the whole domain,
    is not (it usually finds the largest at once, and trimming everything would cost more than
    that search).  Stops after ``max_searches`` seeds if not proven (``bound``: the largest part
    left, an upper bound on any SCC missed).  Seeds: ``first_seed`` if in the part, else a random
    node of the part, from ``preferred`` nodes when it has any.  Returns (bool [N], {"searches",
    "proven", "bound"})."""
    best = np.zeros_like(domain)
    best_size = 0
    # Heap of parts by size (negated), then insertion order; the flag says whether it was trimmed.
    parts = [(-int(domain.sum()), 0, domain, bool(domain[first_seed]))]
    pushed = 1
    searches = 0
    while parts and -parts[0][0] > best_size and searches < max_searches:
        check_stop(should_stop, "embedding")
        _, _, part, trimmed = heapq.heappop(parts)
        if not trimmed:
            part = trim(exp, part, allow, should_stop=should_stop, backbone=backbone, enough=best_size)
            if part.sum() > best_size:
                heapq.heappush(parts, (-int(part.sum()), pushed, part, True))
                pushed += 1
            continue
        searches += 1
        if part[first_seed]:
            seed = first_seed
        else:
            pool = np.flatnonzero(part & preferred)
            seed = int(rng.choice(pool if len(pool) else np.flatnonzero(part)))
        fwd = flood(exp, np.array([seed]), True, part, allow, should_stop=should_stop, backbone=backbone)
        scc = flood(exp, np.array([seed]), False, fwd, allow, should_stop=should_stop, backbone=backbone)
        size = int(scc.sum())
        if size > best_size:
            best, best_size = scc, size
        for rest in (fwd & ~scc, part & ~fwd):
            n = int(rest.sum())
            if n > best_size:
                heapq.heappush(parts, (-n, pushed, rest, False))
                pushed += 1
        parts = [p for p in parts if -p[0] > best_size]
        heapq.heapify(parts)
        if progress:
            left = -parts[0][0] if parts else 0
            progress(min(1.0, searches / max_searches), f"largest SCC {best_size} nodes; largest part left {left}")
    if best_size == 0:  # every node was trimmed: no cycle anywhere, every SCC is one node
        best[first_seed if domain[first_seed] else int(np.flatnonzero(domain)[0])] = True
        best_size = 1
    bound = max([-p[0] for p in parts if -p[0] > best_size], default=best_size)
    return best, {"searches": searches, "proven": bound <= best_size, "bound": int(bound)}


def trim(exp: Expander, part: np.ndarray, allow=None, rounds: int = 8, chunk: int = 20000,
         should_stop=None, backbone: bool = False, enough: int = 0) -> np.ndarray:
    """``part`` (bool [N]) without nodes that have no edge in from it or no edge out into it,
    repeated while a round removes more than 5% (at most ``rounds``): such a node is a component
    of its own, so searching for larger components can skip it (most of a room's nodes that
    nothing enters, such as a turn clip ending at a heading only a wall lies behind, go here)."""
    part = part.copy()
    for _ in range(rounds):
        check_stop(should_stop, "embedding")
        ids = np.flatnonzero(part)
        pieces = [(ids[i:i + chunk], backbone) for i in range(0, len(ids), chunk)]
        keep = parallel_map(_trim_piece, pieces, None, (exp.shared(), Shared(part=part, allow=allow)), should_stop,
                            None, "embedding trim")
        drop = ~np.concatenate(keep) if keep else np.zeros(0, dtype=bool)
        part[ids[drop]] = False
        if drop.sum() <= 0.05 * len(ids) or len(ids) - drop.sum() <= enough:
            break  # settling, or already too small to hold a component larger than ``enough``
    return part


def _trim_piece(piece, exp, part, allow):
    """bool [len(ids)]: which of the nodes ``ids`` have an edge out into ``part`` and an edge in from it."""
    ids, backbone = piece
    keep_out = np.zeros(len(ids), dtype=bool)
    keep_in = np.zeros(len(ids), dtype=bool)
    src, tgt, _ = exp.out_edges(ids, allow, backbone)
    keep_out[src[part[tgt]]] = True
    t, src = exp.in_edges(ids, allow, backbone)
    keep_in[t[part[src]]] = True
    return keep_out & keep_in


def augmented_nodes(exp: Expander, scc: np.ndarray, depth: int, should_stop=None,
                    chunk: int = 20000) -> tuple[np.ndarray, np.ndarray]:
    """Section 4.5: bool [N] the backbone SCC plus every node one step off it (an action clip, or
    the clip leading into one) and paths of up to ``depth`` further clips from there, within which
    the augmented SCC is then found; and the ids of the nodes one step off."""
    added = scc.copy()
    ids = np.flatnonzero(scc)
    off = parallel_map(_expand_piece, [(ids[i:i + chunk], True, False) for i in range(0, len(ids), chunk)], None,
                       (exp.shared(), Shared(within=~scc, allow=None)), should_stop, None, "embedding actions")
    first = np.unique(np.concatenate(off)) if off else np.zeros(0, np.int64)
    added[first] = True
    frontier = first
    for _ in range(depth):
        if len(frontier) == 0:
            break
        tgts = []
        for i in range(0, len(frontier), chunk):
            _, tgt, _ = exp.out_edges(frontier[i:i + chunk])
            tgts.append(tgt[~added[tgt]])
        frontier = np.unique(np.concatenate(tgts))
        added[frontier] = True
    return added, first


def grown_component(exp: Expander, scc: np.ndarray, first: np.ndarray, added: np.ndarray, should_stop=None,
                    chunk: int = 20000) -> np.ndarray:
    """bool [N]: the strongly connected component of ``added`` holding the component ``scc`` (which
    stays strongly connected, its edges being edges here too): ``scc`` plus the nodes of ``added``
    reached from it and reaching it.  Every path out of ``scc`` leaves through a node of ``first``
    (its edges' targets outside it), so only the nodes added are flooded, forward from ``first``
    and then backward from those with an edge into ``scc``, not the whole component again."""
    rest = added & ~scc
    fwd = flood(exp, first, True, rest, should_stop=should_stop) & rest if len(first) else np.zeros_like(scc)
    ids = np.flatnonzero(fwd)
    back = []
    for i in range(0, len(ids), chunk):
        check_stop(should_stop, "embedding")
        src, tgt, _ = exp.out_edges(ids[i:i + chunk])
        back.append(ids[i:i + chunk][np.unique(src[scc[tgt]])])
    back = np.concatenate(back) if back else np.zeros(0, np.int64)
    out = scc.copy()
    if len(back):
        out |= flood(exp, back, False, fwd, should_stop=should_stop)
    return out


def count_edges(emb: Embedding, chunk: int = 20000) -> int:
    """Number of edges between nodes of the embedding's SCC."""
    exp = emb._expander
    ids = np.flatnonzero(emb.scc.ravel())
    total = 0
    inside = emb.scc.ravel()
    for i in range(0, len(ids), chunk):
        _, tgt, _ = exp.out_edges(ids[i:i + chunk])
        total += int(inside[tgt].sum())
    return total
