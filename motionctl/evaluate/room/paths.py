"""Best paths in an embedded graph: vectorised A* (for path efficiency), a sampled best path, and
its motion (each clip's frames with the root on its edited path)."""

from __future__ import annotations

import numpy as np

from ... import quat
from ...arrays import find_sorted
from ...clip import Clip
from ...jobs import check_stop
from ...rootframe import to_local, wrap
from ...play.synth import BLEND, FrameTable, Step, SynthState, synthesize, to_clip
from .embedding import Embedding

BUCKET_CELLS = 1.0  # A* expands the open nodes within this many cells of the smallest cost + distance


class _Reached:
    """Labels of the nodes a search has reached (cost, true length, previous node, edit row), on
    their sorted ids: a search touches a corridor of the room, and arrays over every grid node
    would cost a page of memory for each node reached."""

    def __init__(self, ids: np.ndarray):
        self.ids = np.unique(ids)
        self.dist = np.zeros(len(self.ids))
        self.true = np.zeros(len(self.ids))
        self.par = np.full(len(self.ids), -1, dtype=np.int64)
        self.row = np.full(len(self.ids), -1, dtype=np.int64)

    def get(self, ids: np.ndarray, what: str = "dist") -> np.ndarray:
        """The label ``what`` of ``ids`` (inf where not reached)."""
        j, hit = find_sorted(self.ids, ids)
        return np.where(hit, getattr(self, what)[j], np.inf)

    def set(self, ids: np.ndarray, dist, true, par, row) -> None:
        """Labels of ``ids`` (sorted, distinct), reached or not."""
        j, hit = find_sorted(self.ids, ids)
        cols = (("dist", dist), ("true", true), ("par", par), ("row", row))
        for name, v in cols:
            getattr(self, name)[j[hit]] = v[hit]
        if not hit.all():
            pos = np.searchsorted(self.ids, ids[~hit])
            for name, v in (("ids", ids),) + cols:
                setattr(self, name, np.insert(getattr(self, name), pos, v[~hit]))


def _cost_left(emb: Embedding, goal_ids: np.ndarray) -> np.ndarray:
    """float [cells]: a lower bound of the cost from any node on a cell to a goal node.  A path
    into a goal ends with an edge from some cell s (edges into the goals, from the component), so
    it costs at least the straight distance to s plus that last edge's cost (steps are never
    shorter than their path, nor their path than its displacement): the least of these over s is
    admissible, and tighter than the distance to the goals' own cells, most of all for an action,
    whose goal nodes are reached only along the action clip, from its start."""
    exp = emb._expander
    nx, ny = emb.grid.shape
    t, src, rows = exp._edges(goal_ids, None, False, False)
    keep = emb.scc.ravel()[src]
    t, src, rows = t[keep], src[keep], rows[keep]
    left = np.full(nx * ny, np.inf)
    if not len(src):
        return left
    step = np.maximum(exp.cost[rows], 0.5 * emb.graph.duration[goal_ids[t] % exp.C])
    s_cell = src // (exp.H * exp.C)
    order = np.lexsort((step, s_cell))
    s_cell, step = s_cell[order], step[order]
    first = np.r_[True, s_cell[1:] != s_cell[:-1]]
    s_cell, step = s_cell[first], step[first]
    sx, sy = np.divmod(s_cell, ny)
    gx, gy = np.divmod(np.arange(nx * ny), ny)
    for i in range(0, len(s_cell), 256):
        d = np.hypot(gx[:, None] - sx[None, i:i + 256], gy[:, None] - sy[None, i:i + 256]) * emb.grid.cell
        left = np.minimum(left, (d + step[None, i:i + 256]).min(axis=1))
    return left


