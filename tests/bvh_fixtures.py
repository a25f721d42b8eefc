"""Small BVH files built in code: odd channel layouts, formatting quirks, known motion."""

from __future__ import annotations

import numpy as np

JOINTS = [
    # name, parent, offset (file units, Y up), channels
    ("Root", -1, (1.0, 2.0, 3.0), ("Xposition", "Yposition", "Zposition", "Yrotation", "Xrotation", "Zrotation")),
    ("Spine", 0, (0.0, 10.0, 0.0), ("Xrotation", "Zrotation", "Yrotation")),
    ("Arm", 1, (5.0, 2.0, 0.0), ("Zrotation", "Xposition", "Yrotation", "Yposition", "Zposition", "Xrotation")),
    ("Hand", 2, (0.0, -4.0, 1.0), ("Yrotation", "Zrotation", "Xrotation")),
    ("Leg", 0, (-2.0, -9.0, 0.5), ("Zrotation", "Yrotation", "Xrotation")),
]
ENDS = {3: (0.0, -1.5, 0.0), 4: (0.0, -8.0, 1.0)}


def smooth_channels(n_frames: int, seed: int = 0) -> np.ndarray:
    """Channel values [F, C]: smooth positions and Euler angles with the middle angle in
    (-80, 80) degrees, so an exact writer reproduces them value for value."""
    rng = np.random.default_rng(seed)
    cols = []
    for _, _, _, chans in JOINTS:
        rot_seen = 0
        for c in chans:
            t = np.linspace(0, 1, n_frames)
            phase, amp = rng.uniform(0, 6), rng.uniform(5, 60)
            if c.endswith("position"):
                cols.append(rng.uniform(-5, 5) + amp * 0.1 * np.sin(2 * t + phase))
            else:
                base = rng.uniform(-70, 70) if rot_seen == 1 else rng.uniform(-150, 150)
                amp = 9.0 if rot_seen == 1 else 20.0
                cols.append(base + amp * np.sin(3 * t + phase))
                rot_seen += 1
    return np.stack(cols, axis=1)


def bvh_text(values: np.ndarray, frame_time: float = 1 / 30, newline: str = "\n", indent: str = "\t",
             number: str = "{:.6f}", frames_line: int | None = None) -> str:
    children = {i: [j for j, row in enumerate(JOINTS) if row[1] == i] for i in range(len(JOINTS))}
    out = ["HIERARCHY"]

    def write(j, depth):
        name, _, off, chans = JOINTS[j]
        pad = indent * depth
        out.append(f"{pad}{'ROOT' if depth == 0 else 'JOINT'} {name}")
        out.append(pad + "{")
        out.append(f"{pad}{indent}OFFSET " + " ".join(number.format(x) for x in off))
        out.append(f"{pad}{indent}CHANNELS {len(chans)} " + " ".join(chans))
        for k in children[j]:
            write(k, depth + 1)
        if j in ENDS:
            out.extend([f"{pad}{indent}End Site", pad + indent + "{",
                        f"{pad}{indent * 2}OFFSET " + " ".join(number.format(x) for x in ENDS[j]), pad + indent + "}"])
        out.append(pad + "}")

    write(0, 0)
    out += ["MOTION", f"Frames: {len(values) if frames_line is None else frames_line}", f"Frame Time: {frame_time:.7f}"]
    out += [" ".join(number.format(v) for v in row) for row in values]
    return newline.join(out) + newline
