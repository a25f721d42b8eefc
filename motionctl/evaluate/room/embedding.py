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

from ...play.graph import MotionGraph
from ...errors import MotionctlError
from ...jobs import Shared, check_stop, parallel_map, progress_range
from .environment import Environment, Grid, rasterise
from .grid import EditModel, Footprints, footprints
from .expander import Expander, clip_permissions  # noqa: F401  (clip_permissions: the room's public API)

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
    sub = progress_range(progress, 0.05, 0.55)
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
