"""Run-time planning controller (paper 001, eq. 5 and 9): pick the group and blend weights that
maximise R_t(a, a') + R_s(s') + α V(s'); measure it by rollouts and Bellman residuals.

For storage (``arrays``/``from_arrays``, inside the planning engine's model archive) every
extra-tree is flattened to arrays (children, feature, threshold, value), so a model file holds
numbers only and loading it never executes code.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ...play.tasks import make_task
from .forest import FlatForest, PolynomialValue, ValueGrid
from .iteration import FitResult, PlanningProblem, q_values
from .segments import Groups, SegmentSet, simplex_samples

class StoredValue:
    """Value functions as stored: grids for fast decisions, flat trees (or polynomials) for exact."""

    def __init__(self, grid: ValueGrid, forests: list):
        self.grid = grid
        self.forests = forests
        self.models = forests

    def fast(self, group, x):
        """V at (group [N], x [N, n]) from the stored grids (a state beyond them reads the edge cell)."""
        return self.grid.lookup(group, x)

    def exact(self, group: int, x):
        """V_group at x [N, n] from the stored trees (or polynomial)."""
        f = self.forests[group]
        return np.zeros(len(x)) if f is None else f.predict(x)


@dataclass(eq=False)
class Planner:
    """The run-time planning controller: the problem (groups' blend samples, dx, reach points, transition
    rewards), the value functions, the discount α, each group's member segments and the segments' clips and
    frames."""
    problem: PlanningProblem
    value: StoredValue
    discount: float
    members: list  # per group: segment ids
    segments: dict  # clip names, clip, start, end of every segment, fps
    info: dict = field(default_factory=dict)

    @classmethod
    def from_fit(cls, fit: FitResult, seg: SegmentSet, groups: Groups, runtime_samples: int = 40,
                 info: dict | None = None) -> "Planner":
        """A planner from fitted iteration's result, with ``runtime_samples`` blend samples per group."""
        s = fit.value.settings
        problem = PlanningProblem.from_groups(fit.problem.task, seg, groups, runtime_samples, s.seed + 1)
        forests = []
        for m in fit.value.models:
            if m is None:
                forests.append(None)
            elif isinstance(m, PolynomialValue):
                forests.append(m)
            else:
                forests.append(FlatForest.from_sklearn(m))
        segs = {"clip_names": [c.name for c in seg.clips], "clip": seg.clip.tolist(), "start": seg.start.tolist(),
                "end": seg.end.tolist(), "fps": seg.settings.fps}
        return cls(problem, StoredValue(fit.value.grid, forests), s.discount, [list(m) for m in groups.members], segs,
                   dict(info or {}))

    @property
    def n_groups(self) -> int:
        return self.problem.n_groups

    def decide(self, group: int, x, exact: bool = False, greedy: bool = False) -> tuple:
        """(next group, blend weights over its members, Q, the blend's dx) for the state (group, x)."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        q, g, k = q_values(self.problem, np.array([group]), x, None if greedy else self.value,
                           0.0 if greedy else self.discount, exact)
        g, k = int(g[0]), int(k[0])
        return g, self.problem.weights[g][k], float(q[0]), self.problem.flat_dx[self.problem.offsets[g] + k]

    def decide_many(self, group, x, exact: bool = False, greedy: bool = False):
        """(Q [N], next group [N], blend index [N]) for states (group [N], x [N, n])."""
        return q_values(self.problem, np.asarray(group), np.asarray(x, dtype=float), None if greedy else self.value,
                        0.0 if greedy else self.discount, exact)

    def step(self, x: np.ndarray, g: np.ndarray, k: np.ndarray):
        """Apply decisions to states: (next x, reward R_s(x'), terminal)."""
        flat = self.problem.offsets[g] + k
        dx, reach, kind = self.problem.flat_dx[flat], self.problem.flat_reach[flat], self.problem.kind[g]
        task = self.problem.task
        nxt = task.apply(x, dx)
        return nxt, task.reward(nxt, kind, reach) + task.step_reward(x, dx), task.terminal(nxt, kind, reach)

    def blend(self, group: int, weights) -> list:
        """[(clip, start, count, weight)] of a group's members: what a ``synth.Step`` plays."""
        seg = self.segments
        return [(seg["clip"][i], seg["start"][i], seg["end"][i] - seg["start"][i], float(w))
                for i, w in zip(self.members[group], weights)]

    # --- storage (the planning engine's model archive holds these)

    def arrays(self) -> tuple[dict, dict]:
        """(JSON meta, arrays): the task, the groups (member segments, blend samples, dx, reach
        points, transition rewards), the value grids, and every extra-tree flattened."""
        task = self.problem.task
        meta = {"task": task.name, "task_params": {k: list(v) if isinstance(v, tuple) else v
                                                   for k, v in asdict(task).items() if k != "names"},
                "discount": self.discount, "members": self.members, "segments": self.segments, "info": self.info,
                "grid_shape": list(self.value.grid.shape),
                "value_kind": ["none" if f is None else ("poly" if isinstance(f, PolynomialValue) else "trees")
                               for f in self.value.forests]}
        arrays = {"grid_low": self.value.grid.low, "grid_high": self.value.grid.high,
                  "grid_values": self.value.grid.values, "kind": self.problem.kind, "transition": self.problem.transition}
        for g in range(self.n_groups):
            arrays[f"g{g}_dx"] = self.problem.dx[g]
            arrays[f"g{g}_reach"] = self.problem.reach[g]
            arrays[f"g{g}_weights"] = self.problem.weights[g]
            f = self.value.forests[g]
            if isinstance(f, FlatForest):
                arrays.update(f.arrays(f"g{g}_tree"))
            elif isinstance(f, PolynomialValue):
                arrays[f"g{g}_poly"] = f.coef
        return meta, arrays

    @classmethod
    def from_arrays(cls, meta: dict, z) -> "Planner":
        """A planner stored by ``arrays``."""
        task = make_task(meta["task"], **meta["task_params"])
        n = len(meta["members"])
        problem = PlanningProblem(task, [np.asarray(z[f"g{g}_dx"]) for g in range(n)],
                                  [np.asarray(z[f"g{g}_reach"]) for g in range(n)],
                                  [np.asarray(z[f"g{g}_weights"]) for g in range(n)], np.asarray(z["kind"]),
                                  np.asarray(z["transition"]))
        forests = []
        for g, kind in enumerate(meta["value_kind"]):
            if kind == "trees":
                forests.append(FlatForest.from_arrays(z, f"g{g}_tree"))
            elif kind == "poly":
                p = PolynomialValue(2)
                p.coef = np.asarray(z[f"g{g}_poly"])
                forests.append(p)
            else:
                forests.append(None)
        grid = ValueGrid(np.asarray(z["grid_low"]), np.asarray(z["grid_high"]), tuple(meta["grid_shape"]),
                         np.asarray(z["grid_values"]))
        return cls(problem, StoredValue(grid, forests), float(meta["discount"]), meta["members"], meta["segments"],
                   meta.get("info", {}))

    def storage_bytes(self) -> int:
        """Bytes of the value grids and flattened trees."""
        total = self.value.grid.values.nbytes
        for f in self.value.forests:
            if isinstance(f, FlatForest):
                total += sum(a.nbytes for a in (f.left, f.right, f.feature, f.threshold, f.value))
        return int(total)


# ----------------------------------------------------------------------------- runs and metrics

def rollout(planner: Planner, x0: np.ndarray, g0: np.ndarray, steps: int, greedy: bool = False, exact: bool = False):
    """Run the controller from many starts at once: (summed reward [N], steps until done [N] (or
    ``steps``), decisions (g [steps, N], k [steps, N]))."""
    x, g = np.array(x0, dtype=float), np.array(g0)
    n = len(x)
    total = np.zeros(n)
    alive = np.ones(n, dtype=bool)
    done_at = np.full(n, steps)
    gs, ks = np.zeros((steps, n), dtype=np.int64), np.zeros((steps, n), dtype=np.int64)
    for t in range(steps):
        _, g2, k2 = planner.decide_many(g, x, exact=exact, greedy=greedy)
        nxt, r, term = planner.step(x, g2, k2)
        total += np.where(alive, r + planner.problem.transition[g, g2], 0.0)
        gs[t], ks[t] = g2, k2
        finished = alive & term
        done_at[finished] = t + 1
        alive &= ~term
        x = np.where(alive[:, None], nxt, x)
        g = np.where(alive, g2, g)
    return total, done_at, (gs, ks)


def bellman_residual(planner: Planner, x: np.ndarray, g: np.ndarray) -> dict:
    """Eq. 8 at states (g, x), with the trees themselves: mean squared and mean absolute."""
    q, _, _ = planner.decide_many(g, x, exact=True)
    r = _exact_values(planner, g, x) - q
    return {"mean_squared": float(np.mean(r**2)), "mean_absolute": float(np.mean(np.abs(r)))}


def _exact_values(planner: Planner, g: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x))
    for gg in np.unique(g):
        sel = g == gg
        out[sel] = planner.value.exact(int(gg), x[sel])
    return out


def decision_time(planner: Planner, count: int = 500, seed: int = 0) -> float:
    """Mean seconds per single run-time decision (grid look-ups over every group and blend)."""
    rng = np.random.default_rng(seed)
    xs = planner.problem.task.sample(rng, count)
    gs = rng.integers(0, planner.n_groups, count)
    t = time.perf_counter()
    for x, g in zip(xs, gs):
        planner.decide(int(g), x)
    return (time.perf_counter() - t) / count


__all__ = ["Planner", "StoredValue", "bellman_residual", "decision_time", "rollout", "simplex_samples"]
