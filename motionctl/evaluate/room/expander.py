"""The edges of a motion graph embedded in a room (paper 004, section 4.2, Appendix A): which clips may
go where (``clip_permissions``) and every edge out of and into a grid node (``Expander``), made on
demand from tables keyed by a node's (heading, clip), vectorised over whole frontiers."""

from __future__ import annotations


import numpy as np

from ...arrays import ranks
from ...play.graph import ACTION_TYPES, MotionGraph
from ...jobs import Shared, check_memory, n_workers, parallel_map
from ...tags import canonical_set
from .environment import CHASM, JUMP_TYPES, LOW, STEP_TYPES, WALL, Grid
from .grid import Footprints

LOCAL_ONLY = frozenset({"graph", "fp", "bits", "sw", "sw_flat", "_shared"})  # attributes a worker is not sent


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
        return {k: v for k, v in self.__dict__.items() if k not in LOCAL_ONLY}

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
