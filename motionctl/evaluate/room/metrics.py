"""What an embedded graph can do (paper 004, section 5): coverage, per-action coverage, path and
action efficiency (shortest embedded paths against reference grid paths, Monte-Carlo pairs
4-7 m apart) and local maneuverability, each as distributions as well as means; ``evaluate``
runs them all."""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import dijkstra

from ... import fmath
from ...play.graph import ACTION_TYPES, MotionGraph
from ...jobs import Shared, check_memory, check_stop, cluster, n_workers, parallel_map, progress_range
from ...rootframe import to_world
from .embedding import EmbedSettings, Embedding, embed
from .environment import Environment, Grid
from .paths import shortest_path

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
    t = fmath.log1p(cov[on]) / max(fmath.log1p(cov.max()), 1e-9)
    img[on, 0] = 0.1 + 0.3 * t
    img[on, 1] = 0.4 + 0.6 * t
    img[on, 2] = 0.1 + 0.3 * t
    return np.transpose(img, (1, 0, 2))  # rows = y


def action_kinds(graph: MotionGraph) -> np.ndarray:
    """str [C]: each clip's action type ("" for none), for vectorised selection of nodes."""
    return np.array([a[0] if a is not None else "" for a in graph.actions], dtype=object)


def action_centres_cells(emb: Embedding):
    """(node id, cell x, cell y) of the action centres of the SCC's nodes whose clip is an action,
    clip by clip (each clip's nodes are one slice of the bit array, not a search of every node)."""
    exp = emb._expander
    hb = 2 * np.pi / emb.grid.headings
    out_i, out_x, out_y = [], [], []
    for clip, act in enumerate(emb.graph.actions):
        if act is None:
            continue
        x, y, h = np.nonzero(emb.scc[:, :, :, clip])
        path = emb.graph.root_paths[clip]
        end, mid = path[-1], path[min(act[1], len(path) - 1)]
        th_start = h * hb - end[2]
        d = mid[:2] - end[:2]  # centre relative to the end, in the clip's start frame
        wx, wy = to_world(np.broadcast_to(d, (len(x), 2)), th_start).T
        out_i.append(exp.encode(x, y, h, np.full_like(x, clip)))
        out_x.append(np.floor(x + wx / emb.grid.cell + 0.5).astype(np.int64))
        out_y.append(np.floor(y + wy / emb.grid.cell + 0.5).astype(np.int64))
    if not out_i:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(out_i), np.concatenate(out_x), np.concatenate(out_y)


def action_coverage(emb: Embedding, centres=None) -> dict:
    """Per action type, the fraction of free cells where its centre can happen (eq. 7), and maps;
    ``centres``: ``action_centres_cells(emb)`` if already computed."""
    nodes, cx, cy = action_centres_cells(emb) if centres is None else centres
    free = emb.grid.free()
    nx, ny = free.shape
    out = {}
    kinds = action_kinds(emb.graph)[nodes % emb.graph.n]
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


HORIZON = 6.0  # paths are searched up to this many times the reference length (paper 004, appendix)


def path_efficiency(emb: Embedding, pairs: int = 100, action: str | None = None, min_dist: float = 4.0,
                    max_ref: float = 7.0, seed: int = 0, ref=None, centres=None, ends: str = "covered",
                    should_stop=None) -> dict:
    """Monte-Carlo path (or action) efficiency (eqs. 8, 9): pairs of covered cells at least
    ``min_dist`` apart whose reference path is at most ``max_ref`` long; the shortest embedded
    path (ending in an ``action`` centred on the end cell, for action efficiency) over the
    reference path, searched up to HORIZON times the reference length.

    As the paper counts it, a pair with no path within the horizon has the horizon as its length
    (a ratio of HORIZON), and action efficiency's end cells are drawn like path efficiency's from
    every covered cell (``ends="covered"``).  ``ends="action"`` draws them only from cells where
    the action can happen.  Returns the paper's mean, median and percentiles (failures at the
    horizon), the same over the paths found only (``*_found``), the failure rate, and the ratios
    of the paths found.  ``ref`` and ``centres`` (``reference_graph``, ``action_centres_cells``) may
    be passed in when already computed."""
    if ends not in ("covered", "action"):
        raise ValueError(f"ends must be 'covered' or 'action', got {ends!r}")
    grid = emb.grid
    rng = np.random.default_rng(seed)
    scc = emb.scc
    covered = np.argwhere(scc.any(axis=(2, 3)))
    ref = reference_graph(grid) if ref is None else ref
    ny = grid.shape[1]
    if action is not None:
        nodes, cx, cy = action_centres_cells(emb) if centres is None else centres
        is_act = action_kinds(emb.graph)[nodes % emb.graph.n] == action
        nodes, cx, cy = nodes[is_act], cx[is_act], cy[is_act]
        if len(nodes) == 0 and ends == "action":
            return _efficiency([], 0)
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
        if ends == "action" and not np.any((cx == b[0]) & (cy == b[1])):
            continue
        chosen.append((a, b, d_ref))

    if action is None:
        nodes = cx = cy = np.zeros(0, dtype=np.int64)
    found = parallel_map(_efficiency_piece, [(a, b, d, action is not None) for a, b, d in chosen],
                         shared=Shared(emb=emb, nodes=nodes, cx=cx, cy=cy), should_stop=should_stop,
                         what="path efficiency")
    return _efficiency([x for x in found if x is not None], len(found))


