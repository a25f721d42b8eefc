"""What a library of capture can answer, read from the capture itself, and what it cannot (issue 59):
a controller can only play what its clips hold, so a library that never stands walks on when asked
to stop, one with no run moves at its fastest walk when asked to run, and so on.  Each figure is
measured over every clip's frames, on its root frame (``rootframe.root_frame``):

- standing: seconds in runs of at least ``STAND_SECONDS`` whose ground speed stays under
  ``STAND_SPEED`` (the hips swaying over planted feet);
- the slowest and fastest speeds the body keeps for a second (the 5th percentile of moving
  seconds, the largest second);
- the fastest turn kept for a second (rad/s) and the largest turn within ``REVERSE_SECONDS`` (a
  game's stick pulled back asks for 180 degrees);
- jumps: airborne runs (no foot on the floor) longer than ``AIR_SECONDS`` (a run's flight phases
  are shorter);
- backwards: seconds moving backwards faster than ``BACK_SPEED`` in the body's own frame (a figure
  only: a stick pulled back asks to turn round, as game characters do).

``cannot`` says, for each command a game pad gives that the library cannot answer, what the
character does instead."""

from __future__ import annotations

import numpy as np

from ..arrays import window_means
from ..body.contacts import foot_contacts, true_runs
from ..rootframe import root_frame, to_local

STAND_SPEED = 0.2  # m/s: slower than this over half a second is standing
STAND_SECONDS = 0.5
RUN_SPEED = 2.2  # m/s: a second faster than this is running
TURN_RATE = 1.0  # rad/s: a game pad's full turn (the stress schedules reach 1.5)
REVERSE_SECONDS = 2.0
REVERSE_DEGREES = 135.0
AIR_SECONDS = 0.2
BACK_SPEED = 0.3  # m/s


def library_reach(clips) -> dict:
    """The library's figures (module docstring) and "cannot": sentences, one per command it cannot
    answer, each saying what the character does instead."""
    stand = 0.0
    moving, fastest, turn, reverse, air, back, total = [], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for c in clips:
        if c.n_frames < 2:
            continue
        fps = c.fps
        total += c.n_frames / fps
        ground, yaw = root_frame(c)
        step = np.diff(ground, axis=0) * fps  # [F-1, 2] m/s
        speed = np.linalg.norm(step, axis=1)
        slow = window_means(speed, int(0.25 * fps)) < STAND_SPEED
        lengths = np.diff(true_runs(slow), axis=1).ravel()
        stand += float(lengths[lengths >= STAND_SECONDS * fps].sum()) / fps
        second = window_means(speed, int(fps))
        moving.append(second[second >= STAND_SPEED])
        fastest = max(fastest, float(second.max(initial=0.0)))
        rate = np.diff(yaw) * fps
        turn = max(turn, float(np.abs(window_means(rate, int(fps))).max(initial=0.0)))
        k = min(int(REVERSE_SECONDS * fps), c.n_frames - 1)
        reverse = max(reverse, float(np.degrees(np.abs(yaw[k:] - yaw[:-k]).max(initial=0.0))) if k > 0 else 0.0)
        flights = np.diff(true_runs(~foot_contacts(c).any(axis=1)), axis=1).ravel()
        air += float(flights[flights > AIR_SECONDS * fps].sum()) / fps
        local = to_local(step, yaw[:-1])
        back += float(np.sum(local[:, 1] < -BACK_SPEED)) / fps
    moving = np.concatenate(moving) if moving else np.zeros(0)
    slowest = float(np.percentile(moving, 5)) if moving.size else 0.0
    out = {"seconds": total, "standing_s": stand, "slowest_m_s": slowest, "fastest_m_s": fastest,
           "turn_rad_s": turn, "reverse_deg": reverse, "jump_s": air, "backwards_s": back}
    cannot = []
    if stand < STAND_SECONDS:
        cannot.append(f"it never stands still ({stand:.1f} s of {total:.0f} s): asked to stop, the character "
                      f"walks on at its slowest, about {slowest:.1f} m/s")
    if fastest < RUN_SPEED:
        cannot.append(f"it never runs (fastest {fastest:.1f} m/s over a second): asked to run, the character "
                      "moves at that speed")
    if turn < TURN_RATE:
        cannot.append(f"it turns at most {turn:.1f} rad/s over a second: asked to turn faster, the character "
                      "turns wider, or spins a straighter step round")
    if reverse < REVERSE_DEGREES:
        cannot.append(f"it never turns round (at most {reverse:.0f} degrees in {REVERSE_SECONDS:.0f} s): asked to "
                      "walk back the way it came, the character turns on a wide curve, or spins a step round")
    if air <= 0:
        cannot.append("it never leaves the floor: asked to jump, the character keeps walking")
    out["cannot"] = cannot
    return out


__all__ = ["library_reach"]
