"""Retargeting: any motionctl ``Clip`` (an imported take, a controller run, a best path) onto another
rig, with the rest of the pipeline in plain numpy (the Blender side reads the rig and writes the
action).  Modules: ``mapping`` (the rig, its bone map and presets, rest alignment), ``solve`` (the
retarget), ``contacts`` (feet on the target's own floor), ``quality`` (the figures of how good it is).

- Roles: every rig gets the same body roles as every skeleton does (``body.roles.find_roles``:
  from bone names, else from shape).
- Rest poses: every mapped bone's rest is aligned to its source joint's by its directions to its
  mapped children (Kabsch, with the body's forward and up as weak extra pairs so a single child
  keeps its twist), so a T-pose, an A-pose or arms-down rest all give the same motion.
- Proportions: the root motion is scaled by the ratio of leg lengths (hip to knee to ankle), the
  hips placed so the thighs' midpoint follows the scaled source's, then (``floor``) the whole body is
  shifted vertically, frame by frame, so each planted foot's lowest point (the rig's own heel, ball
  or toe tip) stands on the floor.  ``foot_plant`` then turns hips and knees (``body.ik``) so a
  planted foot moves only as the source's did: skating that proportions would add is removed.
- Root motion: on a root bone (the rig's, or one added: ``Retargeted.added_root``; ground-projected
  hips with the smoothed heading, the engine's root frame), on the armature object, or in place.

Rotations are handled as world-space deltas from each rig's rest pose, so objects rotated or scaled
(uniformly, as FBX imports are) and bones with any roll work alike: a pose bone's basis is
``r⁻¹ (Q_parent⁻¹ Q) r`` with ``r`` its rest rotation in world and ``Q`` its world delta.
"""

from ..body.roles import LEG_ROLES, ROLES, SIDES, find_roles, name_role
from .contacts import leg_length, planted_ankle_height
from .mapping import (PRESET_FORMAT, Rig, auto_map, check_mapping, load_preset, rest_alignment, save_preset,
                      with_root_bone)
from .quality import LANDMARKS, quality
from .solve import RetargetSettings, Retargeted, retarget

__all__ = ["LANDMARKS", "LEG_ROLES", "PRESET_FORMAT", "ROLES", "SIDES", "RetargetSettings", "Retargeted", "Rig",
           "auto_map", "check_mapping", "find_roles", "leg_length", "load_preset", "name_role",
           "planted_ankle_height", "quality", "rest_alignment", "retarget", "save_preset", "with_root_bone"]