def _efficiency_piece(pair, emb, nodes, cx, cy):
    """One Monte-Carlo pair of ``path_efficiency``: the best path's length over the reference
    distance, or None when the goal cell has no node or no path is found within the horizon
    (``nodes``, ``cx``, ``cy``: the action centres, when the path must end in an action)."""
    a, b, d_ref, to_action = pair
    goal = nodes[(cx == b[0]) & (cy == b[1])] if to_action else emb.cell_nodes(*b)
    if not len(goal):
        return None
    best, length = shortest_path(emb, emb.cell_nodes(*a), goal, bound=max(HORIZON * d_ref, 10.0))
    return length / d_ref if np.isfinite(best) else None


def _efficiency(found: list, pairs: int) -> dict:
    """Figures of a Monte-Carlo efficiency run: ``found`` ratios out of ``pairs`` pairs."""
    r = np.asarray(found, dtype=float)
    paper = np.concatenate((r, np.full(pairs - len(r), HORIZON)))

    def stats(x, suffix=""):
        nan = float("nan")
        return {"mean" + suffix: float(x.mean()) if len(x) else nan,
                "median" + suffix: float(np.median(x)) if len(x) else nan,
                "p10" + suffix: float(np.percentile(x, 10)) if len(x) else nan,
                "p90" + suffix: float(np.percentile(x, 90)) if len(x) else nan}

    return {"pairs": pairs, "found": len(r), "unreached": pairs - len(r),
            "failure_rate": (pairs - len(r)) / pairs if pairs else float("nan"), "ratios": r.tolist(),
            **stats(paper), **stats(r, "_found")}


def _centre_time(graph: MotionGraph, kind: str) -> np.ndarray:
    """Seconds from a clip's start to an instance of ``kind`` in it (inf if none)."""
    out = np.full(graph.n, np.inf)
    for c, a in enumerate(graph.actions):
        if a is not None and a[0] == kind:
            out[c] = a[1] / graph.fps
        elif kind in graph.types[c] and a is None and kind not in ACTION_TYPES:
            out[c] = 0.0  # a locomotion type is reached when its clip starts
    return out


def _from_types(graph: MotionGraph, types) -> dict:
    """{motion type: bool [clips]} for the start types present in the graph."""
    out = {t: np.array([t in k for k in graph.types], dtype=bool) for t in types}
    return {t: m for t, m in out.items() if m.any()}


def _lm_stats(lm: np.ndarray) -> dict:
    ok = np.isfinite(lm)
    return {"mean": float(lm[ok].mean()) if ok.any() else float("inf"),
            "median": float(np.median(lm[ok])) if ok.any() else float("inf"),
            "reachable": float(ok.mean()) if len(ok) else 0.0}


def theoretical_maneuverability(graph: MotionGraph, kind: str, from_types=("run",)) -> dict:
    """LM_T,k (eq. 13): mean over clips of half their duration plus the quickest path in the
    motion graph from their end to an instance of ``kind``; under "from", the same over the
    clips of each start type (the paper's Table I: running -> action)."""
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
    return {**_lm_stats(lm), "values": lm[np.isfinite(lm)].tolist(),
            "from": {t: _lm_stats(lm[m]) for t, m in _from_types(graph, from_types).items()}}


