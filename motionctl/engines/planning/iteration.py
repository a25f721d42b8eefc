"""Tree-based fitted iteration (paper 001, section 3.3), with parameterised groups (section 4).

State s = (g, x): the group just played and the task parameters.  Choosing group g' with blend
weights w moves the task to x' = task.apply(x, Σ w_j dx_j) and earns
    Q(s, g', w) = R_t(g, g') + R_s(x') + α V_g'(x')          (eqs. 3, 5, 6)
(the state reward is counted on arrival, so a reach earns its reward with the blend that made it;
terminal states have no future).  Each iteration runs trajectories with the current policy
(plus ε exploration), adds (x, max Q) to the training set of the state's group, fits one
ExtraTreesRegressor per group, recomputes every target with the new V, and measures the mean
squared Bellman residual (eq. 8).  When the residual starts to oscillate and the values have
stopped growing the tree structure is frozen: no new samples, leaf values recomputed from
``apply()`` leaf indices until it settles.  (Values grow by about one step of lookahead per
iteration: trees frozen while far states still read zero have no splits where value will arrive,
and the frozen iterations cannot add them.)
Finally n_min is chosen by the 2/3-1/3 procedure and the trees refitted.

Inside the planning max, V is read from a grid tabulation of the trees (one array look-up per
candidate instead of a descent through every tree); the Bellman residual and rewards reported
by ``evaluate_planner`` use the trees themselves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...arrays import same_everywhere_matmul
from ...jobs import check_stop, parallel_map, progress_range
from ...settings import internal, setting
from ...play.tasks import Task
from .forest import PolynomialValue, ValueGrid, choose_n_min, fit_extra_trees


@dataclass
class FittedSettings:
    """Fitted iteration's settings (paper 001, section 3.3)."""

    discount: float = setting(0.9, "α", "Discount of future rewards (higher plans further ahead)", min=0.0, max=0.999,
                              group="Learning")
    n_trees: int = setting(10, "Trees", "Extra-trees per group", min=1, max=100, group="Learning")
    n_min: int = internal(3, min=1, max=1000)  # leaf size while iterating; refined by the 2/3-1/3 procedure at the end
    n_min_candidates: tuple = internal((1, 2, 3, 5, 8, 13, 21), min=1, max=1000)
    trajectories: int = setting(100, "Trajectories", "Trajectories sampled per iteration (guidance: twice as many, its "
                                "gates lie all round the character)", min=10, max=100000,
                                group="Learning")
    steps: int = setting(10, "Steps", "Decisions per sampled trajectory", min=1, max=1000, group="Learning", ui=False)
    exploration: float = setting(0.1, "Exploration", "Chance of a random decision while sampling", min=0.0, max=1.0,
                                 group="Learning", ui=False)
    iterations: int = setting(30, "Iterations", "Sampling iterations at most", min=1, max=10000, group="Learning")
    frozen_iterations: int = internal(30, min=0, max=10000)
    residual_tol: float = internal(1e-3, min=0.0, max=10.0)  # relative to the mean squared target
    growth_tol: float = internal(0.01, min=0.0, max=10.0)  # values have stopped growing when an iteration moves their mean by less (relative)
    blend_samples: int = setting(8, "Blend Samples", "Simplex samples per group while training (eq. 9)", min=1,
                                 max=1000, group="Learning", ui=False)
    grid: tuple | None = internal(None, min=2, max=4096, optional=True, kind="ints")  # cells per task dimension (None: the task's default)
    regressor: str = setting("trees", "Regressor", "Value function: extra-trees, or Treuille et al.'s degree-2 "
                             "polynomial (the paper's baseline)", choices=(
                                 ("trees", "Extra-Trees", "Paper 001's regressor"),
                                 ("poly", "Polynomial", "Degree-2 polynomial by least squares (a baseline)")),
                             group="Learning", ui=False)
    choose_leaf_size: bool = internal(True)
    seed: int = setting(0, "Seed", "Seed of the sampled trajectories and trees", min=0, max=2**31 - 1,
                        group="Learning", ui=False)


