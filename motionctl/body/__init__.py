"""The body in a clip, one layer every other part uses: which joints are feet, hands, head and hips
(``roles``: one finder, retargeting's too; ``parts``: what it finds in a skeleton), left and right (``mirror``), feet on the floor and
skating (``contacts``), two-bone IK (``ik``), and what the body does beyond walking: calibration
poses, action centres and flight (``actions``)."""

from .actions import action_centres, detect_calibration_frames, flight
from .contacts import (ContactSettings, floor_height, foot_contacts, foot_points, foot_skating, point_contacts,
                       points_skating, skating_of)
from .mirror import mirror_clip, mirror_joint_map
from .parts import (branch_joint, foot_joints, hand_joints, head_joint, hip_joints, leg_ends, rest_forward, bone_height,
                    skeleton_roles, upper_body)
from .roles import Bones, find_roles

__all__ = ["Bones", "ContactSettings", "action_centres", "branch_joint", "detect_calibration_frames", "find_roles", "flight", "floor_height", "foot_contacts",
           "foot_joints", "foot_points", "foot_skating", "point_contacts", "points_skating", "hand_joints", "head_joint", "hip_joints", "leg_ends", "mirror_clip",
           "mirror_joint_map", "rest_forward", "skating_of", "skeleton_roles", "upper_body", "bone_height"]