def practical_maneuverability(emb: Embedding, kind, sample: float = 1.0, seed: int = 0, chunk: int = 20000,
                              should_stop=None, from_types=("run",)) -> dict:
    """LM_P,k (eq. 14): over (sampled) nodes of the embedded graph, half the clip's duration plus
    the quickest path in the embedded graph to an instance of ``kind``; computed for every node
    at once by label-correcting backwards from the nodes whose clip holds the instance.  Under
    "from", the same over the nodes whose clip is of each start type (running -> action).
    ``kind`` may be a list of kinds: then {kind: figures}, sharing the sample, one parallel piece each.

    Times are counted in frames, which clip lengths and instances are, so float32 holds them
    exactly (to 2**24 frames, 77 hours at 60 fps) in half the memory of seconds in float64."""
    kinds = [kind] if isinstance(kind, str) else list(kind)
    exp = emb._expander
    graph = emb.graph
    inside = emb.scc.ravel()
    n = inside.size
    check_memory(4.0 * n * n_workers(len(kinds)), f"local maneuverability over {n} grid nodes",
                 "use fewer clips (a larger Min Clip) or a coarser Cell")
    # The sample, drawn block by block over the node ids (the same draws as one call over all of them).
    rng = np.random.default_rng(seed)
    block = 1 << 24
    pick = []
    for i in range(0, n, block):
        ids = i + np.flatnonzero(inside[i:i + block])
        pick.append(ids if sample >= 1.0 else ids[rng.random(len(ids)) < sample])
    pick = np.concatenate(pick)
    cp = pick % graph.n
    starts = {t: m[cp] for t, m in _from_types(graph, from_types).items()}
    d = graph.end - graph.start  # frames
    stop = None if cluster() is not None else should_stop  # a cluster's pieces are cancelled between pieces
    centres = []
    for k in kinds:
        centre = _centre_time(graph, k) * graph.fps
        centres.append((np.where(np.isfinite(centre), np.round(centre), np.inf).astype(np.float32), chunk, stop))
    # One piece per kind: each its own work array, on threads or a cluster's workers.
    frames = parallel_map(_lm_piece, centres, None, (exp.shared(), Shared(inside=inside, d=d.astype(np.float32),
                                                                           pick=pick)), should_stop, None,
                          "local maneuverability")
    out = {}
    for k, f in zip(kinds, frames):
        lm = (0.5 * d[cp] + f.astype(np.float64)) / graph.fps
        out[k] = {**_lm_stats(lm), "nodes": int(len(pick)),
                  "from": {t: {**_lm_stats(lm[m]), "nodes": int(m.sum())} for t, m in starts.items()}}
    return out[kind] if isinstance(kind, str) else out


def _lm_piece(piece, exp, inside, d, pick):
    """Frames from the end of each sampled node's clip to the nearest instance of one kind."""
    centre, chunk, should_stop = piece
    f = np.empty(inside.size, dtype=np.float32)
    _frames_to(exp, inside, centre, d, f, chunk, should_stop)
    return f[pick]


def _frames_to(exp, inside: np.ndarray, centre: np.ndarray, d: np.ndarray, f: np.ndarray, chunk: int,
               should_stop) -> None:
    """Fill ``f`` (float32 [N]) with the frames from the end of each node's clip to the nearest
    instance (``centre`` [C]: frames from a clip's start to its instance, inf if none), by
    label-correcting backwards.  A node's time from its clip's start, min(centre, d + f), is
    worked out where needed, not stored."""
    C = len(d)
    f.fill(np.inf)
    scc = inside.reshape(exp.shape)
    frontier = [exp.encode(*np.nonzero(scc[:, :, :, c]), c) for c in np.flatnonzero(np.isfinite(centre))]
    frontier = np.unique(np.concatenate(frontier)) if frontier else np.zeros(0, dtype=np.int64)
    while len(frontier):
        check_stop(should_stop, "local maneuverability")
        new = []
        for i in range(0, len(frontier), chunk):
            part = frontier[i:i + chunk]
            cpart = part % C
            t_idx, src = exp.in_edges(part)
            keep = inside[src]
            t_idx, src = t_idx[keep], src[keep]
            cand = np.minimum(centre[cpart], d[cpart] + f[part])[t_idx]
            better = cand < f[src]
            src, cand = src[better], cand[better]
            if len(src) == 0:
                continue
            cs = src % C
            old = np.minimum(centre[cs], d[cs] + f[src])
            np.minimum.at(f, src, cand)  # repeats keep the least
            new.append(src[d[cs] + f[src] < old])
        frontier = np.unique(np.concatenate(new)) if new else np.zeros(0, dtype=np.int64)


def jump_reach(graph: MotionGraph, radius: float = 0.25) -> list:
    """Per jump flight in the graph, widest first: its take, the ground distance flown (take-off to
    landing), the widest chasm it clears (the flight less the character's ``radius`` at each edge:
    a room widens a chasm by it) and the run-up it needs (the ground path from the start of its
    clip, the latest the graph can enter it, to take-off).  A flight is one clip's (the graph is
    cut on the ground), so what a jump clears is what its capture flew."""
    out = []
    for c in range(graph.n):
        air = np.asarray(graph.in_air(c), dtype=bool)
        if not air[:-1].any():  # none, or only its last row: the next clip's take-off
            continue
        path = np.asarray(graph.root_paths[c])[:, :2]
        rows = np.flatnonzero(air)
        a, b = max(rows[0] - 1, 0), min(rows[-1] + 1, len(path) - 1)  # the last row on the ground, the first again
        flown = float(np.linalg.norm(path[b] - path[a]))
        out.append({"clip": c, "take": graph.names[graph.source[c]], "flight_m": flown,
                    "chasm_m": max(0.0, flown - 2 * radius),
                    "run_up_m": float(np.linalg.norm(np.diff(path[:a + 1], axis=0), axis=1).sum())})
    return sorted(out, key=lambda r: -r["chasm_m"])


