"""The one two-bone IK (body.ik.two_bone): it reaches, leaves a leg alone when asked for where its
ankle is, and near full stretch (soft) does not snap the knee for a few millimetres."""

import numpy as np
import pytest

from motionctl import quat
from motionctl.body.ik import two_bone


def leg(bend_deg: float):
    """Hip at the origin, thigh and shin 0.45 m each, the knee bent forward by ``bend_deg``."""
    a = np.zeros(3)
    b = np.array([0.0, 0.0, -0.45])
    t = np.radians(bend_deg)
    c = b + 0.45 * np.array([0.0, -np.sin(t), -np.cos(t)])
    return a, b, c


def solve(a, b, c, goal, soft=0.0):
    r_hip, r_knee = two_bone(a, b, c, goal, soft)
    knee = a + quat.rotate(r_hip, b - a)
    ankle = knee + quat.rotate(quat.mul(r_knee, r_hip), c - b)
    return knee, ankle


def knee_angle(a, knee, ankle) -> float:
    u, v = knee - a, ankle - knee
    return float(np.degrees(np.arccos(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v), -1, 1))))


def test_the_ankle_reaches_a_goal_within_reach_and_the_knee_bends_the_way_the_pose_bends():
    a, b, c = leg(40.0)
    goal = c + np.array([0.05, 0.03, 0.04])  # nearer the hip: outside the soft zone
    for soft in (0.0, 0.03):  # far from full stretch the soft zone changes nothing
        knee, ankle = solve(a, b, c, goal, soft)
        assert np.linalg.norm(ankle - goal) < 1e-6  # margin: a solver reaching to 1e-12
        u = goal / np.linalg.norm(goal)
        side = (knee - (knee @ u) * u) @ (b - (b @ c) / (c @ c) * c)
        assert side > 1e-3  # margin: the knee on the pose's side of the hip-goal line, by 1e-2 m^2 here
    knee, ankle = solve(a, b, c, c, 0.03)  # asked for where the ankle is: the leg as it is
    assert np.allclose(knee, b, atol=1e-9) and np.allclose(ankle, c, atol=1e-9)


def test_near_full_stretch_the_soft_ik_does_not_snap_the_knee():
    """A nearly straight leg (2 degrees of bend) asked for a goal 3 mm nearer, then 3 mm farther:
    without the soft zone the knee's angle swings by 9.4 degrees; with it by 6.0 (the damping is
    strongest at full stretch, e^-1 of the distance's change at its edge)."""
    a, b, c = leg(2.0)
    d = c / np.linalg.norm(c)
    swing = {}
    for soft in (0.0, 0.03):
        angles = [knee_angle(a, *solve(a, b, c, c + s * d, soft)) for s in (-0.003, 0.003)]
        swing[soft] = abs(angles[0] - angles[1])
    assert swing[0.0] > 6.0 and swing[0.03] < 0.75 * swing[0.0], swing  # margin: 9.4 and 6.0 degrees measured
    # the ankle falls short of the goal by at most the soft zone
    _, ankle = solve(a, b, c, c + 0.003 * d, 0.03)
    assert np.linalg.norm(ankle - (c + 0.003 * d)) <= 0.03 * 0.9 + 1e-9  # margin: within the zone's 27 mm


def test_a_straight_legs_knee_bends_toward_its_pole_not_its_millimetres_of_noise():
    """A straight leg whose knee is 1 mm to one side of its hip-ankle line, then 1 mm to the other
    (a straight leg's bend is noise), asked to bend 40 degrees: without a pole the knee follows the
    noise to either side, 0.29 m apart; with the foot's forward as pole both bend forward, 1.7 cm apart.
    A bent leg (the pose's bend well beyond ``POLE_WEIGHT``) keeps its own side against the pole."""
    a, c = np.zeros(3), np.array([0.0, 0.0, -0.9])
    goal = np.array([0.0, 0.0, -0.9 * np.cos(np.radians(20.0))])
    forward = np.array([0.0, -1.0, 0.0])
    knees = {}
    for pole in (None, forward):
        knees[pole is None] = [a + quat.rotate(two_bone(a, b, c, goal, 0.0, pole)[0], b - a)
                               for b in (np.array([0.001, 0.0, -0.45]), np.array([-0.001, 0.0, -0.45]))]
    assert np.linalg.norm(knees[True][0] - knees[True][1]) > 0.2  # margin: 0.29 m without a pole
    # margin: 1.7 cm with one (1 mm against the pole's 18)
    assert np.linalg.norm(knees[False][0] - knees[False][1]) < 0.03
    assert all(k[1] < -0.1 for k in knees[False])  # forward, toward the toes
    a, b, c = leg(40.0)  # bent by 40 degrees; a pole on the other side does not turn it round
    own = b - (b @ c) / (c @ c) * c  # the pose's bend, across its hip-ankle line
    goal = c + np.array([0.0, 0.0, 0.05])
    knee = a + quat.rotate(two_bone(a, b, c, goal, 0.0, -own / np.linalg.norm(own))[0], b - a)
    u = goal / np.linalg.norm(goal)
    assert (knee - (knee @ u) * u) @ own > 1e-3  # margin: 3.2e-2 m^2 here (as without a pole): the pose's side
