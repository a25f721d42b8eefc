"""Value iteration over a motion graph's clips for the direction task: the clip-based controller
paper 002 compared motion fields against (a graph controller in the manner of Lee et al. 2009,
"with up to ±45 degrees of directional warping on clips and minimal importance to the
physicality cost"), with the field's reward and discount so the two answer the same question.

A decision is made at the end of a clip c: the task state is θ, the desired heading minus the
facing.  An action is a successor clip c' and a warp ω (``warps`` values over [-max_warp,
max_warp]) that turns the character's facing by ω spread evenly over c' (``Step.edit``, as
paper 004's editing does).  Playing it earns the field's reward every frame, -|θ_t| with θ_t = θ
- yaw_t - ω·t/n (yaw_t: c's own turn after t of its n frames), discounted by γ per frame, less
a physicality cost ``WARP_COST``·|ω|, and ends in task state θ_n at the end of c'.  Values are
stored per clip on the field's 18 heading samples (``GridTask("direction")``) and interpolated
between them; a sweep is array arithmetic over (clip, warp, θ sample) and a maximum over each
clip's successors, until no value moves by more than a tolerance.

Warps are also bounded by a rate (``warp_limits``: a short clip may turn its facing less than
Max Warp; unbounded, a one-frame clip turned 45° in a frame).  A graph with jump clips learns a
second table, ``jump_values``, for while a jump is asked: every frame until a jump costs, and a
jump serves the request (what follows it is worth the first table's values).  ``greedy`` is the
Greedy policy's one-clip look: the next clip's reward per discounted frame, no value beyond it
(its penalties, a jump or action nobody asked for and a rough transition, count once per clip).

Speed (our extension; the paper's comparison knew only the heading): with ``speeds`` the task
state is (θ, v) with v the asked speed, sampled from standing to the graph's fastest clip
(``GridTask`` with speeds), and every frame of c' also costs ``speed_weight``·|s_c' - v| with
s_c' the clip's own ground speed, so the search weighs reaching a walk, a run or a stop (a clip
that stands) against the heading.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ... import fmath
from ...jobs import check_stop, converging, progress_range
from ...rootframe import wrap
from ...play.tasks import GridTask, speed_samples

WARP_COST = 0.1  # reward lost per radian of warp, per clip: minimal, as in the paper's comparison


@dataclass
class Lookahead:
    """A graph's direction-task value function: ``values`` [K, G] per clip and task sample (18
    headings, or 18 headings x the asked ``speeds`` m/s), reward ``speed_weight`` per m/s off."""

    values: np.ndarray
    warps: np.ndarray
    gamma: float
    speeds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    speed_weight: float = 0.0
    sweeps: int = 0
    residual: float = 0.0
    seconds: float = 0.0
    one_clip: bool = False  # Greedy: the next clip's reward per frame, no value beyond it
    jump_values: np.ndarray | None = None  # [K, G] while a jump is asked (a graph with jumps)


def clip_yaws(root_paths: list) -> tuple[np.ndarray, np.ndarray]:
    """(yaw after each frame [K, L] padded with each clip's last, lengths [K]) of a graph's clips."""
    n = np.array([len(p) - 1 for p in root_paths], dtype=np.int64)
    L = int(max(n.max(), 1))
    yaw = np.zeros((len(root_paths), L))
    for i, p in enumerate(root_paths):  # once per graph clip, at training
        yaw[i, :n[i]] = p[1:, 2]
        yaw[i, n[i]:] = p[-1, 2]
    return yaw, n


def play(yaw: np.ndarray, n: np.ndarray, theta: np.ndarray, warps: np.ndarray, gamma: float):
    """(discounted reward, final θ) of playing clips with frame yaws ``yaw`` [K, L], lengths ``n``
    [K], from task states ``theta`` [..., K, 1, T] (broadcasting) under each warp [W] (or each
    clip's own [K, W]): arrays [..., K, W, T]."""
    warps = np.broadcast_to(warps, (len(n),) + np.shape(warps)[-1:])  # [K, W]
    L = yaw.shape[1]
    t = np.arange(1, L + 1)
    live = t[None, :] <= n[:, None]  # [K, L]
    share = np.where(live, t[None, :] / np.maximum(n, 1)[:, None], 1.0)  # [K, L] of the warp applied
    disc = np.where(live, fmath.power(gamma, t - 1.0)[None, :], 0.0)  # [K, L]
    turned = yaw[:, None, :] + warps[:, :, None] * share[:, None, :]  # [K, W, L]
    th = wrap(theta[..., None] - turned[..., None, :])  # [..., K, W, T, L]
    reward = -np.einsum("...kwtl,kl->...kwt", np.abs(th), disc) - WARP_COST * np.abs(warps)[..., None]
    return reward, th[..., -1]


def task_of(speeds: np.ndarray) -> GridTask:
    """The direction task, knowing the asked speed when ``speeds`` (m/s) are given."""
    return GridTask("direction", speeds=tuple(float(x) for x in speeds)) if len(speeds) >= 2 else GridTask("direction")


def discounted_frames(n: np.ndarray, gamma: float) -> np.ndarray:
    """Σ γ^t over each clip's ``n`` frames: what a reward earned every frame adds up to."""
    n = np.asarray(n, dtype=float)
    return (1.0 - fmath.power(gamma, n)) / (1.0 - gamma) if gamma < 1 else n


def speed_cost(clip_speed: np.ndarray, n: np.ndarray, asked: np.ndarray, weight: float, gamma: float) -> np.ndarray:
    """[K, V] the discounted cost of playing each clip (ground speed ``clip_speed`` [K] m/s, ``n``
    [K] frames) when ``asked`` [V] m/s is wanted: ``weight``·|s - v| every frame."""
    return weight * np.abs(clip_speed[:, None] - asked[None, :]) * discounted_frames(n, gamma)[:, None]


def learn(graph, yaws: tuple, penalty: np.ndarray, warps: np.ndarray, gamma: float = 0.99, tol: float = 0.01,
          max_sweeps: int = 3000, should_stop=None, clip_speed: np.ndarray | None = None, speed_count: int = 0,
          speed_weight: float = 1.0, edge_cost: np.ndarray | None = None,
          clip_warps: np.ndarray | None = None, jump_penalty: np.ndarray | None = None,
          jumps: np.ndarray | None = None, progress=None) -> Lookahead:
    """Value iteration over ``graph``'s clips (see the module docstring), their ``clip_yaws``
    ``yaws``; ``penalty`` [K] is a further cost of playing each clip (a jump or action nobody
    asked for).  With ``clip_speed`` [K] (m/s) and ``speed_count`` >= 2 the asked speed is part
    of the task (``speed_samples`` of the clips' speeds); ``edge_cost`` [E] a cost of taking each
    of the graph's edges (a rough transition); ``clip_warps`` [K, W] each clip's own levels of
    ``warps`` [W] (a short clip may warp less: ``warp_limits``).  ``jump_penalty`` [K]: the cost
    of each clip while a jump is asked (any clip but a jump: ``jumps`` [K] marks them), for a
    second table of values (``jump_values``) that finds the way to a jump, which serves the
    request: what follows a jump is worth what the first table says.  ``progress(fraction,
    message)`` hears the sweeps (the jump table, when there is one, is the second half)."""
    t0 = time.perf_counter()
    speeds = speed_samples(clip_speed, speed_count) if clip_speed is not None else np.zeros(0)
    task = task_of(speeds)
    heads = task.headings()
    yaw, n = yaws
    k = graph.n
    base, final = play(yaw, n, heads[None, None, :], warps if clip_warps is None else clip_warps, gamma)  # [K, W, H]
    if task.speeds:  # [K, W, H, V] flattened row-major to the task grid's (heading, speed)
        shape = base.shape + (len(speeds),)
        base = (base[..., None] - speed_cost(clip_speed, n, speeds, speed_weight, gamma)[:, None, None, :])
        final = np.stack(np.broadcast_arrays(final[..., None], speeds), axis=-1).reshape(shape[0], shape[1], -1, 2)
        base = base.reshape(shape[0], shape[1], -1)
    else:
        final = final[..., None]
    idx, wts = task.corners(final)  # [K, W, G, c]
    end = fmath.power(gamma, n.astype(float))  # [K]
    src, dst = graph.edges[:, 0], graph.edges[:, 1]

    def iterate(cost: np.ndarray, served: np.ndarray | None = None, report=None) -> tuple:
        """(values, sweeps, residual) for per-clip ``cost``; ``served`` [K, T]: the future of a jump
        clip's end (the request met, the values without it) while looking for one."""
        reward = base - cost[:, None, None]
        after = None if served is None else np.sum(served[np.arange(k)[:, None, None, None], idx] * wts, axis=-1)
        v = np.zeros((k, task.size))
        sweeps, change, residuals, done = 0, np.inf, [], 0.0
        for sweeps in range(1, max_sweeps + 1):
            check_stop(should_stop, "graph value iteration")
            future = np.sum(v[np.arange(k)[:, None, None, None], idx] * wts, axis=-1)  # [K, W, T]
            if after is not None:
                future = np.where(jumps[:, None, None], after, future)
            best = np.max(reward + end[:, None, None] * future, axis=1)  # [K, T]: the best warp into each clip
            new = np.full_like(v, -np.inf)
            np.maximum.at(new, src, best[dst] if edge_cost is None else best[dst] - edge_cost[:, None])
            new = np.where(np.isfinite(new), new, v)
            change = float(np.max(np.abs(new - v)))
            v = new
            residuals.append(change)
            if change < tol:
                break
            if report is not None and sweeps % 10 == 0:
                done = max(done, converging(residuals, tol, max_sweeps))
                report(min(0.99, done), f"sweep {sweeps}: largest change {change:.4g}")
        if report is not None:
            report(1.0, f"converged after {sweeps} sweeps" if change < tol else f"{sweeps} sweeps, the most allowed")
        return v.astype(np.float32), sweeps, change

    half = 0.5 if jump_penalty is not None else 1.0
    v, sweeps, change = iterate(penalty, report=progress_range(progress, 0.0, half))
    jump_v = iterate(jump_penalty, v, progress_range(progress, half, 1.0))[0] if jump_penalty is not None else None
    return Lookahead(v, warps, gamma, speeds, speed_weight if task.speeds else 0.0, sweeps, change,
                     time.perf_counter() - t0, jump_values=jump_v)


def greedy(n_clips: int, warps: np.ndarray, gamma: float, clip_speed: np.ndarray, speed_count: int,
           speed_weight: float) -> Lookahead:
    """A ``Lookahead`` that sees one clip ahead: ``choose`` by the next clip's own reward per
    (discounted) frame, so a long clip is not worse for being long, with the same warps and speed
    cost and no value beyond it: the Greedy policy."""
    speeds = speed_samples(clip_speed, speed_count)
    task = task_of(speeds)
    return Lookahead(np.zeros((n_clips, task.size), dtype=np.float32), warps, gamma, speeds,
                     speed_weight if task.speeds else 0.0, one_clip=True)


def warp_limits(warps: np.ndarray, seconds: np.ndarray, rate: float) -> np.ndarray:
    """[K, W] the ``warps`` [W] (rad) each clip of ``seconds`` [K] may play with when no warp may
    turn the facing faster than ``rate`` rad/s: the levels scaled down for a short clip (0 or
    inf: unbounded)."""
    top = float(np.max(np.abs(warps))) if len(warps) else 0.0
    if not rate or not np.isfinite(rate) or top == 0.0:
        return np.broadcast_to(warps, (len(seconds), len(warps))).copy()
    return warps[None, :] * np.minimum(1.0, rate * np.asarray(seconds, dtype=float) / top)[:, None]


def choose(look: Lookahead, yaw: np.ndarray, n: np.ndarray, cands: np.ndarray, theta: float,
           penalty: np.ndarray, speed: float = 0.0, clip_speed: np.ndarray | None = None,
           warps: np.ndarray | None = None, jump: bool = False, jumps: np.ndarray | None = None) -> tuple[int, float]:
    """(index into ``cands``, warp) of the best successor and warp from task state ``theta`` (and
    the asked ``speed`` m/s, when the values know speed: ``clip_speed`` [K] the clips' own);
    ``penalty`` [C] a further cost of each candidate (and a tie-breaker); ``warps`` [K, W] each
    clip's own (``warp_limits``; default ``look.warps`` for all); ``jump``: a jump is asked (the
    values that find one, where the graph has them, as ``learn`` made them: a candidate that is a
    jump, ``jumps`` [K], serves the request and is followed by the ordinary values)."""
    task = task_of(look.speeds)
    mine = np.broadcast_to(look.warps, (len(cands), len(look.warps))) if warps is None else warps[cands]
    reward, final = play(yaw[cands], n[cands], np.array([[[theta]]]), mine, look.gamma)  # [C, W, 1]
    reward = reward[..., 0]
    if task.speeds:
        reward = reward - speed_cost(clip_speed[cands], n[cands], np.array([speed]), look.speed_weight, look.gamma)
        final = np.stack(np.broadcast_arrays(final, speed), axis=-1)[..., 0, :]  # [C, W, 2]
    if look.one_clip:  # per discounted frame, so that a long clip is not worse for being long
        q = reward / discounted_frames(np.maximum(n[cands], 1), look.gamma)[:, None]
    else:
        values = look.values[cands]
        if jump and look.jump_values is not None:
            served = jumps[cands] if jumps is not None else np.zeros(len(cands), dtype=bool)
            values = np.where(served[:, None], values, look.jump_values[cands])
        future = task.interpolate(np.broadcast_to(values[:, None, :], final.shape[:2] + (values.shape[1],)), final)
        q = reward + fmath.power(look.gamma, n[cands].astype(float))[:, None] * future
    q = q - penalty[:, None]
    best = np.unravel_index(int(np.argmax(q)), q.shape)
    return int(best[0]), float(mine[best])

__all__ = ["WARP_COST", "Lookahead", "choose", "clip_yaws", "discounted_frames", "greedy", "learn", "play", "warp_limits"]
