"""Motion graphs (paper 004's construction: Lee et al. 2002 costs, Appendix B coalescing).

Frames are compared by weighted joint-angle differences (each joint's rotation as a rotation
vector, weighted by the length of the bones it moves, the root by the body height) plus the
same for angular velocities; a transition i -> j is a candidate when frame i resembles frame
j - 1, the cost is a local minimum within a 5-frame radius and below the threshold.  The cost
matrix is computed in row blocks (never N x N at once).  Coalescing moves all transition ends
inside a window of one minimum clip length onto the window's best frame, greedily by value with
incremental updates, until clips are at least ``min_clip`` long; long clips are split at
``max_clip``; each clip end keeps its ``branching`` best transitions (the cheapest into each
other source file first; the paper tuned per-file weights by hand to the same end: graphs of
3-8 transitions per clip); source clips these steps cut off (runs, stops) are put back with their
best unmerged transitions into and out of the rest (``reconnect``, Keep Every Clip); the largest
strongly connected component is kept, with statistics of what was kept and what was dropped.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from scipy import sparse
from scipy.ndimage import minimum_filter
from scipy.sparse.csgraph import connected_components

from ... import quat
from ..base import working_set
from ...jobs import Shared, check_memory, check_stop, n_workers, one_blas_thread, parallel_map, progress_range
from ...body import Body, action_centres, flight
from ...clip import MotionDatabase
from ...errors import MotionctlError
from ...rootframe import WARP_RATE, displacement, facing_ahead, root_frame
from ...settings import internal, setting
from ...play.graph import ACTION_TYPES, MotionGraph  # noqa: F401  (the graph this module builds)
from ...tags import JUMPS, canonical, canonical_set
from .reconnect import RELAX, ROUGH_UNIT, reconnect  # noqa: F401  (RELAX: what reconnecting may add)



@dataclass
class GraphSettings:
    """How a motion graph is built (paper 004's construction)."""

    fps: float = internal(30.0, min=10.0, max=240.0)
    threshold: float = setting(0.08, "Threshold", "Highest frame difference (weighted joint angles and velocities, "
                               "rad²: 0.08 is about 16°) accepted for a transition: raise it for a larger graph with "
                               "rougher transitions", min=0.001, max=10.0, group="Graph")
    radius: int = internal(5, min=1, max=120)  # frames: a candidate must be the minimum within this radius
    min_clip: float = setting(0.5, "Min Clip", "Transitions closer than this are merged (Appendix B coalescing). "
                              "Runs need 0.3 s: a longer window reroutes their transitions out of stride and drops "
                              "them (Keep Every Clip puts them back, unmerged)", min=0.05, max=10.0, unit="TIME", group="Graph")
    max_clip: float = setting(1.5, "Max Clip", "Longer clips are split, so the character can change course this "
                              "often", min=0.1, max=60.0, unit="TIME", group="Graph")
    velocity_weight: float = internal(0.3, min=0.0, max=100.0)
    desirability: str = setting("", "Desirability", "Per motion type, a weight on transitions to and from its "
                                "clips, e.g. 'run=3, sneak=2' (paper 004's desirability weights): a transition's "
                                "cost is divided by the weights of both its ends, so fast motions whose poses "
                                "change quickly keep transitions after coalescing", group="Graph")
    branching: int = setting(3, "Branching", "Most transitions kept from one clip end, the best into each other "
                             "take first (0 = all: larger graphs, slower evaluation)", min=0, max=64, group="Graph")
    block: int = internal(512, min=1, max=1 << 20)  # rows of the cost matrix per block
    policy: str = setting("lookahead", "Policy", "How the controller walks the graph", choices=(
        ("greedy", "Greedy", "One clip ahead: the successor and warp (up to Max Warp) whose own frames best follow "
         "the wanted heading and speed, with no value beyond it (what a game starts from)"),
        ("lookahead", "Look Ahead", "Value iteration over the clips for the wanted heading, each clip warped up to "
         "Max Warp (paper 002's graph controller)")), group="Control")
    max_warp: float = setting(np.radians(45.0), "Max Warp", "The most a clip's facing may be turned while it "
                              "plays", min=0.0, max=np.pi / 2, unit="ROTATION", group="Control")
    warp_rate: float = setting(WARP_RATE, "Warp Rate", "The fastest a warp may turn the facing, per "
                               "second: a short clip warps less than Max Warp (the motion field's Turn Warp "
                               "bounds it alike; 0: no bound, under which a one-frame clip turns 45° in a "
                               "frame)", min=0.0, max=np.pi, unit="ROTATION", group="Control")
    speed_samples: int = setting(5, "Speed Samples", "The asked speeds Look Ahead's values know (and "
                                 "Greedy weighs), from standing to the graph's fastest clip; 0: it follows the "
                                 "heading alone (the paper's comparison)", min=0, max=12, group="Control")
    speed_weight: float = setting(1.0, "Speed Weight", "With speeds: reward lost per m/s off the asked "
                                  "speed, every frame (per radian off the heading it is 1)", min=0.0, max=10.0,
                                  group="Control")
    reconnect: bool = setting(True, "Keep Every Clip", "Put back source clips (runs, stops) that merging and "
                              "the branching budget cut off, with their best transitions into and out of the "
                              "rest (off: the paper's construction, which kept 40% of subject 16 and no run)",
                              group="Graph")
    warps: int = internal(7, min=1, max=64)  # warp values over [-max_warp, max_warp]
    discount: float = internal(0.99, min=0.0, max=0.9999)  # per frame, as the motion field's

    def check(self) -> None:
        if self.min_clip >= self.max_clip:
            raise MotionctlError(f"the minimum clip length ({self.min_clip} s) must be shorter than the maximum "
                                 f"({self.max_clip} s)")
        self.weights()

    def weights(self) -> dict:
        """{motion type: weight} parsed from ``desirability`` ('run=3, sneak=2')."""
        out = {}
        for part in filter(None, (p.strip() for p in self.desirability.replace(";", ",").split(","))):
            kind, eq, value = part.partition("=")
            try:
                w = float(value) if eq else float("nan")
            except ValueError:
                w = float("nan")
            if not kind.strip() or not np.isfinite(w) or w <= 0:
                raise MotionctlError(f"desirability: {part!r} is not 'type=weight' with a positive weight "
                                     "(e.g. 'run=3, sneak=2')")
            out[canonical(kind.strip().lower())] = w
        return out

    def clip_weights(self, clips) -> np.ndarray:
        """float [clips]: each clip's desirability, the largest of its types' weights (1 if none)."""
        table = self.weights()
        return np.array([max([table.get(t, 1.0) for t in canonical_set(c.tags)] or [1.0]) for c in clips])


# ----------------------------------------------------------------------------- frame costs

def frame_features(clips, velocity_weight: float = 0.3, headings=None) -> np.ndarray:
    """[N, D] per frame: weighted rotation vectors of every joint (the root's relative to the
    heading, each clip's ``root_frame`` yaw unless given) and of their per-frame changes, so
    squared distances are Lee et al.'s costs.  The rotation vectors are logs about each joint's
    mean rotation over ``clips`` (``quat.mean``), so the costs are the same whatever rest frame a
    file gives a joint (issue 58): a rest turn B turns a joint's vectors by B and keeps every
    distance.  Logs about the identity followed the file (a re-rested CMU 16 changed costs by up to
    50), and where a joint's rotations sit near 180 degrees from its rest they flip sign: CMU 16's
    root, 178.8 degrees from its rest frame about the heading at the median, gave two random frames
    a median root cost of 36.7 for a true (geodesic) 0.0125.  About the mean, a log differs from
    the geodesic only for rotations far from the joint's usual ones."""
    sk = clips[0].skeleton
    n_joints = sk.n_joints
    # A joint's weight: the length of the bones it moves (its subtree's bone lengths); the root's the
    # body's height along its bones (the rest pose's height follows the file's rest frames).
    lengths = np.linalg.norm(sk.offsets, axis=1)
    w = lengths.copy()
    for j in range(n_joints - 1, 0, -1):
        w[sk.parents[j]] += w[j]
    w[0] = max(Body.of(sk).bone_height, 1e-3)
    w = np.sqrt(w / w.sum())
    rels = [facing_ahead(c, None if headings is None else headings[i]) for i, c in enumerate(clips)]
    about = quat.conj(quat.mean_of(rels))
    feats = []
    for c, rel in zip(clips, rels):
        rv = quat.log(quat.mul(about[None], rel)) * w[None, :, None]
        vel = np.zeros_like(rv)
        if c.n_frames > 1:
            vel[1:] = rv[1:] - rv[:-1]
            vel[0] = vel[1]
        vel *= np.sqrt(velocity_weight) * c.fps / 30.0
        feats.append(np.concatenate((rv.reshape(c.n_frames, -1), vel.reshape(c.n_frames, -1)), axis=1))
    return np.concatenate(feats)


def candidate_transitions(feats: np.ndarray, clip_of: np.ndarray, s: GraphSettings, should_stop=None,
                          progress=None, weight=None, n_jobs=None) -> tuple:
    """(from [T], to [T], cost [T]) of transitions i -> j where frame i ≈ frame j - 1 and
    D(i, j - 1) is a local minimum within ``radius`` below ``threshold``; blocked over rows (the
    blocks are ``parallel_map`` pieces: threads, or a Dask cluster's workers).
    ``weight`` float [frames] (desirability, or None): D is divided by both frames' weights."""
    n = len(feats)
    workers = n_workers(n_jobs)
    # A block holds a few [rows + halo, n] float64 arrays (costs, their local minima, masks).
    check_memory(workers * 4 * 8.0 * (s.block + 2 * s.radius) * n, f"the frame costs of {n} frames",
                 "set MOTIONCTL_JOBS to fewer parallel blocks")
    blocks = [(r0, min(r0 + s.block, n)) for r0 in range(0, n, s.block)]
    shared = Shared(feats=feats, sq=np.sum(feats**2, axis=1), clip_of=clip_of, weight=weight)
    found = parallel_map(partial(_candidate_block, radius=s.radius, threshold=s.threshold), blocks, n_jobs, shared,
                         should_stop, progress, "frame cost blocks")
    return tuple(np.concatenate([f[k] for f in found]) for k in range(3))


def _candidate_block(blk, feats, sq, clip_of, weight, radius, threshold):
    """Candidates with their from frame in rows r0:r1 (see ``candidate_transitions``).

    The block's costs are a matrix product (BLAS: fast), whose last bits differ between CPUs and
    BLAS kernels; a local minimum or a threshold decided on them flipped where two costs nearly
    tied (an 11-clip graph had 101 clips on an AVX-512 CPU and 109 on an AVX2 one).  So the
    product only screens: every entry that could be a candidate within ``_SCREEN`` of rounding is
    decided again on ``pair_cost``, which gives the same bits on every CPU, and where its
    neighbourhood nearly ties, on the neighbourhood's ``pair_cost`` too."""
    r0, r1 = blk
    n, r = len(feats), radius
    a0, a1 = max(0, r0 - r), min(n, r1 + r)  # halo rows for the local-minimum test
    d = sq[a0:a1, None] - 2.0 * feats[a0:a1] @ feats.T + sq[None]
    np.maximum(d, 0, out=d)
    tau = _SCREEN * float(sq.max(initial=0.0))  # far above the product's rounding (about 1e-15 of it)
    if weight is not None:
        d /= weight[a0:a1, None] * weight[None]
        tau /= float(weight.min()) ** 2
    ring = np.ones((2 * r + 1, 2 * r + 1), dtype=bool)
    ring[r, r] = False
    others = minimum_filter(d, footprint=ring, mode="nearest")  # each entry's neighbourhood without it
    rows, cols = np.nonzero((d <= others + 2 * tau) & (d < threshold + tau))  # every candidate, and some more
    keep = (rows + a0 >= r0) & (rows + a0 < r1)
    i, j1 = rows[keep] + a0, cols[keep]  # i resembles j1 = j - 1: the transition goes i -> j1 + 1
    j = j1 + 1
    valid = (j < n) & (clip_of[np.minimum(j, n - 1)] == clip_of[j1])  # j1 + 1 stays in j1's clip
    # Not a trivial jump within a clip (a few frames back or forth).
    same = clip_of[i] == clip_of[np.minimum(j, n - 1)]
    near = same & (np.abs(j - (i + 1)) < 2 * r + 1)
    sel = valid & ~near
    i, j1, screened, nearest = i[sel], j1[sel], d[rows[keep][sel], cols[keep][sel]], others[rows[keep][sel], cols[keep][sel]]
    cost = _weighted(pair_cost(feats, i, j1), weight, i, j1)
    minimum = screened < nearest - 2 * tau  # a clear minimum whatever the rounding
    unsure = np.flatnonzero(~minimum)
    if len(unsure):  # a near tie in the neighbourhood: decided on the exact costs around it
        off = np.arange(-r, r + 1)
        wi = np.clip(i[unsure, None, None] + off[None, :, None], 0, n - 1)
        wj = np.clip(j1[unsure, None, None] + off[None, None, :], 0, n - 1)
        wi, wj = np.broadcast_arrays(wi, wj)
        around = _weighted(pair_cost(feats, wi.ravel(), wj.ravel()), weight, wi.ravel(), wj.ravel())
        minimum[unsure] = cost[unsure] <= around.reshape(len(unsure), -1).min(axis=1)
    ok = minimum & (cost < threshold)
    return i[ok], j1[ok] + 1, cost[ok]


_SCREEN = 1e-9  # the matrix product's rounding allowed for, relative to the largest squared feature norm


def pair_cost(feats: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """float [T]: the frame cost between frames i [T] and j [T], summed squared feature differences
    in numpy's own loops (no BLAS): the same bits on every CPU and for any batch, so every decision
    on costs (candidates, coalescing, branching, roughness) is the same everywhere."""
    diff = feats[i] - feats[j]
    return np.einsum("ij,ij->i", diff, diff)


def _weighted(cost: np.ndarray, weight, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``cost`` of frame pairs (i, j) divided by both frames' desirability ``weight`` (None: as is)."""
    return cost if weight is None else cost / (weight[i] * weight[j])


# ----------------------------------------------------------------------------- coalescing

def coalesce(feats: np.ndarray, frm: np.ndarray, to: np.ndarray, clip_of: np.ndarray, window: int,
             threshold: float, should_stop=None, weight=None) -> tuple[np.ndarray, np.ndarray]:
    """Appendix B on cut positions: a transition i -> j cuts its source clip after i (position
    i + 1) and its target clip before j (position j).  While some window of ``window`` positions
    inside one source clip holds more than one cut (source starts and ends count as fixed cuts),
    take the window and position c with the highest value — the summed quality (threshold - cost)
    of every transition end in the window rerouted through c — and reroute them (ends that would
    cost more than the threshold drop their transition).  Window values are updated incrementally
    (a heap with lazy invalidation: only windows overlapping changed positions are rescored), so
    the whole pass is about linear in the number of transitions.  Returns surviving (from, to).
    (One function of about 100 lines on purpose: its helpers share the heap and position index of
    one greedy pass, and apart they would read worse.)"""
    n = len(feats)
    starts = np.r_[0, np.flatnonzero(np.diff(clip_of)) + 1]
    stops = np.r_[starts[1:], n]
    lo_of, hi_of = starts[clip_of], stops[clip_of]  # each frame's clip as [lo, hi)

    frm, to = frm.copy(), to.copy()
    alive = np.ones(len(frm), dtype=bool)
    at = {}  # cut position -> set of (transition, side); side 0 = from end (position frm + 1)

    def add(t, side):
        at.setdefault(int(frm[t] + 1 if side == 0 else to[t]), set()).add((t, side))

    for t in range(len(frm)):
        add(t, 0)
        add(t, 1)
    fixed = set(starts.tolist()) | set(stops.tolist())

    def clip_range(pos):
        f = min(pos, n - 1)
        return int(lo_of[f]), int(hi_of[f])

    def rerouted_quality(members, cs):
        """float [M, K]: quality of each member transition end rerouted through each candidate
        cut position in ``cs`` (-1 where the rerouted transition would leave its clip).  Either
        way one frame of the pair is the member's own (the frame before its target for a from
        end, its from frame for a to end) and the other is c - 1: one small matrix product."""
        ts = np.fromiter((t for t, _ in members), dtype=np.int64, count=len(members))[:, None]
        side0 = np.fromiter((sd == 0 for _, sd in members), dtype=bool, count=len(members))[:, None]
        c = np.asarray(cs, dtype=np.int64).reshape(1, -1)
        own = np.where(side0, to[ts] - 1, frm[ts])[:, 0]  # [M]
        tgt = np.where(side0, to[ts], c)
        ok = (own[:, None] >= 0) & (c - 1 >= 0) & (tgt < n)
        own, prev, tgt = np.clip(own, 0, n - 1), np.clip(c[0] - 1, 0, n - 1), np.clip(tgt, 0, n - 1)
        # The rerouted transition's target must follow its compared frame in the same clip.
        ok &= np.where(side0, lo_of[own][:, None] == lo_of[tgt], lo_of[prev][None, :] == lo_of[tgt])
        a, b = np.broadcast_arrays(own[:, None], prev[None, :])
        d = _weighted(pair_cost(feats, a.ravel(), b.ravel()), weight, a.ravel(), b.ravel()).reshape(a.shape)
        return np.where(ok, threshold - d, -1.0)

    def score(w0, lo, hi):
        positions = [p for p in range(w0, min(w0 + window, hi + 1)) if p in at or p in fixed]
        if len(positions) <= 1 or not any(p in at for p in positions):
            return None
        members = [m for p in positions if p in at for m in at[p] if alive[m[0]]]
        if not members:
            return None
        fixed_here = [p for p in positions if p in fixed]
        cands = fixed_here if fixed_here else list(range(max(w0, lo + 1), min(w0 + window, hi)))
        if not cands:
            return None
        values = np.maximum(rerouted_quality(members, cands), 0.0).sum(axis=0)
        k = int(np.argmax(values))  # first best, as a sequential scan would pick
        return float(values[k]), cands[k]

    heap, version = [], {}

    def push(w0, lo, hi):
        version[w0] = version.get(w0, 0) + 1
        sc = score(w0, lo, hi)
        if sc is not None:
            heapq.heappush(heap, (-sc[0], w0, sc[1], version[w0], lo, hi))

    def windows_around(pos):
        lo, hi = clip_range(pos)
        return [(w, lo, hi) for w in range(max(lo, pos - window + 1), min(pos, hi) + 1)]

    for pos in sorted(at):
        for w in windows_around(pos):
            if w[0] not in version:
                push(*w)
    steps = 0
    while heap:
        steps += 1
        if steps % 200 == 0:
            check_stop(should_stop, "coalescing transitions")
        _, w0, c, ver, lo, hi = heapq.heappop(heap)
        if version.get(w0) != ver:
            continue
        positions = [p for p in range(w0, min(w0 + window, hi + 1)) if p in at and p != c]
        members = [m for p in positions for m in at.pop(p) if alive[m[0]]]
        if not members:
            push(w0, lo, hi)
            continue
        q = rerouted_quality(members, [c])[:, 0]
        for (t, side), qq in zip(members, q.tolist()):
            if side == 0:
                frm[t] = c - 1
            else:
                to[t] = c
            if qq <= 0:
                alive[t] = False
            else:
                add(t, side)
        for p in set(positions) | {c}:
            for w in windows_around(p):
                push(*w)
    ok = alive & (frm >= 0) & (to < n)
    return frm[ok], to[ok]


def limit_branching(feats: np.ndarray, frm: np.ndarray, to: np.ndarray, clip_of: np.ndarray, k: int, weight=None):
    """Keep at most ``k`` transitions out of each clip end (from frame): first the cheapest into
    each other source file, best first, so a hub links to different motions rather than to
    every cycle of the same walk; then the cheapest of the rest.  Returns surviving (from, to)."""
    if len(frm) == 0:
        return frm, to
    cost = _weighted(pair_cost(feats, frm, to - 1), weight, frm, to - 1)
    order = np.lexsort((cost, clip_of[to], frm))
    f, t, c = frm[order], to[order], cost[order]
    first_in_file = np.r_[True, (f[1:] != f[:-1]) | (clip_of[t[1:]] != clip_of[t[:-1]])]
    # Rank within each from frame: files' best transitions (by cost) before the others.
    order2 = np.lexsort((c, ~first_in_file, f))
    f, t = f[order2], t[order2]
    starts = np.r_[0, np.flatnonzero(f[1:] != f[:-1]) + 1]
    rank = np.arange(len(f)) - np.repeat(starts, np.diff(np.r_[starts, len(f)]))
    keep = rank < k
    return f[keep], t[keep]


# ----------------------------------------------------------------------------- building

def build_graph(source, settings: GraphSettings | None = None, progress=None, should_stop=None) -> MotionGraph:
    """A motion graph of a MotionDatabase or clip list; see the module docstring."""
    s = settings or GraphSettings()
    s.check()
    t0 = time.perf_counter()
    clips = working_set(source.clips if isinstance(source, MotionDatabase) else source, s.fps, False)
    if not clips:
        raise MotionctlError("no clips to build a motion graph from: select at least one")
    lengths = np.array([c.n_frames for c in clips])
    clip_of = np.repeat(np.arange(len(clips)), lengths)
    first = np.r_[0, np.cumsum(lengths)[:-1]]
    frames = [root_frame(c) for c in clips]  # ground track and heading, once per source clip
    feats = frame_features(clips, s.velocity_weight, [yaw for _, yaw in frames])
    desire = s.clip_weights(clips)
    weight = desire[clip_of] if np.any(desire != 1.0) else None
    sub = progress_range(progress, 0.0, 0.1)  # the costs; coalescing took 95% of a build (10 CMU 16 clips)
    # The frame costs' matrix products only screen (``_candidate_block``): every choice is made on
    # ``pair_cost``, the same on every CPU, BLAS kernel and thread count.
    with one_blas_thread():
        limit = RELAX * min(s.threshold, ROUGH_UNIT)  # what reconnecting may add: no rougher at a loose threshold
        wide = replace(s, threshold=max(s.threshold, limit if s.reconnect else 0.0))
        raw = candidate_transitions(feats, clip_of, wide, should_stop, sub, weight)
        base = raw[2] < s.threshold  # exactly the candidates under the threshold (local minima either way)
        frm, to = raw[0][base], raw[1][base]
        raw = tuple(r[raw[2] < limit] for r in raw)
        n_candidates = len(frm)
        window = max(2, int(round(s.min_clip * s.fps)))
        if progress:
            progress(0.1, f"coalescing {n_candidates} candidate transitions")
        frm, to = coalesce(feats, frm, to, clip_of, window, s.threshold, should_stop, weight)
    if s.branching > 0:
        frm, to = limit_branching(feats, frm, to, clip_of, s.branching, weight)
    n_pruned = len(frm)
    if s.reconnect:
        special = np.array([bool(canonical_set(c.tags) & (JUMPS | set(ACTION_TYPES))) for c in clips])
        frm, to = reconnect(frm, to, raw, clip_of, lengths, first, s.threshold, special)
    # A clip neither starts nor ends in a jump's flight: no transition and no split in mid-air.
    # A flight cut in two left a clip end, a node, over the chasm the jump was to cross (nodes stand
    # on the floor), so no chasm wider than the part of a flight before its cut was ever crossed.
    centres = [action_centres(c) for c in clips]  # annotated, or detected from the body
    flights = {j: flight(c, centres[j]) for j, c in enumerate(clips) if canonical_set(c.tags) & JUMPS}
    in_air = _mid_flight(flights, first, lengths)
    ground = ~in_air[frm + 1] & ~in_air[to]
    frm, to = frm[ground], to[ground]
    # Clip boundaries: after every 'from' frame and before every 'to' frame, plus source ends.
    cuts = np.unique(np.concatenate((first, first + lengths, frm + 1, to)))
    cuts = _split_long(cuts, first, lengths, int(round(s.max_clip * s.fps)))
    cuts = cuts[~in_air[cuts]]
    starts = cuts[:-1]
    ends = cuts[1:]
    src = clip_of[np.minimum(starts, len(clip_of) - 1)]
    keep = (ends > starts) & (clip_of[ends - 1] == src)
    starts, ends, src = starts[keep], ends[keep], src[keep]
    k = len(starts)
    clip_at = np.full(len(clip_of) + 1, -1)  # frame -> the graph clip holding it
    spans = ends - starts
    clip_at[np.arange(spans.sum()) + np.repeat(starts - np.cumsum(spans) + spans, spans)] = np.repeat(np.arange(k), spans)
    edges = []
    nat = np.flatnonzero(src[1:] == src[:-1]) if k > 1 else np.zeros(0, int)
    nat = nat[ends[nat] == starts[nat + 1]]
    edges.append(np.column_stack((nat, nat + 1)))
    a = clip_at[frm]
    b = clip_at[to]
    ok = (a >= 0) & (b >= 0) & (ends[np.maximum(a, 0)] == frm + 1) & (starts[np.maximum(b, 0)] == to)
    edges.append(np.column_stack((a[ok], b[ok])))
    edges = np.unique(np.concatenate(edges), axis=0) if k else np.zeros((0, 2), int)
    # Largest strongly connected component.
    adj = sparse.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(k, k))
    n_comp, labels = connected_components(adj, directed=True, connection="strong")
    big = np.argmax(np.bincount(labels)) if k else 0
    in_scc = labels == big
    remap = np.cumsum(in_scc) - 1
    e_keep = in_scc[edges[:, 0]] & in_scc[edges[:, 1]]
    g_edges = remap[edges[e_keep]]
    sel = np.flatnonzero(in_scc)
    types, actions, paths, airborne = [], [], [], []
    for i in sel:
        c = clips[src[i]]
        lo, hi = starts[i] - first[src[i]], ends[i] - first[src[i]]
        path = _root_path(*frames[src[i]], lo, hi)
        air = np.zeros(len(path), dtype=bool)  # a row per root-path row
        if src[i] in flights:
            air[:] = flights[src[i]][lo:lo + len(path)]
        kinds = canonical_set(c.tags)
        if not air.any():
            kinds -= JUMPS  # the run-up or landing of a jump take is on the ground
        types.append(kinds)
        actions.append(_clip_action(kinds, lo, hi, centres[src[i]]))
        paths.append(path)
        airborne.append(air)
    kept = float((ends[sel] - starts[sel]).sum() / s.fps)
    total = float(lengths.sum() / s.fps)
    stats = {"candidates": int(n_candidates), "transitions": int(len(frm)), "reconnected": int(len(frm) - n_pruned),
             "clips_before_scc": int(k),
             "clips": int(len(sel)), "edges": int(len(g_edges)), "seconds_kept": kept, "seconds_total": total,
             "seconds_dropped": total - kept, "components": int(n_comp), "build_seconds": time.perf_counter() - t0,
             "dropped_sources": [clips[i].name for i in range(len(clips)) if not np.any(src[sel] == i)]}
    if progress:
        progress(1.0, f"{len(sel)} clips, {len(g_edges)} transitions, {kept:.1f} of {total:.1f} s kept")
    a, b = edges[e_keep, 0], edges[e_keep, 1]
    natural = (src[a] == src[b]) & (ends[a] == starts[b])
    # a transition compares the last frame played with the one before the next clip's first
    rough = np.where(natural, 0.0, pair_cost(feats, ends[a] - 1, np.maximum(starts[b] - 1, 0)) / ROUGH_UNIT)
    return MotionGraph(s.fps, [c.name for c in clips], src[sel], starts[sel] - first[src[sel]],
                       ends[sel] - first[src[sel]], g_edges, types, actions, stats, paths, airborne,
                       rough.astype(np.float32))


def _mid_flight(flights: dict, first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """bool [frames + 1]: the cut positions (before frame p) where frame p is airborne in a jump: inside
    its flight, or at its first airborne frame (a clip starting there would leave its take-off, the
    last frame on the ground, in the clip before, and fly shorter than the capture)."""
    n = int(lengths.sum())
    out = np.zeros(n + 1, dtype=bool)
    for j, f in flights.items():
        out[first[j]:first[j] + lengths[j]] = f
    out[first] = False  # a source's own start is always a cut
    return out


def _split_long(cuts, first, lengths, max_len):
    out = [int(cuts[0])]
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        n = int(np.ceil((b - a) / max_len)) if max_len > 0 else 1
        out += [a + (b - a) * k // n for k in range(1, n)] + [b]
    return np.unique(np.array(out))


def _clip_action(types: set, lo: int, hi: int, centres: np.ndarray):
    kinds = [t for t in types if t in ACTION_TYPES]
    for f in np.asarray(centres).tolist():
        if lo <= f < hi and kinds:
            return (sorted(kinds)[0], int(f - lo))
    return None


def _root_path(ground: np.ndarray, yaw: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """[n + 1, 3] the root's ground position and heading (a clip's ``root_frame``) over frames
    lo..hi, in the frame at lo (x right, y forward, yaw); the last row is where the next clip starts."""
    idx = np.arange(lo, min(hi + 1, len(yaw)))
    return displacement(ground, yaw, np.full(len(idx), lo), idx)
