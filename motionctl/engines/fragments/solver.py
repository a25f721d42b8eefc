"""The policy solver of paper 000: tabular control policies over motion fragments, solved fast and
in bounded memory.

Value iteration (eq. 2)      R[f,c] = max_f' Q(f->f'|c) + λ Σ_c' T[c,c'] R[f',c']
with Q(f->f'|c) = MQ[f,f'] · CQ[f',c].  Writing E = λ R Tᵀ (an F x C matrix, one matrix product),
a backup is R[f,c] = max_f' MQ[f,f'] CQ[f',c] + E[f',c]: O(F² C) work that we do in row blocks
sized to a memory budget, never as an F x F x C tensor.  Instead of plain value iteration we use
modified policy iteration: one expensive improvement step (the backup with its argmax), then
cheap O(F C²) evaluation sweeps of the fixed policy.  Evaluation uses relative values (the mean
is subtracted each sweep): a constant offset never changes an argmax, and relative values
converge at the chain's mixing rate instead of λ = 0.999's thousand-step horizon.

The controllers differ only in what replaces T: model (the user model, eq. 2), steady (identity,
eq. 5), spread (uniform, eq. 6), greedy (λ = 0, eq. 4).  Thresholded variants allow only the top
k% of transitions by MotionQuality, stored sparse.  ``optimal_path`` is the off-line optimum for
a known trace (eqs. 7-8).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ...arrays import find_sorted
from ...errors import MotionctlError
from ...jobs import Shared, check_stop, n_workers, parallel_map
from ...settings import internal, setting

KINDS = ("model", "steady", "spread", "greedy")
TIE = 1e-3  # quality units: improvements smaller than this do not change a decision


@dataclass
class PolicySettings:
    """kind        model | steady | spread | greedy
    discount       λ (paper: 0.999)
    threshold      None, or the percentage of transitions kept (paper: 8) for the "-t" variants
    tol            evaluation stops when relative values move less than this (quality units)
    settle         converged once an improvement changes at most this fraction of the F x C
                   decisions (0: only when none changes)
    block_mb       memory for one block of backups"""

    kind: str = setting("model", "Controller", "How the controller expects the player to behave", choices=(
        ("model", "Model", "Value iteration with a user model learned from traces (paper 000's controller)"),
        ("steady", "Steady", "Assumes the control never changes (Schödl and Essa)"),
        ("spread", "Spread", "Assumes the control changes uniformly at random"),
        ("greedy", "Greedy", "Best transition now, ignoring the future")), group="Controller")
    discount: float = setting(0.999, "λ", "Discount of future quality (0: greedy; near 1: plans far ahead)",
                              min=0.0, max=0.9999, group="Quality weights")
    threshold: float | None = setting(None, "Keep %", "Allow only the best transitions by motion quality, as motion "
                                      "graphs do (off: all transitions); the paper keeps 8%", min=0.1, max=100.0,
                                      optional=True, on_value=8.0, subtype="PERCENTAGE", group="Controller")
    tol: float = internal(1e-6, min=0.0, max=1.0)
    max_improvements: int = internal(100, min=1, max=10000)
    settle: float = internal(1e-5, min=0.0, max=1.0)  # converged when at most this fraction of decisions changed
    max_sweeps: int = internal(500, min=1, max=100000)
    block_mb: float = internal(32.0, min=1.0, max=65536.0)
    n_jobs: int | None = internal(None, min=1, max=1024, optional=True, kind="int")
    hubs_per_bin: int = internal(10, min=0, max=1000)  # sparse transitions: hub columns added per control bin (``pick_hubs``)

    def check(self) -> None:
        if self.kind not in KINDS:
            raise MotionctlError(f"controller kind must be one of {KINDS}, got {self.kind!r}")
        if not 0.0 <= self.discount < 1.0:
            raise MotionctlError(f"discount (lambda) must be in [0, 1), got {self.discount}")
        if self.hubs_per_bin < 0:
            raise MotionctlError(f"hubs_per_bin must not be negative, got {self.hubs_per_bin}")
        if self.threshold is not None and not 0 < self.threshold <= 100:
            raise MotionctlError(f"threshold must be a percentage in (0, 100], got {self.threshold}")


@dataclass(eq=False)
class Transitions:
    """MotionQuality restricted to allowed transitions: dense [F, F], or CSR arrays when only
    a subset is allowed (thresholded, or each fragment's kept successors).  A sparse table may also
    hold "hub" columns: fragments every fragment may go to, hub int32 [h] ascending with their
    qualities hub_data float32 [F, h] (``with_hubs``; see ``FragmentModel.train``)."""

    n: int
    dense: np.ndarray | None = None
    indptr: np.ndarray | None = None
    indices: np.ndarray | None = None
    data: np.ndarray | None = None
    hub: np.ndarray | None = None
    hub_data: np.ndarray | None = None

    @classmethod
    def from_dense(cls, mq: np.ndarray) -> "Transitions":
        """All transitions allowed: MotionQuality [F, F] as given."""
        return cls(mq.shape[0], dense=np.ascontiguousarray(mq, dtype=np.float32))

    @classmethod
    def from_mask(cls, mq: np.ndarray, allowed: np.ndarray) -> "Transitions":
        """Only the transitions where ``allowed`` [F, F] is True, stored as CSR arrays; of quality
        zero only in a row with no other (``_forbidden``)."""
        rows, cols = np.nonzero(allowed & ~_forbidden(np.where(allowed, mq, 0.0)))
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=mq.shape[0])))).astype(np.int64)
        return cls(mq.shape[0], indptr=indptr, indices=cols.astype(np.int32), data=mq[rows, cols].astype(np.float32))

    @classmethod
    def from_rows(cls, n: int, columns: np.ndarray, values: np.ndarray, keep: np.ndarray) -> "Transitions":
        """CSR from per-row successor lists: columns int [F, k] ascending in each row, values
        [F, k], keep bool [F, k] (False: not a transition)."""
        indptr = np.concatenate(([0], np.cumsum(keep.sum(axis=1)))).astype(np.int64)
        return cls(n, indptr=indptr, indices=columns[keep].astype(np.int32), data=values[keep].astype(np.float32))

    def with_hubs(self, hub: np.ndarray, hub_data: np.ndarray) -> "Transitions":
        """This sparse table plus hub columns ``hub`` [h] (ascending) of quality ``hub_data`` [F, h]."""
        if not self.sparse:
            raise MotionctlError("hub columns are for sparse transitions (a dense table has every column)")
        return Transitions(self.n, indptr=self.indptr, indices=self.indices, data=self.data,
                           hub=np.asarray(hub, dtype=np.int32),
                           hub_data=np.ascontiguousarray(hub_data, dtype=np.float32))

    @property
    def n_hubs(self) -> int:
        return 0 if self.hub is None else len(self.hub)

    def column_max(self) -> np.ndarray:
        """float32 [F]: each fragment's best quality as a successor, over the stored transitions."""
        if not self.sparse:
            return self.dense.max(axis=0)
        best = np.zeros(self.n, dtype=np.float32)
        order = np.argsort(self.indices, kind="stable")
        cols, starts = np.unique(self.indices[order], return_index=True)
        if len(cols):
            best[cols] = np.maximum.reduceat(self.data[order], starts)
        if self.n_hubs:
            best[self.hub] = np.maximum(best[self.hub], self.hub_data.max(axis=0))
        return best

    def top(self, percent: float) -> "Transitions":
        """The top ``percent`` % of all n x n transitions by quality, taken among the stored ones
        (all of them when fewer are stored; hub columns are not kept); a row left empty keeps its
        best (sparse only)."""
        if not 0 < percent <= 100:
            raise MotionctlError(f"threshold percent must be in (0, 100], got {percent}")
        want = int(round(float(self.n) * self.n * percent / 100.0))
        keep = np.zeros(len(self.data), dtype=bool)
        if want >= len(self.data):
            keep[:] = True
        elif want > 0:
            keep[np.argpartition(-self.data, want - 1)[:want]] = True
        counts = np.diff(self.indptr)
        rows = np.repeat(np.arange(self.n), counts)
        empty = np.flatnonzero(np.bincount(rows[keep], minlength=self.n) == 0) if len(rows) else np.zeros(0, int)
        empty = empty[counts[empty] > 0]
        if len(empty):  # each empty row's best stored successor: first in its row by falling quality
            keep[np.lexsort((-self.data, rows))[self.indptr[empty]]] = True
        kept_rows = rows[keep]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(kept_rows, minlength=self.n)))).astype(np.int64)
        out = Transitions(self.n, indptr=indptr, indices=self.indices[keep], data=self.data[keep])
        out.dead_ends_repaired = len(empty)
        return out

    @property
    def sparse(self) -> bool:
        return self.dense is None

    def shared(self) -> Shared:
        """The arrays as one ``Shared``, made once: a cluster receives them once per training."""
        if getattr(self, "_shared", None) is None:
            empty = np.zeros(0, dtype=np.int32), np.zeros((self.n, 0), dtype=np.float32)
            hub, hub_data = (self.hub, self.hub_data) if self.n_hubs else empty
            self._shared = Shared(dense=self.dense) if not self.sparse else Shared(
                indptr=self.indptr, indices=self.indices, data=self.data, hub=hub, hub_data=hub_data)
        return self._shared

    def lookup(self, f: np.ndarray, g: np.ndarray) -> np.ndarray:
        """MQ[f, g] (0 where the transition is not allowed), any matching shapes."""
        f, g = np.broadcast_arrays(np.asarray(f), np.asarray(g))
        if not self.sparse:
            return self.dense[f, g]
        # CSR rows hold sorted columns, so row * n + column is a sorted key over all entries.
        if getattr(self, "_keys", None) is None:
            rows = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))
            self._keys = rows * self.n + self.indices
        out = np.zeros(f.shape, dtype=np.float32)
        pos, hit = find_sorted(self._keys, f.astype(np.int64) * self.n + g)
        out[hit] = self.data[pos[hit]]
        if self.n_hubs:
            h, hit = find_sorted(self.hub, g)
            out[hit] = np.maximum(out[hit], self.hub_data[f[hit], h[hit]])
        return out