DEFAULT_GRIDS = {1: (720,), 2: (128, 128), 3: (24, 48, 48)}


@dataclass(eq=False)
class PlanningProblem:
    """What the planner can do: per group, blend samples' dx [K_g, 4] (the step's displacement,
    turn and ground speed in m/s; [K_g, 3] without the speed), reach points [K_g, 2], weights
    [K_g, m_g]; kind per group; transition rewards [G, G]."""

    task: Task
    dx: list
    reach: list
    weights: list
    kind: np.ndarray
    transition: np.ndarray

    def __post_init__(self):
        # Quantised to 1e-9 (a nanometre, a nanoradian): training turns on ties between rewards, so
        # float noise in the last bits (the same clips in another rest orientation, or mirrored by
        # another route) would train another planner; measured: values apart by 3.3 from inputs
        # 5e-14 apart.  (A quantity within float noise of a rounding boundary can still round either
        # way: about one chance in 10^5 per number.)
        self.dx = [np.round(np.asarray(d, dtype=float), 9) for d in self.dx]
        self.reach = [np.round(np.asarray(r, dtype=float), 9) for r in self.reach]
        self.transition = np.round(np.asarray(self.transition, dtype=float), 9)
        # All groups' blend samples in one array: sample k of group g is row offsets[g] + k.
        self.counts = np.array([len(d) for d in self.dx])
        self.offsets = np.concatenate(([0], np.cumsum(self.counts)[:-1])).astype(np.int64)
        self.flat_dx = np.concatenate(self.dx)
        self.flat_reach = np.concatenate(self.reach)
        self.flat_group = np.repeat(np.arange(len(self.dx)), self.counts)
        self.flat_index = np.arange(len(self.flat_dx)) - np.repeat(self.offsets, self.counts)

    @property
    def n_groups(self) -> int:
        return len(self.dx)

    @classmethod
    def from_groups(cls, task: Task, seg, groups, blend_samples: int, seed: int = 0) -> "PlanningProblem":
        """The problem of ``groups``: per group, ``blend_samples`` simplex samples of its members' dx and
        reach points."""
        from .segments import simplex_samples

        dxs, reaches, ws = [], [], []
        speed = seg.speed()
        for members in groups.members:
            w = simplex_samples(len(members), blend_samples, seed)
            dxs.append(np.column_stack((same_everywhere_matmul(w, seg.dx[members]),
                                        same_everywhere_matmul(w, speed[members][:, None])[:, 0])))
            reaches.append(same_everywhere_matmul(w, seg.reach[members]))
            ws.append(w)
        return cls(task, dxs, reaches, ws, groups.kind.copy(), groups.transition.copy())

    def with_samples(self, seg, groups, blend_samples: int, seed: int = 0) -> "PlanningProblem":
        """The same problem with another number of blend samples per group."""
        return PlanningProblem.from_groups(self.task, seg, groups, blend_samples, seed)


