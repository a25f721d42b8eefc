"""Pictures for the README, drawn from the engine's own arrays (no renderer needed):
a strip of poses of a clip seen from the side and its root trajectory seen from above; with
``--coverage``, the coverage map of bench_evaluate.py's motion graph in its baseline room.

    .venv/bin/python bench/readme_figures.py [--clip BVH] [--out docs/library_strip.png]
    .venv/bin/python bench/readme_figures.py --coverage [--mocap DIR] [--out docs/coverage_baseline.png]
"""

from __future__ import annotations

import argparse
import os
import struct
import zlib

import numpy as np

from harness import ROOT, add_mocap, default_mocap  # noqa: E402,F401  (first: the checkout on the path)

from motionctl.io import demo_data  # noqa: E402
from motionctl.io.library import ImportSettings, load_clip  # noqa: E402
from motionctl.body import Body, foot_contacts  # noqa: E402
from motionctl.clip import world_with_ends  # noqa: E402
from motionctl.rootframe import root_frame  # noqa: E402


def write_png(path: str, rgb: np.ndarray) -> None:
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as fh:
        fh.write(png)


class Canvas:
    def __init__(self, w, h, ss=3):
        self.ss = ss
        self.img = np.ones((h * ss, w * ss, 3))

    def lines(self, a, b, color, width=2.0):
        """Segments a[K, 2] -> b[K, 2] in pixel units (y down)."""
        a, b = np.asarray(a, float) * self.ss, np.asarray(b, float) * self.ss
        n = int(np.ceil(np.max(np.linalg.norm(b - a, axis=1), initial=1))) + 1
        t = np.linspace(0, 1, n)[None, :, None]
        pts = (a[:, None] + (b - a)[:, None] * t).reshape(-1, 2)
        r = width * self.ss / 2
        off = np.stack(np.meshgrid(np.arange(-int(r), int(r) + 1), np.arange(-int(r), int(r) + 1)), -1).reshape(-1, 2)
        off = off[np.linalg.norm(off, axis=1) <= r]
        p = (np.rint(pts)[:, None] + off[None]).reshape(-1, 2).astype(int)
        h, w = self.img.shape[:2]
        ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
        self.img[p[ok, 1], p[ok, 0]] = color

    def result(self):
        h, w = self.img.shape[0] // self.ss, self.img.shape[1] // self.ss
        small = self.img.reshape(h, self.ss, w, self.ss, 3).mean(axis=(1, 3))
        return (small * 255).clip(0, 255)


def draw_strip(clip, path, n_poses=9):
    pts = world_with_ends(clip)
    sk = clip.skeleton
    par = np.concatenate((sk.parents, sk.end_parent))
    contacts = foot_contacts(clip)
    frames = np.linspace(0, clip.n_frames - 1, n_poses).astype(int)
    # Side view of the path unrolled: distance travelled plus each joint's offset along the
    # character's heading (horizontal axis), height (vertical axis).
    _, yaw = root_frame(clip)
    fwd = np.stack((-np.sin(yaw), np.cos(yaw)), axis=1)
    arc = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(pts[:, 0, :2], axis=0), axis=1))))
    xs = arc[:, None] + np.einsum("fkd,fd->fk", pts[..., :2] - pts[:, :1, :2], fwd)
    zs = pts[..., 2]
    W, H, top_h = 1200, 330, 260
    scale = min((W - 80) / (xs.max() - xs.min() + 0.6), (H - 40) / (zs.max() + 0.2))
    c = Canvas(W, H + top_h)
    ground = H - 20
    c.lines([[20, ground]], [[W - 20, ground]], (0.6, 0.6, 0.6), 2)
    for k, f in enumerate(frames):
        shade = 0.25 + 0.5 * (1 - k / max(n_poses - 1, 1))
        col = (shade * 0.3, shade * 0.5, 0.85)
        x = 40 + (xs[f] - xs.min() + 0.3) * scale
        y = ground - zs[f] * scale
        kids = np.flatnonzero(par >= 0)
        c.lines(np.column_stack((x[par[kids]], y[par[kids]])), np.column_stack((x[kids], y[kids])), col, 3)
    # Top view: root trajectory, feet planted in orange.
    g = pts[:, 0, :2]
    span = np.ptp(g, axis=0).max() + 0.5
    s2 = (top_h - 30) / span
    base = np.array([W / 2, H + top_h / 2]) - (g.min(0) + np.ptp(g, 0) / 2) * s2 * np.array([1, -1])
    p2 = base + g * s2 * np.array([1, -1])
    c.lines(p2[:-1], p2[1:], (0.2, 0.2, 0.2), 2)
    feet = Body.of(sk).feet
    for side, key in enumerate("LR"):
        planted = pts[contacts[:, side], feet[key][1], :2]
        q = base + planted * s2 * np.array([1, -1])
        c.lines(q, q + 0.01, (0.95, 0.55, 0.1), 3)
    write_png(path, c.result())


def draw_coverage(mocap: str, path: str, scale: int = 8) -> None:
    """The benchmark's baseline graph embedded in its congested room: covered floor green (brighter
    where more clips and headings land), uncovered free floor grey, walls dark red, the chasm blue,
    the low wall orange (both widened by the character's radius)."""
    from bench_evaluate import BASELINE, congested_room, load_clips

    from motionctl.engines.graph import build_graph
    from motionctl.evaluate import CHASM, LOW, coverage, coverage_rgba, embed

    graph = build_graph(load_clips(mocap), BASELINE)
    emb = embed(graph, congested_room())
    cov = coverage(emb)
    rgba = coverage_rgba({"coverage_map": cov["map"], "free": cov["free"]})
    bits = emb.grid.bits.T  # rows = y, like the image
    rgba[(bits & CHASM) != 0] = (0.15, 0.25, 0.6, 1.0)  # the chasm (only jumps cross it)
    rgba[(bits & LOW) != 0] = (0.8, 0.55, 0.1, 1.0)  # the low wall (jump or step over)
    rgba = rgba[::-1]  # north up
    rgb = np.repeat(np.repeat((255 * rgba[..., :3]).round(), scale, axis=0), scale, axis=1)
    write_png(path, rgb)
    print(f"{graph.n} clips, {emb.n_nodes} nodes, coverage {100 * cov['xy']:.1f}% XY")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clip", help="BVH or AMC file (default: the generated walk turning left)")
    ap.add_argument("--coverage", action="store_true", help="draw the motion graph coverage map instead")
    add_mocap(ap)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.coverage:
        args.out = args.out or os.path.join(ROOT, "docs", "coverage_baseline.png")
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        draw_coverage(args.mocap, args.out)
        print(f"wrote {args.out}")
        return
    args.out = args.out or os.path.join(ROOT, "docs", "library_strip.png")
    if args.clip:
        clip, _, _ = load_clip(args.clip, ImportSettings())
    else:
        clip = next(c for c, _, _ in demo_data.demo_clips(0) if c.name == "demo_walk_turn_left")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    draw_strip(clip, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