# ----------------------------------------------------------------------------- backups

def _row_blocks(n: int, per_row_bytes: int, budget_mb: float) -> list:
    rows = max(1, int(budget_mb * 2**20 // max(per_row_bytes, 1)))
    return [(r, min(r + rows, n)) for r in range(0, n, rows)]


def backup(trans: Transitions, a: np.ndarray, b: np.ndarray, budget_mb: float = 32.0, n_jobs=None,
           should_stop=None) -> tuple[np.ndarray, np.ndarray]:
    """For every f and column k: max_f' MQ[f,f'] a[k,f'] + b[k,f'] and its argmax f'.

    a, b [K, F] (K = control bins, or 1 for the off-line optimum).  Returns (values [F, K] float32,
    argmax [F, K] int32).  Work is split in row blocks of about ``budget_mb`` each (``parallel_map``:
    threads, or a Dask cluster's workers, which receive the transitions once per training).
    """
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = np.ascontiguousarray(b, dtype=np.float32)
    k, n = a.shape
    values = np.empty((n, k), dtype=np.float32)
    argmax = np.empty((n, k), dtype=np.int32)
    workers = n_workers(n_jobs)
    if not trans.sparse:
        blocks = _row_blocks(n, 4 * k * n, budget_mb / workers)
        fn, per_call = _dense_backup, Shared(a=a, b=b)
    else:
        # Blocks of rows holding about budget_mb of [nnz + rows x hubs, K] temporaries.
        per = max(1, int(budget_mb / workers * 2**20 // (4 * k)))
        blocks, r, cum = [], 0, trans.indptr + np.arange(n + 1) * trans.n_hubs
        while r < n:
            r1 = int(np.searchsorted(cum, cum[r] + per, side="right")) - 1
            r1 = min(max(r1, r + 1), n)
            blocks.append((r, r1))
            r = r1
        # [F, K] rows: a successor's column values are one row gather.
        fn, per_call = _sparse_backup, Shared(a_rows=np.ascontiguousarray(a.T), b_rows=np.ascontiguousarray(b.T))

    def put(i, res):
        r0, r1 = blocks[i]
        values[r0:r1], argmax[r0:r1] = res

    parallel_map(fn, blocks, n_jobs, (trans.shared(), per_call), should_stop, None, "policy backup", collect=put)
    return values, argmax


def _forbidden(q: np.ndarray) -> np.ndarray:
    """bool like ``q`` [rows, columns]: transitions of MotionQuality 0 (a stuttering back-jump or a
    stance flip, ``quality.motion_quality``; an infinite distance), which are never taken.  A row
    with nothing else keeps them all (no dead end).  Without this, a zero-quality transition still
    led to its successor's value: CMU 131_03's hop replayed frames 153-164 over and over (a 0.1 s
    back-jump every other decision) on a sidestep asked of a library with no sidestep."""
    zero = q <= 0
    return zero & ~zero.all(axis=1, keepdims=True)


def _dense_backup(blk, dense, a, b):
    r0, r1 = blk
    q = dense[r0:r1]
    t = q[:, None, :] * a[None]  # [b, K, F]
    t += b[None]
    arg = t.argmax(axis=2)
    # Only the (f, c) whose best is forbidden are searched again without them: masking the whole
    # [b, K, F] block first took 2.5 times as long, and gives the same choices (the first of the
    # largest values either way).
    forbidden = _forbidden(q)
    fi, ki = np.nonzero(np.take_along_axis(forbidden, arg, axis=1))
    if len(fi):
        redo = t[fi, ki]  # [m, F]
        np.copyto(redo, -np.inf, where=forbidden[fi])
        arg[fi, ki] = redo.argmax(axis=1)
    return np.take_along_axis(t, arg[:, :, None], axis=2)[:, :, 0], arg


def _sparse_backup(blk, indptr, indices, data, hub, hub_data, a_rows, b_rows):
    best, arg = _csr_backup(blk, indptr, indices, data, a_rows, b_rows)
    if len(hub):  # the hub columns: a dense [rows, h, K] block; a stored successor wins ties
        r0, r1 = blk
        q = hub_data[r0:r1]
        t = q[:, :, None] * a_rows[hub][None]
        t += b_rows[hub][None]
        np.copyto(t, -np.inf, where=(q <= 0)[:, :, None])  # a stutter or a stance flip (a stored successor is there)
        h_arg = t.argmax(axis=1)
        h_best = np.take_along_axis(t, h_arg[:, None], axis=1)[:, 0]
        better = h_best > best
        best, arg = np.where(better, h_best, best), np.where(better, hub[h_arg], arg)
    return best, arg


def _csr_backup(blk, indptr, indices, data, a_rows, b_rows):
    r0, r1 = blk
    s, e = indptr[r0], indptr[r1]
    cols = indices[s:e]
    t = a_rows[cols]  # [nnz, K]
    t *= data[s:e, None]
    t += b_rows[cols]
    starts = (indptr[r0:r1] - s).astype(np.int64)
    best = np.maximum.reduceat(t, starts, axis=0)
    hit = t == np.repeat(best, np.diff(indptr[r0:r1 + 1]), axis=0)
    pos = np.where(hit, np.arange(e - s)[:, None], np.iinfo(np.int64).max)
    first = np.minimum.reduceat(pos, starts, axis=0)
    return best, cols[first]


def expectation(values: np.ndarray, kind: str, user_model: np.ndarray | None, discount: float) -> np.ndarray:
    """E [F, C] = λ Σ_c' T[c, c'] R[f, c'] with T per controller kind."""
    if kind == "greedy" or discount == 0.0:
        return np.zeros_like(values)
    if kind == "steady":
        return discount * values
    if kind == "spread":
        return np.broadcast_to(discount * values.mean(axis=1, keepdims=True), values.shape).copy()
    if user_model is None:
        raise MotionctlError("the model controller needs a user model T")
    # In float64, rounded once: a float32 product's last bits depend on the BLAS build (numpy 1.26's
    # OpenBLAS and numpy 2's gave values 1 ulp apart), and the same seed must train the same model.
    product = np.asarray(values, dtype=np.float64) @ np.asarray(user_model, dtype=np.float64).T
    return (discount * product).astype(values.dtype)


@dataclass
class SolveResult:
    """A solved policy: table [F, C] int32 (next fragment), values [F, C], improvements, evaluation products,
    convergence, seconds, history."""
    table: np.ndarray  # int32 [F, C]: next fragment
    values: np.ndarray  # float32 [F, C]: relative expected discounted quality
    improvements: int
    sweeps: int
    converged: bool
    seconds: float
    history: list = field(default_factory=list)  # (policy changes, value span) per improvement
    hubs: int = 0  # sparse transitions: hub columns the policy was solved with


def solve(trans: Transitions, cq: np.ndarray, settings: PolicySettings, user_model: np.ndarray | None = None,
          init: np.ndarray | None = None, progress=None, should_stop=None) -> SolveResult:
    """Modified policy iteration for one controller; ``init`` (an earlier result's values) warm-starts."""
    settings.check()
    t0 = time.perf_counter()
    n, c = cq.shape
    lam = 0.0 if settings.kind == "greedy" else settings.discount
    cq_t = np.ascontiguousarray(cq.T, dtype=np.float32)
    values = np.zeros((n, c), dtype=np.float32) if init is None else np.asarray(init, dtype=np.float32).copy()
    if values.shape != (n, c):
        raise MotionctlError(f"warm start values are {values.shape}, expected {(n, c)}: retrain from scratch")
    cols = np.arange(c)[None, :]
    table = None
    history = []
    sweeps_total = 0
    converged = False
    it = 0
    done = 0.0  # share of the work reported (``settling``)
    for it in range(1, settings.max_improvements + 1):
        check_stop(should_stop, "training")
        e = expectation(values, settings.kind, user_model, lam)
        new_values, new_table = backup(trans, cq_t, e.T, settings.block_mb, settings.n_jobs, should_stop)
        if table is None:
            changed = n * c
        else:
            # Keep the current choice unless another is better by more than the tie tolerance:
            # near-ties would otherwise flip on float noise and never let the policy settle.
            current = trans.lookup(np.arange(n)[:, None], table) * cq[table, cols] + e[table, cols]
            keep = new_values <= current + TIE
            new_table = np.where(keep, table, new_table)
            new_values = np.where(keep, current, new_values)
            changed = int(np.count_nonzero(new_table != table))
        table = new_table
        if lam == 0.0:
            values = new_values
            history.append((changed, 0.0))
            converged = True
            break
        q_pol = trans.lookup(np.arange(n)[:, None], table) * cq[table, cols]
        before = centred(values)
        if settings.kind == "steady":
            # The control never changes: each (f, c) follows a deterministic chain, evaluated
            # exactly by pointer doubling (a few dozen gathers) instead of slow sweeps.
            values = centred(_evaluate_chain(q_pol, table, lam))
            sweeps = 0
        else:
            values, sweeps = _evaluate_krylov(q_pol, table, lambda r: expectation(r, settings.kind, user_model, lam),
                                              new_values, settings, should_stop)
            values = centred(values)
        sweeps_total += sweeps
        span = float(np.ptp(values - before))
        history.append((changed, span))
        if changed <= settings.settle * n * c:
            converged = True
            break
        if progress is not None:
            done = max(done, settling(changed, n * c, settings.settle, it), it / settings.max_improvements)
            progress(min(0.99, done),
                     f"{settings.kind}: improvement {it}, {changed} decisions changed, {sweeps} sweeps")
    if progress is not None:
        progress(1.0, f"{settings.kind}: converged after {it} improvements" if converged
                 else f"{settings.kind}: {it} improvements, the most allowed")
    return SolveResult(table, values.astype(np.float32), it, sweeps_total, converged, time.perf_counter() - t0, history)


def settling(changed: int, total: int, settle: float, improvements: int) -> float:
    """How far policy iteration has come, 0-1, after ``improvements`` that changed ``changed`` of the
    ``total`` decisions the last time: the mean of the share of the decisions that held still and
    of the orders of magnitude come down from ``total`` towards the ``settle`` share (the
    convergence test), and no less than 1 - 0.85^improvements while the first improvements change
    nearly every decision (they are the dearest: here policy iteration settles in 10-20).  On the
    demo's library (14 improvements, measured alone on the machine) it stayed within 0.05 of the
    share of the solve's time spent; the improvement budget, rarely used up, says nothing."""
    target = max(settle * total, 0.5)
    held = 1.0 - changed / max(total, 1)
    orders = math.log(total / max(changed, target)) / math.log(total / target) if total > target else 1.0
    return float(np.clip(max(0.5 * (held + orders), 1.0 - 0.85 ** improvements), 0.0, 1.0))


def centred(values: np.ndarray) -> np.ndarray:
    """float32 ``values`` less their mean, both in float64 and rounded once: a float32 mean's last
    bits depend on numpy's summation kernels (numpy 1.26 and 2 differ), and so did 1 value in 200."""
    v = np.asarray(values, dtype=np.float64)
    return (v - v.mean()).astype(np.float32)


def _evaluate_krylov(q_pol, table, expect, init, settings, should_stop):
    """Relative values of a fixed stochastic policy by GMRES, warm-started.

    Values are R = k·1 + h with h of mean zero; since T_P 1 = 1, h solves the projected system
    P(I - λ T_P) h = P Q_P (P removes the mean), whose conditioning is set by how fast the chain
    mixes rather than by 1 / (1 - λ) = 1000.  One product costs one evaluation sweep (O(F C²));
    Krylov steps converge far faster than sweeps on slowly mixing (thresholded) chains.
    Returns (h, products used)."""
    from scipy.sparse.linalg import LinearOperator, gmres

    n, c = q_pol.shape
    cols = np.arange(c)[None, :]
    calls = [0]

    def matvec(x):
        calls[0] += 1
        if calls[0] % 25 == 0:
            check_stop(should_stop, "training")
        r = x.reshape(n, c)
        out = (r - expect(r)[table, cols]).ravel()
        return out - out.mean()

    op = LinearOperator((n * c, n * c), matvec=matvec, dtype=np.float64)
    b = q_pol.astype(np.float64).ravel()
    b -= b.mean()
    x0 = init.astype(np.float64).ravel()
    x0 -= x0.mean()
    x, _ = gmres(op, b, x0=x0, rtol=0.0, atol=settings.tol * np.sqrt(n * c), restart=30,
                 maxiter=max(1, settings.max_sweeps // 30))
    return x.reshape(n, c).astype(np.float32), calls[0]


def _evaluate_chain(reward: np.ndarray, table: np.ndarray, lam: float, tol: float = 1e-9) -> np.ndarray:
    """Exact discounted values of deterministic chains (f, c) -> (table[f, c], c):
    V = Σ_k λ^k reward along the chain, by doubling: after j steps each state knows the sum of
    its next 2^j rewards and where it lands, so 2^j steps cost j gathers."""
    n, c = table.shape
    nxt = (table.astype(np.int64) * c + np.arange(c)[None, :]).ravel()
    total = reward.astype(np.float64).ravel().copy()
    factor = lam
    while factor > tol * (1.0 - lam):
        total = total + factor * total[nxt]
        nxt = nxt[nxt]
        factor = factor * factor
    return total.reshape(n, c).astype(np.float32)


# ----------------------------------------------------------------------------- off-line optimum

def optimal_path(trans: Transitions, cq: np.ndarray, trace_bins: np.ndarray, start: int | None = None,
                 budget_mb: float = 64.0, n_jobs=None, should_stop=None) -> tuple[np.ndarray, float]:
    """The best fragment sequence for a known trace (eqs. 7-8): dynamic programming backwards
    over the trace.  Returns (path [n + 1], summed quality); ``start`` fixes f_0."""
    steps = len(trace_bins)
    n = trans.n
    value = np.zeros(n, dtype=np.float32)
    choice = np.empty((steps, n), dtype=np.int32)
    cq_t = np.ascontiguousarray(cq.T, dtype=np.float32)
    for i in range(steps - 1, -1, -1):
        if i % 50 == 0:
            check_stop(should_stop, "optimal path")
        v, arg = backup(trans, cq_t[trace_bins[i]][None], value[None], budget_mb, n_jobs, should_stop)
        value = v[:, 0]
        choice[i] = arg[:, 0]
    f = int(np.argmax(value)) if start is None else int(start)
    path = np.empty(steps + 1, dtype=np.int64)
    path[0] = f
    for i in range(steps):
        path[i + 1] = choice[i, path[i]]
    return path, float(value[path[0]])


def path_quality(mq, cq: np.ndarray, path: np.ndarray, trace_bins: np.ndarray) -> np.ndarray:
    """Per-step Quality(f_i -> f_{i+1} | c_i) of a path [n + 1] under trace bins [n], with the
    full (unthresholded) MotionQuality: [F, F], or the sparse ``Transitions`` of every kept successor
    (a transition not kept scores 0), as the paper scores every controller."""
    f, g = path[:-1], path[1:]
    q = mq.lookup(f, g) if isinstance(mq, Transitions) else mq[f, g]
    return q * cq[g, trace_bins]


def run_table(table: np.ndarray, trace_bins: np.ndarray, start: int) -> np.ndarray:
    """Fragments chosen by a policy table along a trace: one table lookup per decision."""
    path = np.empty(len(trace_bins) + 1, dtype=np.int64)
    path[0] = start
    f = start
    for i, c in enumerate(trace_bins.tolist()):
        f = int(table[f, c])
        path[i + 1] = f
    return path


__all__ = ["KINDS", "PolicySettings", "SolveResult", "Transitions", "backup", "expectation", "optimal_path",
           "path_quality", "run_table", "solve"]