class ValueFunction:
    """One regressor per group, plus the grid tabulation used inside the planning max."""

    def __init__(self, problem: PlanningProblem, settings: FittedSettings):
        self.problem = problem
        self.settings = settings
        self.models = [None] * problem.n_groups
        low, high = problem.task.bounds()
        shape = settings.grid or DEFAULT_GRIDS[problem.task.n]
        self.grid = ValueGrid(low, high, tuple(shape), np.zeros((problem.n_groups,) + tuple(shape)))
        self._grid_points = None
        self._grid_leaves = None

    def grid_points(self) -> np.ndarray:
        """[P, n] centres of the value grid's cells."""
        if self._grid_points is None:
            g = self.grid
            axes = [g.low[d] + (np.arange(n) + 0.5) * (g.high[d] - g.low[d]) / n for d, n in enumerate(g.shape)]
            self._grid_points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(g.shape))
        return self._grid_points

    def exact(self, group: int, x: np.ndarray) -> np.ndarray:
        """V_group at states x [N, n] from the regressor itself."""
        m = self.models[group]
        return np.zeros(len(x)) if m is None else m.predict(x)

    def fast(self, group: np.ndarray, x: np.ndarray) -> np.ndarray:
        """V at (group [N], x [N, n]) from the grid tabulation (a state beyond the grid reads its edge cell)."""
        return self.grid.lookup(group, x)

    def fit(self, samples, n_min: int, n_jobs=None) -> None:
        """Fit one regressor per group to ``samples`` [(x, y), ...] with leaves of ``n_min``, then tabulate."""
        s = self.settings

        def one(g):
            xg, yg = samples[g]
            if len(xg) == 0:
                return None
            if s.regressor == "poly":
                return PolynomialValue(2).fit(xg, yg)
            return fit_extra_trees(xg, yg, n_min, s.n_trees, s.seed + g)

        self.models = parallel_map(one, range(self.problem.n_groups), n_jobs)
        self._grid_leaves = None
        self.tabulate()

    def tabulate(self) -> None:
        """Refresh the grid from the regressors (leaf look-ups of the cached grid points when frozen)."""
        pts = self.grid_points()
        for g, m in enumerate(self.models):
            if m is None:
                self.grid.values[g] = 0.0
            elif self._grid_leaves is not None and self._grid_leaves[g] is not None:
                self.grid.values[g] = _leaf_values(m, self._grid_leaves[g]).reshape(self.grid.shape)
            else:
                self.grid.values[g] = m.predict(pts).reshape(self.grid.shape)

    def freeze(self) -> None:
        """Remember every grid cell's leaf per tree, so re-tabulating after leaf refits is a gather."""
        pts = self.grid_points()
        self._grid_leaves = [None if m is None or not hasattr(m, "estimators_") else m.apply(pts) for m in self.models]

    def refit_leaves(self, samples) -> None:
        """Frozen structure: each leaf's value := mean target of the samples in it."""
        for g, m in enumerate(self.models):
            if m is None or not hasattr(m, "estimators_"):
                if m is not None:
                    m.fit(*samples[g])
                continue
            xg, yg = samples[g]
            leaves = m.apply(xg)
            for t, est in enumerate(m.estimators_):
                values = est.tree_.value
                sums = np.bincount(leaves[:, t], weights=yg, minlength=values.shape[0])
                counts = np.bincount(leaves[:, t], minlength=values.shape[0])
                hit = counts > 0
                values[hit, 0, 0] = sums[hit] / counts[hit]
        self.tabulate()


def _leaf_values(model, leaves: np.ndarray) -> np.ndarray:
    return np.mean([est.tree_.value[leaves[:, t], 0, 0] for t, est in enumerate(model.estimators_)], axis=0)


TIE = 1e-9  # relative: Q-values closer than this are equal


