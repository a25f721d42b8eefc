"""Synthetic locomotion on the CMU 31-joint layout, written as real BVH files.

This is *generated* motion, not capture: a root path from known speeds and turn rates, feet
planted on footholds along it (two-bone IK for the legs, so foot contacts are real), arms
swinging against the legs, a jump with a flight phase and a crouch.  It lets the demo and the
tests run on a machine with no capture; every engine is also shown on ../shared/mocap.

Each clip's sidecar JSON records its tags and the exact control it was generated with
(``"control"``: forward and lateral speed in m/s, turn rate in rad/s), so tests can check that
the evident control measured from the motion recovers it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .. import fmath, quat
from .bvh import write_bvh
from ..clip import Clip
from ..skeleton import Skeleton

CMU_UNIT = 0.0254 / 0.45  # metres per CMU length unit
FPS = 120.0
HIP_HEIGHT = 0.94
THIGH, SHIN = 0.44, 0.44
ANKLE_HEIGHT = 0.08

_ZYX = ("Zrotation", "Yrotation", "Xrotation")


def cmu_skeleton() -> Skeleton:
    """The CMU 3ds Max-friendly 31-joint rig (names, parents, channel orders), Z up, facing -Y,
    with generic adult proportions and the arms hanging down."""
    j = []  # (name, parent, offset, channels)

    def add(name, parent, off, chans=_ZYX):
        j.append((name, parent, np.array(off, dtype=float), chans))
        return len(j) - 1

    arm = ("Zrotation", "Xrotation", "Yrotation")
    hips = add("Hips", -1, (0, 0, HIP_HEIGHT), ("Xposition", "Yposition", "Zposition") + _ZYX)
    for side, sx in (("Left", 1.0), ("Right", -1.0)):
        s = side[0]
        hj = add(f"{s}HipJoint", hips, (0, 0, 0))
        hip = add(f"{side}Hip", hj, (sx * 0.09, 0.0, -0.06))
        knee = add(f"{side}Knee", hip, (0, 0, -THIGH))
        ankle = add(f"{side}Ankle", knee, (0, 0, -SHIN))
        add(f"{side}Toe", ankle, (0, -0.13, -0.05))
    low = add("lowerback", hips, (0, 0, 0))
    chest = add("Chest", low, (0, 0.01, 0.12))
    chest2 = add("Chest2", chest, (0, 0.0, 0.12))
    ln = add("lowerneck", chest2, (0, 0, 0))
    neck = add("Neck", ln, (0, 0.0, 0.10))
    add("Head", neck, (0, 0.0, 0.10))
    for side, sx in (("Left", 1.0), ("Right", -1.0)):
        s, lo = side[0], side[0].lower()
        col = add(f"{side}Collar", chest2, (0, 0, 0))
        sh = add(f"{side}Shoulder", col, (sx * 0.18, 0.02, 0.07), arm)
        el = add(f"{side}Elbow", sh, (0, 0, -0.28), arm)
        wr = add(f"{side}Wrist", el, (0, 0, -0.24), arm)
        hand = add(f"{lo}hand", wr, (0, 0, 0), arm)
        add(f"{s}Fingers", hand, (0, 0, -0.04), arm)
        add(f"{s}Thumb", wr, (0, 0, 0), arm)
    names = [x[0] for x in j]
    order = {n: i for i, n in enumerate(names)}
    ends = {f"{s}Toe": (0, -0.06, 0) for s in ("Left", "Right")}
    ends.update({"Head": (0, 0.0, 0.12), "LFingers": (0, 0, -0.03), "LThumb": (0, -0.03, -0.03),
                 "RFingers": (0, 0, -0.03), "RThumb": (0, -0.03, -0.03)})
    end_parent = [order[n] for n in ends]
    return Skeleton(names, [x[1] for x in j], [x[2] for x in j], [x[3] for x in j], end_parent,
                    list(ends.values()), CMU_UNIT)


@dataclass
class Gait:
    """Control profile of a clip, sampled per frame."""

    forward: np.ndarray  # m/s in the character frame
    lateral: np.ndarray  # m/s, + = to the character's right
    turn: np.ndarray  # rad/s, + = to the left
    crouch: np.ndarray  # 0..1 fraction of a full crouch
    run: bool = False


def _frame(z_axis: np.ndarray, x_hint: np.ndarray) -> np.ndarray:
    """Rotation matrices [F, 3, 3] with the given local +Z axis and +X as close to x_hint."""
    z = z_axis / np.linalg.norm(z_axis, axis=-1, keepdims=True)
    x = x_hint - np.sum(x_hint * z, axis=-1, keepdims=True) * z
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    y = np.cross(z, x)
    return np.stack((x, y, z), axis=-1)


def _integrate(rate: np.ndarray, dt: float) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * dt)))


def synthesize(gait: Gait, fps: float = FPS, heading0: float = 0.0, name: str = "clip",
               jump: tuple | None = None) -> Clip:
    """Generate a clip that follows ``gait`` (and an optional jump (t_takeoff, flight_s, height)).
    (About 120 lines on purpose: one procedural animation along one time line, root path, gait
    phase, footholds, leg IK, arms, jump, each step feeding the next.)"""
    sk = cmu_skeleton()
    n = len(gait.forward)
    dt = 1.0 / fps
    t = np.arange(n) * dt
    psi = heading0 + _integrate(gait.turn, dt)  # heading; facing = (sin psi, -cos psi) at psi=0 -> -Y
    facing = np.stack((np.sin(psi), -np.cos(psi), np.zeros(n)), axis=1)
    right = np.stack((-np.cos(psi), -np.sin(psi), np.zeros(n)), axis=1)  # character's right (-X at rest)
    vel = facing * gait.forward[:, None] + right * gait.lateral[:, None]
    ground = np.stack([_integrate(vel[:, k], dt) for k in range(2)], axis=1)
    speed = np.hypot(gait.forward, gait.lateral)

    # Gait phase: cadence grows with speed; stepping stops when standing still.
    cadence = (1.35 + 0.1 * speed) if gait.run else (0.75 + 0.25 * speed)
    cadence = cadence * np.clip(speed / 0.25, 0.0, 1.0)
    phase = 2 * np.pi * _integrate(cadence, dt)
    duty = 0.38 if gait.run else 0.62
    lift = (0.16 if gait.run else 0.09) * np.clip(speed / 0.4, 0.0, 1.0)

    # Hips low enough that a planted foot stays within reach over the whole stance.
    half_stance = 0.5 * speed * duty / np.maximum(cadence, 1e-3)
    reach = np.sqrt(np.maximum((0.97 * (THIGH + SHIN)) ** 2 - half_stance**2, 0.25))
    hip_h = np.minimum(HIP_HEIGHT, reach + ANKLE_HEIGHT + 0.06) - 0.36 * gait.crouch
    hip_h = np.convolve(np.pad(hip_h, 30, mode="edge"), np.ones(61) / 61, mode="valid")  # no sudden drops
    root = np.column_stack((ground, hip_h))
    airborne = np.zeros(n, dtype=bool)
    if jump is not None:
        t0, flight, height = jump
        s = (t - t0) / flight
        air = (s > 0) & (s < 1)
        airborne |= air
        root[air, 2] += 4 * height * s[air] * (1 - s[air]) + 0.05
        # Crouch before takeoff and after landing.
        dip = 0.18 * (fmath.exp(-(((t - t0 + 0.15) / 0.12) ** 2)) + fmath.exp(-(((t - t0 - flight - 0.15) / 0.12) ** 2)))
        root[:, 2] -= dip

    pelvis_yaw = (0.06 if not gait.run else 0.1) * np.sin(phase) * np.clip(speed / 0.5, 0, 1)
    lean = 0.04 * gait.forward + 0.12 * gait.crouch
    q_head = quat.about_axis(2, psi + pelvis_yaw)
    q_root = quat.mul(q_head, quat.about_axis(0, 0.5 * lean))

    local = quat.identity((n, sk.n_joints))
    local[:, 0] = q_root
    idx = {nm: i for i, nm in enumerate(sk.names)}

    # Spine: lean and counter-rotation of the shoulders.
    for nm, share in (("lowerback", 0.3), ("Chest", 0.4), ("Chest2", 0.3)):
        local[:, idx[nm]] = quat.mul(quat.about_axis(2, -share * 1.6 * pelvis_yaw), quat.about_axis(0, share * 0.8 * lean))

    # Legs: footholds along the path, then two-bone IK from the hip joint.
    def path_at(tq):
        """Ground position [K, 2] and heading [K] at times tq, extrapolated past the ends."""
        g = np.column_stack([np.interp(tq, t, ground[:, k]) for k in range(2)])
        h = np.interp(tq, t, psi)
        late, early = tq > t[-1], tq < t[0]
        g[late] += (tq[late] - t[-1])[:, None] * vel[-1, :2]
        g[early] += (tq[early] - t[0])[:, None] * vel[0, :2]
        h[late] += (tq[late] - t[-1]) * gait.turn[-1]
        h[early] += (tq[early] - t[0]) * gait.turn[0]
        return g, h

    def time_at(ph_query, ph):
        tq = np.interp(ph_query, ph, t)
        late, early = ph_query > ph[-1], ph_query < ph[0]
        tq[late] = t[-1] + (ph_query[late] - ph[-1]) / max(cadence[-1], 1e-3)
        tq[early] = t[0] - (ph[0] - ph_query[early]) / max(cadence[0], 1e-3)
        return tq

    for side, sx, offset_phase in (("Left", 1.0, 0.0), ("Right", -1.0, np.pi)):
        ph = (phase + offset_phase) / (2 * np.pi)
        cycle = np.floor(ph)
        frac = ph - cycle
        stance = frac < duty
        holds = []
        for k in (0, 1):  # this cycle's foothold and the next one
            g, h = path_at(time_at(cycle + k + 0.5 * duty, ph))
            holds.append(g + np.stack((np.cos(h), np.sin(h)), axis=1) * sx * 0.1)
        s = np.clip((frac - duty) / (1 - duty), 0, 1)
        smooth = s * s * (3 - 2 * s)
        foot_xy = np.where(stance[:, None], holds[0], holds[0] + (holds[1] - holds[0]) * smooth[:, None])
        foot_z = ANKLE_HEIGHT + np.where(stance, 0.0, lift * np.sin(np.pi * s))
        ankle_target = np.column_stack((foot_xy, foot_z))
        if jump is not None:
            # Feet beside the root: planted on the ground, tucked under the body in the air.
            under = root[:, :2] + np.stack((np.cos(psi), np.sin(psi)), axis=1) * sx * 0.1
            landed = np.maximum.accumulate(np.where(np.concatenate(([True], airborne[:-1] & ~airborne[1:])), np.arange(n), 0))
            ankle_target = np.where(
                airborne[:, None],
                np.column_stack((under, root[:, 2] - (THIGH + SHIN) * 0.8)),
                np.column_stack((under[landed], np.full(n, ANKLE_HEIGHT))),
            )
        hip_pos = root + quat.rotate(q_root, np.broadcast_to(sk.offsets[idx[f"{side}Hip"]], (n, 3)))
        d = ankle_target - hip_pos
        dist = np.linalg.norm(d, axis=1)
        u = d / dist[:, None]
        dist = np.minimum(dist, THIGH + SHIN - 1e-4)
        alpha = fmath.arccos(np.clip((THIGH**2 + dist**2 - SHIN**2) / (2 * THIGH * dist), -1, 1))
        hinge = np.cross(facing, u)
        hinge /= np.linalg.norm(hinge, axis=1, keepdims=True)
        bend = np.cross(u, hinge)  # in the leg plane, pointing forward: the knee goes this way
        thigh_dir = np.cos(alpha)[:, None] * u + np.sin(alpha)[:, None] * bend
        shin_dir = (u * dist[:, None] - THIGH * thigh_dir) / SHIN
        g_thigh = quat.from_matrix(_frame(-thigh_dir, hinge))
        g_shin = quat.from_matrix(_frame(-shin_dir, hinge))
        local[:, idx[f"{side}Hip"]] = quat.mul(quat.conj(q_root), g_thigh)
        local[:, idx[f"{side}Knee"]] = quat.mul(quat.conj(g_thigh), g_shin)
        local[:, idx[f"{side}Ankle"]] = quat.mul(quat.conj(g_shin), q_head)  # foot flat along the heading

    # Arms swing against the legs; elbows bend more when running or crouching.
    swing = (0.5 if gait.run else 0.3) * np.clip(speed / 1.0, 0, 1.2)
    for side, sgn in (("Left", 1.0), ("Right", -1.0)):
        a = sgn * swing * np.sin(phase)
        out = -sgn * (0.12 + 0.6 * airborne)
        local[:, idx[f"{side}Shoulder"]] = quat.mul(quat.about_axis(1, out), quat.about_axis(0, a))
        elbow = -(0.25 + (0.9 if gait.run else 0.25 * speed) + 0.6 * gait.crouch)
        local[:, idx[f"{side}Elbow"]] = quat.about_axis(0, elbow)
    clip = Clip(name, sk, fps, root, local)
    clip.annotations["airborne"] = airborne
    return clip


def demo_clips(seed: int = 0, fps: float = FPS) -> list:
    """The demo library: (clip, tags, control) triples, deterministic in ``seed``."""
    rng = np.random.default_rng(seed)

    def jitter(x, rel=0.05):
        return float(x * (1 + rel * rng.standard_normal()))

    out = []

    def make(name, seconds, forward=0.0, lateral=0.0, turn=0.0, run=False, tags=(), crouch=None, jump=None,
             forward_profile=None):
        n = int(round(seconds * fps))
        fwd = np.full(n, forward) if forward_profile is None else forward_profile(np.arange(n) / fps)
        g = Gait(fwd, np.full(n, lateral), np.full(n, turn), np.zeros(n) if crouch is None else crouch(np.arange(n) / fps), run)
        clip = synthesize(g, fps, heading0=float(rng.uniform(-np.pi, np.pi)), name=name, jump=jump)
        clip.tags |= set(tags)
        control = {"forward": forward, "lateral": lateral, "turn": turn}
        out.append((clip, sorted(set(tags)), control))

    for label, v in (("slow", 0.8), ("", 1.3), ("fast", 1.8)):
        make(f"demo_walk{'_' + label if label else ''}", 4.0, forward=jitter(v), tags=["walk"] + ([label] if label else []))
    for label, v in (("", 3.0), ("fast", 4.0)):
        make(f"demo_run{'_' + label if label else ''}", 3.0, forward=jitter(v), run=True, tags=["run"] + ([label] if label else []))
    for side, sgn in (("left", 1.0), ("right", -1.0)):
        make(f"demo_walk_turn_{side}", 5.0, forward=jitter(1.2), turn=sgn * jitter(0.8), tags=["walk", "turn", side])
        make(f"demo_run_turn_{side}", 3.5, forward=jitter(3.0), turn=sgn * jitter(1.0), run=True, tags=["run", "turn", side])
        make(f"demo_sidestep_{side}", 3.0, lateral=-sgn * jitter(0.6), tags=["sidestep", side])
    make("demo_walk_backward", 3.0, forward=-jitter(0.7), tags=["walk", "backward"])

    v = jitter(1.3)
    stop_start = lambda tt: v * np.clip(np.abs(tt - 3.0) - 0.6, 0, 1.2) / 1.2  # noqa: E731
    make("demo_walk_stop_start", 6.0, forward_profile=stop_start, tags=["walk", "stop", "start"])
    flight = (1.3, 0.45, 0.3)  # takeoff time, flight seconds, apex height (m)
    hop = lambda tt: np.where((tt > flight[0]) & (tt < flight[0] + flight[1]), 1.6, 0.0)  # noqa: E731
    make("demo_jump", 3.0, jump=flight, forward_profile=hop, tags=["jump"])
    crouch = lambda tt: np.clip(np.minimum(tt - 1.0, 4.0 - tt) / 0.8, 0, 1)  # noqa: E731
    make("demo_crouch", 5.0, forward=0.0, crouch=crouch, tags=["crouch"])
    return out


def write_demo_library(folder, seed: int = 0, fps: float = FPS) -> list:
    """Write the demo clips as BVH (CMU units) with sidecar JSON; returns the BVH paths."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for clip, tags, control in demo_clips(seed, fps):
        path = os.path.join(folder, clip.name + ".bvh")
        write_bvh(clip, path)
        side = {"tags": tags, "control": control, "synthetic": True, "seed": seed}
        if "airborne" in clip.annotations and clip.annotations["airborne"].any():
            air = np.flatnonzero(clip.annotations["airborne"])
            side["action_centres"] = [int(air[len(air) // 2])]
        with open(os.path.splitext(path)[0] + ".json", "w", encoding="utf-8") as fh:
            json.dump(side, fh, indent=1)
        paths.append(path)
    return paths