def shortest_path(emb: Embedding, starts: np.ndarray, goal: np.ndarray, bound: float = np.inf,
                  parents: dict | None = None):
    """Best path (by cost with the 0.5 m/s minimum speed) from any node in ``starts`` to any goal
    node (``goal``: their ids, or bool [N]), by vectorised A*: open nodes are expanded in buckets of
    cost + a lower bound of the cost left (``_cost_left``), a node may be reopened when a cheaper
    way in is found, and nothing that cannot beat the best path found (or ``bound``) is expanded.
    Returns (cost, true length), both inf when no path costs less than ``bound``;
    with ``parents`` given, fills {"end": node, "node": {node: previous}, "row": {node: edit row}}
    along the best path.  Labels live on the nodes reached only (``_Reached``), so a search costs
    what it expands, not the size of the grid."""
    exp = emb._expander
    inside = emb.scc.ravel()
    goal = np.asarray(goal)
    goal_ids = np.flatnonzero(goal) if goal.dtype == bool else np.unique(goal.astype(np.int64))
    starts = np.unique(np.asarray(starts, dtype=np.int64))
    if not len(starts) or not len(goal_ids):
        return np.inf, np.inf

    def is_goal(ids):
        return find_sorted(goal_ids, ids)[1]

    hit = starts[is_goal(starts)]
    if len(hit):
        if parents is not None:
            parents.update(end=int(hit[0]), node={}, row={})
        return 0.0, 0.0
    lab = _Reached(starts)
    best, best_true, best_node = bound, np.inf, -1
    left = _cost_left(emb, goal_ids)
    block = exp.H * exp.C

    def heuristic(ids):
        return left[ids // block]

    # Best-first in buckets: expand every open node whose cost + cost left is within ``bucket`` of
    # the smallest; stop when no open node can beat the best path found.
    bucket = BUCKET_CELLS * emb.grid.cell
    open_ids = starts
    while len(open_ids):
        f_open = lab.get(open_ids) + heuristic(open_ids)
        f_min = f_open.min()
        if f_min >= best:
            break
        sel = f_open <= f_min + bucket
        frontier, open_ids = open_ids[sel], open_ids[~sel]
        src, tgt, rows = exp.out_edges(frontier)
        keep = inside[tgt]
        src, tgt, rows = src[keep], tgt[keep], rows[keep]
        c = tgt % exp.C
        step = np.maximum(exp.cost[rows], 0.5 * emb.graph.duration[c])
        at = find_sorted(lab.ids, frontier)[0][src]  # open nodes are all reached
        nd = lab.dist[at] + step
        nt = lab.true[at] + exp.cost[rows]
        ok = (nd + np.where(is_goal(tgt), 0.0, heuristic(tgt)) < best) & (nd < lab.get(tgt))
        tgt, nd, nt, srcn, rows = tgt[ok], nd[ok], nt[ok], frontier[src[ok]], rows[ok]
        if len(tgt) == 0:
            continue
        order = np.lexsort((nd, tgt))
        tgt, nd, nt, srcn, rows = tgt[order], nd[order], nt[order], srcn[order], rows[order]
        first = np.r_[True, tgt[1:] != tgt[:-1]]
        tgt, nd, nt, srcn, rows = tgt[first], nd[first], nt[first], srcn[first], rows[first]
        lab.set(tgt, nd, nt, srcn, rows)
        g = is_goal(tgt)
        if g.any():
            j = np.argmin(np.where(g, nd, np.inf))
            if nd[j] < best:
                best, best_true, best_node = float(nd[j]), float(nt[j]), int(tgt[j])
        open_ids = np.union1d(open_ids, tgt[~g])
    if best_node < 0:
        return np.inf, np.inf
    if parents is not None:
        chain, rowmap, node = {}, {}, best_node
        while lab.par[j := int(find_sorted(lab.ids, np.array([node]))[0][0])] >= 0:  # the path's nodes are reached
            chain[node], rowmap[node] = int(lab.par[j]), int(lab.row[j])
            node = int(lab.par[j])
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
    cells = np.argwhere(emb.scc.any(axis=(2, 3)))
    for _ in range(tries):
        check_stop(should_stop, "best path")
        a, b = cells[rng.integers(0, len(cells), 2)]
        if not min_dist <= np.hypot(*(a - b)) * emb.grid.cell <= max_dist:
            continue
        parents = {}
        best, _ = shortest_path(emb, emb.cell_nodes(*a), emb.cell_nodes(*b), parents=parents)
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


def path_motion(emb: Embedding, edges: list, table: FrameTable, blend: float = BLEND) -> Clip:
    """The motion along a path of ``sample_best_path``, synthesized: each graph clip played from
    where the last one ended (inertialized), edited (eq. 16, ``Step.edit``) so it ends exactly on its
    grid node.  ``table``: the graph's source clips at its rate (``GraphController.frame_table``)."""
    graph, exp, grid = emb.graph, emb._expander, emb.grid
    hb = 2 * np.pi / grid.headings
    clip, sx, sy, sh, _ = edges[0]
    state = SynthState(grid.origin + (np.array([sx, sy]) + 0.5) * grid.cell, sh * hb)
    roots, rots = [], []
    for clip, sx, sy, sh, row in edges:
        src, lo, hi = int(graph.source[clip]), int(graph.start[clip]), int(graph.end[clip])
        step = Step.piece(src, lo, hi - lo)
        _, _, natural, _, _ = synthesize(table, [step], state, blend)
        off = exp.off[row]
        target = grid.origin + (np.array([sx + off[0], sy + off[1]]) + 0.5) * grid.cell
        step.edit = np.array([*to_local(target - natural.ground, state.yaw),
                              float(wrap((sh + off[2]) * hb - natural.yaw))])
        root, rot, state, _, _ = synthesize(table, [step], state, blend)
        roots.append(root)
        rots.append(rot)
    return to_clip(table, np.concatenate(roots), quat.make_continuous(np.concatenate(rots)), "best_path")
