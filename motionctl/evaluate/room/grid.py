"""Editing footprints (paper 004, Appendix A): where each clip may end on the grid once edited,
and the cells its edited path sweeps, per (start heading bin, clip)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...play.graph import MotionGraph
from ...rootframe import rotation_2d
from .environment import Grid

# ----------------------------------------------------------------------------- footprints

@dataclass
class EditModel:
    """Appendix A: the end of a clip may move within (s + α d) · (r_x, r_y, r_θ) of where it
    would land, s its arc length (m) and d its duration (s)."""

    r_x: float = 0.1
    r_y: float = 0.1
    r_theta: float = 0.15
    alpha: float = 1.0
    scale: float = 1.0  # the paper's "edit size" (1.0 = 100%)


@dataclass(eq=False)
class Footprints:
    """Per (start heading bin h, clip c): grid offsets (dx, dy, dh) of every reachable end grid
    point, and the cells each edited path sweeps (relative to the start cell)."""

    offsets: list  # [h][c] -> int [K, 3]
    swept: list  # [h][c] -> int [K, S, 2] (padded by repeating the last cell)
    cost: list  # [h][c] -> float [K]: arc length of the edited path (m)
    rev: list  # [h'][c] -> int [R, 4]: (start h, dx, dy, k) of starts whose footprint hits h'


def path_length(path: np.ndarray) -> float:
    """Ground length (m) of a root path [n, 3]."""
    return float(np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1).sum())


def footprints(graph: MotionGraph, grid: Grid, edit: EditModel) -> Footprints:
    """Every clip's footprint at every start heading bin (see ``Footprints``): grid points inside
    its editing ellipsoid (the nearest one when none is), the cells its edited path (eq. 16)
    sweeps, their arc lengths."""
    H, cell = grid.headings, grid.cell
    hb = 2 * np.pi / H
    offsets = [[None] * graph.n for _ in range(H)]
    swept = [[None] * graph.n for _ in range(H)]
    costs = [[None] * graph.n for _ in range(H)]
    rev = [[[] for _ in range(graph.n)] for _ in range(H)]
    for c in range(graph.n):
        path = graph.root_paths[c]
        end = path[-1]
        s = path_length(path)
        d = graph.duration[c]
        radii = edit.scale * (s + edit.alpha * d) * np.array([edit.r_x, edit.r_y, edit.r_theta])
        seg = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1))))
        frac = (seg + edit.alpha * np.linspace(0, d, len(path))) / max(s + edit.alpha * d, 1e-9)
        for h in range(H):
            th = h * hb
            rot = rotation_2d(th)  # the clip's start frame -> world
            nat = rot @ end[:2]
            reach = max(radii[0], radii[1]) + cell
            lo = np.floor((nat - reach) / cell).astype(int)
            hi = np.ceil((nat + reach) / cell).astype(int)
            gx, gy = np.meshgrid(np.arange(lo[0], hi[0] + 1), np.arange(lo[1], hi[1] + 1), indexing="ij")
            cand = np.column_stack((gx.ravel(), gy.ravel()))
            dpos = rot.T @ (cand * cell - nat).T  # in the clip's start frame
            dh_nat = end[2] / hb
            dhs = np.arange(int(np.floor(dh_nat - radii[2] / hb)) - 1, int(np.ceil(dh_nat + radii[2] / hb)) + 2)
            dth = dhs * hb - end[2]
            e = (dpos[0][:, None] / max(radii[0], 1e-9)) ** 2 + (dpos[1][:, None] / max(radii[1], 1e-9)) ** 2 + \
                (dth[None, :] / max(radii[2], 1e-9)) ** 2
            ci, hi_ = np.nonzero(e <= 1.0)
            if len(ci) == 0:
                # Smaller than a cell: the clip lands on the nearest grid point (rounding to the grid is
                # the discretisation, not an edit); without it the clip could never be embedded.
                ci, hi_ = np.unravel_index(np.array([np.argmin(e)]), e.shape)
            off = np.column_stack((cand[ci], dhs[hi_]))
            offsets[h][c] = off.astype(np.int64)
            # Edited paths (eq. 16): each frame moved by its share of the end correction.
            corr = off[:, :2] * cell - nat  # [K, 2] world correction of the end
            pts = (rot @ path[:, :2].T).T  # [n, 2] natural path, world-aligned
            edited = pts[None] + frac[None, :, None] * corr[:, None, :]
            cells = np.floor(edited / cell + 0.5).astype(np.int64)  # start cell centre at 0
            swept[h][c] = cells
            costs[h][c] = np.linalg.norm(np.diff(edited, axis=1), axis=2).sum(axis=1)
            for k, (dx, dy, dh) in enumerate(off.tolist()):
                rev[(h + dh) % H][c].append((h, dx, dy, k))
    rev = [[np.array(r, dtype=np.int64).reshape(-1, 4) for r in row] for row in rev]
    return Footprints(offsets, swept, costs, rev)