def q_values(problem: PlanningProblem, group: np.ndarray, x: np.ndarray, value, discount: float, exact: bool = False,
             block: int = 1 << 21):
    """For states (group [N], x [N, n]): the best (Q, next group, blend index) over every group and
    blend sample at once (rows in blocks of about ``block`` candidates).  ``value``: a
    ValueFunction (grid look-ups, or its trees when ``exact``), or None for the greedy
    controller (eq. 13: no future).  The states are taken as the task sees them (``Task.in_view``)."""
    task = problem.task
    group = np.asarray(group)
    x = task.in_view(x)
    n, cands = len(x), len(problem.flat_dx)
    cand_g, cand_k = problem.flat_group, problem.flat_index
    best_q = np.empty(n)
    best = np.empty(n, dtype=np.int64)
    step = max(1, block // cands)
    kind = problem.kind[cand_g][None, :]
    reach = problem.flat_reach[None]
    for r0 in range(0, n, step):
        rows = slice(r0, min(r0 + step, n))
        m = rows.stop - rows.start
        nxt = task.apply(x[rows][:, None, :], problem.flat_dx[None])  # [m, cands, n] by broadcasting
        q = (task.reward(nxt, kind, reach) + task.step_reward(x[rows][:, None, :], problem.flat_dx[None])
             + problem.transition[group[rows]][:, cand_g])
        if value is not None and discount > 0:
            flat = nxt.reshape(-1, nxt.shape[-1])
            gg = np.broadcast_to(cand_g, (m, cands)).ravel()
            if exact:
                future = np.zeros(len(flat))
                for g2 in range(problem.n_groups):
                    sel = gg == g2
                    future[sel] = value.exact(g2, flat[sel])
            else:
                future = value.fast(gg, flat)
            q = q + discount * np.where(task.terminal(nxt, kind, reach), 0.0, future.reshape(m, cands))
        # Ties go to the first candidate: a step and its mirror image score the same up to the
        # last bits, which vary from run to run with memory alignment (numpy's SIMD arctan2), and
        # an argmax that followed those bits made identical trainings end differently.
        top = q.max(axis=1, keepdims=True)
        best[rows] = np.argmax(q >= top - TIE * (1.0 + np.abs(top)), axis=1)
        best_q[rows] = q[np.arange(m), best[rows]]
    return best_q, cand_g[best], cand_k[best]


@dataclass
class FitResult:
    """What fitted iteration learned: the value functions, the problem, residuals per iteration, samples,
    iterations, where the trees froze, the chosen n_min and its held-out errors, seconds."""
    value: ValueFunction
    problem: PlanningProblem
    residuals: list = field(default_factory=list)
    samples: int = 0
    iterations: int = 0
    frozen_at: int | None = None
    growth: list = field(default_factory=list)  # per sampling iteration: relative change of mean V on the stored states
    n_min: int = 3
    n_min_errors: dict = field(default_factory=dict)
    seconds: float = 0.0


LOOP_SHARE = 0.6  # of fitted iteration: its iterations, before the leaf size is chosen (measured: 60-63%)


def fitted_iteration(problem: PlanningProblem, settings: FittedSettings | None = None, progress=None,
                     should_stop=None) -> FitResult:
    """Learn the value functions; see the module docstring."""
    s = settings or FittedSettings()
    t0 = time.perf_counter()
    rng = np.random.default_rng(s.seed)
    task = problem.task
    value = ValueFunction(problem, s)
    xs = np.zeros((0, task.n))
    gs = np.zeros(0, dtype=np.int64)
    result = FitResult(value, problem)
    frozen = False
    n_min = s.n_min
    total_iters = s.iterations + s.frozen_iterations
    choosing = s.regressor == "trees" and s.choose_leaf_size
    loop = progress_range(progress, 0.0, LOOP_SHARE if choosing else 1.0)  # the leaf size's choice: the rest

    def targets(x, g):  # eq. 6 with the current V, for every stored state at once
        return q_values(problem, g, x, value, s.discount)[0] if len(x) else np.zeros(0)

    def by_group(y):
        return [(xs[gs == g], y[gs == g]) for g in range(problem.n_groups)]

    ys = np.zeros(0)
    it = 0
    for it in range(1, total_iters + 1):
        check_stop(should_stop, "fitted iteration")
        if not frozen:
            nx, ng = run_trajectories(problem, value, s, rng)
            xs, gs = np.concatenate((xs, nx)), np.concatenate((gs, ng))
            ys = np.concatenate((ys, targets(nx, ng)))
        if not frozen:
            before = value.fast(gs, xs)
            value.fit(by_group(ys), n_min)
        else:
            value.refit_leaves(by_group(ys))
        ys = targets(xs, gs)  # the targets under the new V: the residual now, the fit next time
        now = value.fast(gs, xs)
        res = float(np.mean((now - ys) ** 2))
        if not frozen:
            result.growth.append(float(abs(np.mean(now - before)) / (np.mean(np.abs(now)) + 1e-12)))
        scale = float(np.mean(ys**2)) + 1e-12
        result.residuals.append(res)
        if loop is not None:
            loop(min(0.99, it / total_iters), f"iteration {it}{' (frozen)' if frozen else ''}: "
                 f"{len(xs)} samples, residual {res:.4g}")
        if res / scale < s.residual_tol and it > 2:
            break
        if not frozen and s.regressor == "trees":
            if should_freeze(result.residuals, result.growth, s.growth_tol) or it >= s.iterations:
                frozen = True
                result.frozen_at = it
                value.freeze()
        elif frozen:
            r = result.residuals
            if len(r) >= 2 and abs(r[-1] - r[-2]) <= 1e-3 * max(r[-2], 1e-12):
                break
        elif s.regressor != "trees" and it >= s.iterations:
            break
    if loop is not None:
        loop(1.0, f"{it} iterations" + (": choosing the leaf size" if choosing else ""))
    if choosing:
        # One leaf size for all groups: trees refitted per group on 2/3 of its samples for every
        # candidate, the one with the lowest squared error on the held-out thirds wins.
        n_min, errors = choose_n_min(by_group(ys), s.n_min_candidates, s.n_trees, s.seed)
        result.n_min_errors = errors
        value.fit(by_group(ys), n_min)
        value.freeze()
        for _ in range(5):  # settle the targets with the final trees
            ys = targets(xs, gs)
            value.refit_leaves(by_group(ys))
        ys = targets(xs, gs)
        result.residuals.append(float(np.mean((value.fast(gs, xs) - ys) ** 2)))
    result.n_min = n_min
    result.samples = int(len(xs))
    result.iterations = it
    result.seconds = time.perf_counter() - t0
    if progress is not None:
        progress(1.0, f"done: {result.samples} samples, residual {result.residuals[-1]:.4g}")
    return result


def should_freeze(residuals: list, growth: list, growth_tol: float) -> bool:
    """Freeze the tree structure?  Only when the residual oscillates (three iterations in a row
    failed to beat the best so far) *and* the values have settled (their mean moved by less than
    ``growth_tol`` in each of those iterations): a residual also rises while value is still
    spreading out from the rewards, and trees frozen then keep no splits where it will arrive."""
    oscillating = len(residuals) >= 5 and min(residuals[-3:]) > min(residuals[:-3])
    settled = len(growth) >= 3 and max(growth[-3:]) < growth_tol
    return oscillating and settled


def run_trajectories(problem: PlanningProblem, value, s: FittedSettings, rng):
    """States visited by ``s.trajectories`` runs of the current policy with ε exploration,
    from random starts; returns (x [k, n], group [k])."""
    task = problem.task
    n = s.trajectories * task.sampling
    x = task.sample(rng, n)
    g = rng.integers(0, problem.n_groups, n)
    alive = np.ones(n, dtype=bool)
    seen_x, seen_g = [], []
    for _ in range(s.steps):
        idx = np.flatnonzero(alive)
        if len(idx) == 0:
            break
        seen_x.append(x[idx].copy())
        seen_g.append(g[idx].copy())
        _, g2, k2 = q_values(problem, g[idx], x[idx], value if any(m is not None for m in value.models) else None,
                             s.discount)
        explore = rng.random(len(idx)) < s.exploration
        if explore.any():
            g2[explore] = rng.integers(0, problem.n_groups, explore.sum())
            k2[explore] = (rng.random(explore.sum()) * problem.counts[g2[explore]]).astype(np.int64)
        flat = problem.offsets[g2] + k2
        dx, reach, kind = problem.flat_dx[flat], problem.flat_reach[flat], problem.kind[g2]
        nxt = task.apply(x[idx], dx)
        done = task.terminal(nxt, kind, reach)
        x[idx] = nxt
        g[idx] = g2
        alive[idx[done]] = False
    return np.concatenate(seen_x), np.concatenate(seen_g)