def summary_lines(res: dict) -> list:
    """What an evaluation says beyond coverage and path efficiency's mean and median, one line per
    fact (the Evaluate panel's details and the command line print the same)."""
    pe = res["path_efficiency"]
    lines = []
    if not res["largest_proven"]:
        lines.append(f"not proven the largest component: one of up to {res['largest_bound']} nodes may have been missed")
    if res["unused_clips"]:
        lines.append(f"{len(res['unused_clips'])} of {res['embedding'].graph.n} clips never play in this room")
    lines.append(f"paths: {pe['unreached']}/{pe['pairs']} pairs without a path within {HORIZON:g}x the reference "
                 "(counted at it)")
    for k, v in res["action_coverage"].items():
        ae = res["action_efficiency"].get(k, {})
        lines.append(f"{k}: coverage {100 * v:.1f}%, action efficiency {ae.get('mean', float('nan')):.2f} mean, "
                     f"{ae.get('median', float('nan')):.2f} median, {ae.get('unreached', 0)}/{ae.get('pairs', 0)} "
                     "without a path")
    if res.get("jumps"):
        lines.append("jumps (widest chasm each clears, flight, run-up): " + "; ".join(
            f"{j['take']} {j['chasm_m']:.2f} m ({j['flight_m']:.2f} m, {j['run_up_m']:.1f} m)" for j in res["jumps"]))
    for k, v in res["maneuverability"].items():
        lines.append(f"{k}: maneuverability {v['theoretical']['mean']:.1f} s theory, {v['practical']['mean']:.1f} s "
                     "in this room" + "".join(f"; from {t} clips {f['mean']:.1f} s"
                                              for t, f in v["practical"].get("from", {}).items()))
    return lines


def evaluate(graph: MotionGraph, env: Environment, settings: EmbedSettings | None = None, pairs: int = 100,
             lm_sample: float = 1.0, progress=None, should_stop=None) -> dict:
    """Embed and compute every metric; returns a plain dict (maps as arrays)."""
    t0 = time.perf_counter()
    sub = progress_range(progress, 0.0, 0.5)
    emb = embed(graph, env, settings, sub, should_stop)
    t_embed = time.perf_counter() - t0
    t1 = time.perf_counter()
    cov = coverage(emb)
    centres = action_centres_cells(emb)
    acts = action_coverage(emb, centres)
    if progress:
        progress(0.55, "path efficiency")
    ref = reference_graph(emb.grid)
    pe = path_efficiency(emb, pairs, None, ref=ref, should_stop=should_stop)
    ae, ae_possible = {}, {}
    for kind in acts:
        if progress:
            progress(0.7, f"action efficiency: {kind}")
        ae[kind] = path_efficiency(emb, max(10, pairs // 4), kind, ref=ref, centres=centres, should_stop=should_stop)
        ae_possible[kind] = path_efficiency(emb, max(10, pairs // 4), kind, ref=ref, centres=centres, ends="action",
                                            should_stop=should_stop)
    kinds = sorted({a[0] for a in graph.actions if a is not None})
    if progress and kinds:
        progress(0.85, "local maneuverability: " + ", ".join(kinds))
    practical = practical_maneuverability(emb, kinds, lm_sample, should_stop=should_stop)
    lm = {kind: {"theoretical": theoretical_maneuverability(graph, kind), "practical": practical[kind]}
          for kind in kinds}
    result = {"environment": env.name, "nodes": emb.n_nodes, "embed_seconds": t_embed, "coverage_xy": cov["xy"],
              "coverage_xya": cov["xya"], "coverage_map": cov["map"], "free": cov["free"],
              "action_coverage": {k: v["coverage"] for k, v in acts.items()},
              "action_maps": {k: v["map"] for k, v in acts.items()},
              "path_efficiency": pe, "action_efficiency": ae, "action_efficiency_possible_ends": ae_possible,
              "maneuverability": lm,
              "largest_proven": emb.stats["largest_proven"], "largest_bound": emb.stats["largest_bound"],
              "unused_clips": emb.stats["unused_clips"],
              "jumps": jump_reach(graph, (settings or EmbedSettings()).radius),
              "metric_seconds": time.perf_counter() - t1, "embedding": emb}
    if progress:
        progress(1.0, f"coverage {100 * cov['xy']:.1f}% XY, path efficiency {pe['median']:.2f} median")
    return result
