"""The body in a clip, one layer every other part uses: the ``Body`` of a skeleton (``body``: its
hips, legs, head, feet, hands, facing bones, mirror map and floor, found once), the one finder of
roles it and retargeting ask (``roles``), left and right images (``mirror``), feet on the floor and
skating (``contacts``), two-bone IK (``ik``), and what the body does beyond walking: calibration
poses, action centres and flight (``actions``)."""

from .actions import action_centres, detect_calibration_frames, flight
from .body import Body
from .contacts import (ContactSettings, foot_contacts, foot_points, foot_skating, point_contacts, points_skating,
                       skating_of)
from .mirror import mirror_clip
from .roles import Bones, find_roles, mirror_joint_map

__all__ = ["Body", "Bones", "ContactSettings", "action_centres", "detect_calibration_frames", "find_roles", "flight",
           "foot_contacts", "foot_points", "foot_skating", "mirror_clip", "mirror_joint_map", "point_contacts",
           "points_skating", "skating_of"]
