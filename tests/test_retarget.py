"""Retargeting's core on real skeletons: body roles from every naming convention and from shape,
exact reproduction on a scaled copy, rest poses that differ, feet on the floor, foot planting,
the three root-motion options, presets and clear errors (the Blender side is in
test_blender_retarget.py)."""

import json
import os

import numpy as np
import pytest

from motionctl import quat
from motionctl.io.bvh import read_bvh
from motionctl.errors import MotionctlError, MotionFileError
from motionctl.io.library import ImportSettings, load_clip
from motionctl.retarget import (LANDMARKS, RetargetSettings, Rig, auto_map, find_roles, load_preset, name_role, quality,
                                retarget, save_preset, with_root_bone)

LIMBS = [r for r in LANDMARKS["legs"] + LANDMARKS["arms"]]


@pytest.fixture(scope="module")
def walk(mocap):
    """CMU subject 16 walking (ASF/AMC), 120 fps cut to 30 for speed."""
    from motionctl.clip import resample

    clip = load_clip(os.path.join(mocap, "cmu_amc", "16", "16_15.amc"), ImportSettings())
    clip = clip[0] if isinstance(clip, tuple) else clip
    return resample(clip, 30.0)


@pytest.fixture(scope="module")
def mbnames(mocap):
    """A CMU take with MotionBuilder names (Hips, LeftUpLeg, LeftArm ...)."""
    return read_bvh(os.path.join(mocap, "cmu31", "cmu_02_01_walk_mbnames.bvh"))


def renamed(rig: Rig, names: dict, name: str) -> Rig:
    return Rig([names.get(n, n) for n in rig.names], rig.parents, rig.heads, rig.rest, name=name)


MB_TO = {  # MotionBuilder (CMU BVH) names -> other conventions, same bones
    "mixamo": {n: "mixamorig:" + n for n in ("Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", "RightUpLeg",
                                              "RightLeg", "RightFoot", "RightToeBase", "Spine", "Spine1", "Neck",
                                              "Head", "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
                                              "RightShoulder", "RightArm", "RightForeArm", "RightHand")},
    "ue": {"Hips": "pelvis", "LeftUpLeg": "thigh_l", "LeftLeg": "calf_l", "LeftFoot": "foot_l", "LeftToeBase": "ball_l",
           "RightUpLeg": "thigh_r", "RightLeg": "calf_r", "RightFoot": "foot_r", "RightToeBase": "ball_r",
           "Spine": "spine_01", "Spine1": "spine_02", "Neck": "neck_01", "Head": "head", "LeftShoulder": "clavicle_l",
           "LeftArm": "upperarm_l", "LeftForeArm": "lowerarm_l", "LeftHand": "hand_l", "RightShoulder": "clavicle_r",
           "RightArm": "upperarm_r", "RightForeArm": "lowerarm_r", "RightHand": "hand_r"},
    "rigify": {"LeftUpLeg": "DEF-thigh.L", "LeftLeg": "DEF-shin.L", "LeftFoot": "DEF-foot.L", "LeftToeBase": "DEF-toe.L",
               "RightUpLeg": "thigh_fk.R", "RightLeg": "shin_fk.R", "RightFoot": "foot_fk.R", "RightToeBase": "ORG-toe.R",
               "LeftShoulder": "shoulder.L", "LeftArm": "upper_arm_fk.L", "LeftForeArm": "forearm_fk.L",
               "LeftHand": "hand_fk.L", "RightShoulder": "DEF-shoulder.R", "RightArm": "DEF-upper_arm.R",
               "RightForeArm": "DEF-forearm.R", "RightHand": "DEF-hand.R", "Hips": "torso", "Head": "spine.006"},
}


def test_roles_from_cmu_asf_and_motionbuilder_names(walk, mbnames):
    roles = {r: walk.skeleton.names[b] for r, b in find_roles(Rig.from_skeleton(walk.skeleton)).items()}
    assert {roles[r] for r in ("thigh.L", "shin.L", "foot.L", "toe.L", "upper_arm.R", "forearm.R", "hand.R")} == \
        {"lfemur", "ltibia", "lfoot", "ltoes", "rhumerus", "rradius", "rwrist"}
    assert (roles["hips"], roles["chest"], roles["head"], roles["shoulder.L"]) == ("root", "thorax", "head", "lclavicle")
    mb = {r: mbnames.skeleton.names[b] for r, b in find_roles(Rig.from_skeleton(mbnames.skeleton)).items()}
    assert (mb["thigh.L"], mb["shin.L"], mb["upper_arm.L"], mb["shoulder.L"], mb["hips"]) == \
        ("LeftUpLeg", "LeftLeg", "LeftArm", "LeftShoulder", "Hips")
    assert name_role("LeftShoulder")[0] == "shoulder?.L" and name_role("LHipJoint")[0] is None


@pytest.mark.parametrize("convention", sorted(MB_TO))
def test_every_convention_finds_the_same_bones(mbnames, convention):
    """Mixamo, UE Mannequin and a generated Rigify rig's DEF-/ORG-/FK names on the same bones
    give the same roles as the MotionBuilder names."""
    base = Rig.from_skeleton(mbnames.skeleton)
    want = find_roles(base)
    got = find_roles(renamed(base, MB_TO[convention], convention))
    for role in LIMBS + ["hips"]:
        assert got[role] == want[role], role  # count: bone names


def test_joint_named_and_character_creator_skeletons(mocap):
    joints = read_bvh(os.path.join(mocap, "cmu31", "cmu_01_01_forward_jumps_turn_around.bvh")).skeleton
    r = {k: joints.names[b] for k, b in find_roles(Rig.from_skeleton(joints)).items()}
    # LeftHip/LeftShoulder name joints: the thigh and (with a collar) the upper arm
    assert (r["thigh.L"], r["shin.L"], r["shoulder.L"], r["upper_arm.L"], r["hand.L"]) == \
        ("LeftHip", "LeftKnee", "LeftCollar", "LeftShoulder", "LeftWrist")
    cc = read_bvh(os.path.join(mocap, "cc_base", "cc_cmu_05_01_walk.bvh")).skeleton
    r = {k: cc.names[b] for k, b in find_roles(Rig.from_skeleton(cc)).items()}
    assert (r["thigh.R"], r["shin.R"], r["foot.R"], r["toe.R"], r["upper_arm.L"], r["head"], r["hips"]) == \
        ("CC_Base_R_Thigh", "CC_Base_R_Calf", "CC_Base_R_Foot", "CC_Base_R_ToeBase", "CC_Base_L_Upperarm",
         "CC_Base_Head", "CC_Base_Hip")
    assert r["neck"] == "CC_Base_NeckTwist01"  # by topology: the spine bone above the chest


def test_roles_by_shape_when_names_say_nothing(mbnames):
    base = Rig.from_skeleton(mbnames.skeleton)
    want = find_roles(base)
    anonymous = renamed(base, {n: f"Bone.{i:03d}" for i, n in enumerate(base.names)}, "anonymous")
    got = find_roles(anonymous)
    for role in ("thigh.L", "shin.L", "foot.L", "thigh.R", "shin.R", "foot.R", "upper_arm.L", "forearm.L",
                 "upper_arm.R", "forearm.R", "hips"):
        assert got[role] == want[role], role  # count: bone names


def scaled_copy(clip, factor, seed=0, object_turn=0.0):
    """The clip's skeleton at another size, with arbitrary bone rolls and the object turned."""
    sk = clip.skeleton
    rng = np.random.default_rng(seed)
    turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), object_turn)
    heads = quat.rotate(turn, factor * sk.rest_positions())
    return Rig(list(sk.names), sk.parents, heads, quat.normalize(rng.normal(size=(sk.n_joints, 4))), name="copy",
               object_rest=turn)


def test_a_scaled_copy_reproduces_the_scaled_motion_exactly(walk):
    src = Rig.from_skeleton(walk.skeleton)
    tgt = scaled_copy(walk, 1.25)
    mapping = auto_map(src, tgt)
    assert len(mapping) == walk.skeleton.n_joints  # roles, and the bones of the same names
    pos, _ = walk.world()
    kept = retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="OBJECT", floor=False, start_here=False))
    assert np.abs(kept.world - 1.25 * pos).max() < 1e-9  # where the capture put it
    res = retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="OBJECT", floor=False))
    assert res.scale == pytest.approx(1.25)
    roles = find_roles(src)
    start = 0.5 * (pos[0, roles["thigh.L"]] + pos[0, roles["thigh.R"]]) * [1, 1, 0]
    assert np.linalg.norm(start) > 0.1  # the capture does not start at its origin
    assert np.abs(res.world - 1.25 * (pos - start)).max() < 1e-9  # the take starts where the character stands
    q = quality(res, walk, src, tgt)
    assert q["legs_error_p95"] < 1e-9 and q["arms_error_p95"] < 1e-9
    # object root motion: the world is the object's motion applied to the bones' (in-place) heads
    assert res.object_loc.shape == (walk.n_frames, 3) and np.allclose(res.object_loc[:, 2], 0)


def a_pose(clip, degrees=40.0):
    """The clip's skeleton with both arms rotated down about the body's forward axis at the shoulders."""
    sk = clip.skeleton
    offsets = sk.offsets.copy()
    for side, sign in (("l", -1.0), ("r", 1.0)):
        arm = sk.index(f"{side}humerus")
        below = [j for j in range(sk.n_joints) if j != arm and arm in _ancestors(sk, j)]
        r = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), np.radians(degrees) * sign * -1.0)
        offsets[below] = quat.rotate(r, offsets[below])
    return sk.with_offsets(offsets)


def _ancestors(sk, j):
    out = []
    while sk.parents[j] >= 0:
        j = int(sk.parents[j])
        out.append(j)
    return out


def test_an_a_pose_rest_gives_the_same_motion_as_a_t_pose(walk):
    src = Rig.from_skeleton(walk.skeleton)
    down = a_pose(walk)
    tgt = Rig.from_skeleton(down, name="a-pose")
    hand = walk.skeleton.index("lwrist")
    assert np.linalg.norm(tgt.heads[hand] - src.heads[hand]) > 0.1  # the rest poses do differ
    res = retarget(walk, src, tgt, auto_map(src, tgt), RetargetSettings(root_motion="OBJECT", floor=False))
    pos, _ = walk.world()
    assert np.abs(res.world - (pos - res.start)).max() < 1e-6


def test_feet_stay_on_the_floor_and_planting_follows_the_source(walk):
    """A rig with longer shins and shorter thighs (same leg length): the knees' geometry changes, so
    without correction the planted feet float or sink and slide."""
    sk = walk.skeleton
    offsets = sk.offsets.copy()
    for side in "lr":
        offsets[sk.index(f"{side}tibia")] *= 0.8  # shorter thigh (the offset of the knee from the hip)
        offsets[sk.index(f"{side}foot")] *= 1.25  # longer shin
    src = Rig.from_skeleton(sk)
    tgt = Rig.from_skeleton(sk.with_offsets(offsets), name="long shins")
    mapping = auto_map(src, tgt)
    raw = quality(retarget(walk, src, tgt, mapping, RetargetSettings(floor=False, root_motion="OBJECT")), walk, src, tgt)
    floor = quality(retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="OBJECT")), walk, src, tgt)
    planted = retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="OBJECT", foot_plant=True))
    plant = quality(planted, walk, src, tgt)
    # measured on 16_15, the planted feet's lowest point above the floor: 17.5 mm median without the
    # floor pass, -0.6 mm with it (22 mm p95), 0.0 with planting (15.5 mm p95: contact edges, rolling feet)
    assert raw["sole_median"] > 0.01 and abs(floor["sole_median"]) < 0.002
    assert abs(plant["sole_median"]) < 0.001 and plant["sole_p95"] < 0.02 < raw["sole_p95"]
    # during a contact (away from its blended ends) the planted ankle moves as the source's, scaled
    pos, _ = walk.world()
    c = planted.contacts[:, 0]
    inner = c & np.r_[False, False, False, c[:-3]] & np.r_[c[3:], False, False, False]
    ank_t = planted.world[:, tgt.names.index("lfoot"), :2]
    ank_s = pos[:, walk.skeleton.index("lfoot"), :2]
    step_t, step_s = np.diff(ank_t, axis=0)[inner[1:] & inner[:-1]], np.diff(ank_s, axis=0)[inner[1:] & inner[:-1]]
    assert len(step_t) > 10 and np.abs(step_t - planted.scale * step_s).max() < 3e-3  # contacts run to the toe tip


def test_root_motion_on_a_bone_on_the_object_or_in_place(walk):
    src = Rig.from_skeleton(walk.skeleton)
    tgt, _ = with_root_bone(scaled_copy(walk, 1.1, object_turn=0.5), find_roles(scaled_copy(walk, 1.1)))
    mapping = auto_map(src, tgt)
    root = tgt.names[-1]
    bone = retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="BONE", floor=False))
    hips = tgt.names.index("root")
    ground = bone.world[:, hips, :2]
    # the root bone carries the hips' ground point: its location moves as far as the hips do
    travel = np.linalg.norm(ground[-1] - ground[0])
    assert travel > 2.0 and set(bone.locations) == {root, "root"}
    assert np.linalg.norm(bone.locations[root][-1] - bone.locations[root][0]) * tgt.scale == pytest.approx(travel, rel=1e-6)
    inplace = retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="IN_PLACE", floor=False))
    assert np.abs(inplace.world[:, hips, :2] - tgt.heads[hips, :2]).max() < 0.15  # sways, stays
    obj = retarget(walk, src, tgt, mapping, RetargetSettings(root_motion="OBJECT", floor=False))
    assert np.linalg.norm(obj.object_loc[-1] - obj.object_loc[0]) == pytest.approx(travel, rel=1e-6)
    assert np.allclose(obj.world[:, :-1], bone.world[:, :-1])  # the same body, the root bone aside


def test_the_motion_starts_where_the_character_stands(walk):
    src = Rig.from_skeleton(walk.skeleton)
    tgt = scaled_copy(walk, 1.0)
    placed = Rig(tgt.names, tgt.parents, tgt.heads + [3.0, -2.0, 0.0], tgt.rest, name="placed", origin=[3.0, -2.0, 0.0])
    a = retarget(walk, src, tgt, auto_map(src, tgt), RetargetSettings(root_motion="OBJECT"))
    b = retarget(walk, src, placed, auto_map(src, placed), RetargetSettings(root_motion="OBJECT"))
    assert np.allclose(b.world, a.world + [3.0, -2.0, 0.0]) and np.allclose(b.object_loc, a.object_loc + [3.0, -2.0, 0.0])
    assert np.allclose(b.locations["root"], a.locations["root"])  # the bones' channels are the same


def test_presets_round_trip_and_bad_input_is_named(walk, tmp_path):
    src = Rig.from_skeleton(walk.skeleton)
    tgt = scaled_copy(walk, 0.9)
    mapping = auto_map(src, tgt)
    path = str(tmp_path / "map.json")
    save_preset(path, mapping, src, tgt)
    assert load_preset(path) == mapping  # count: bone names
    with pytest.raises(MotionFileError, match="no such bone-map preset"):
        load_preset(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(MotionFileError, match=r"bad\.json:1: invalid JSON"):
        load_preset(str(tmp_path / "bad.json"))
    (tmp_path / "other.json").write_text(json.dumps({"format": "something", "map": {}}))
    with pytest.raises(MotionFileError, match="other.json"):
        load_preset(str(tmp_path / "other.json"))
    with pytest.raises(MotionctlError, match="has no bone 'nope'"):
        retarget(walk, src, tgt, {**mapping, "nope": "lfemur"})
    with pytest.raises(MotionctlError, match="'lfemur' is not mapped"):
        retarget(walk, src, tgt, {k: v for k, v in mapping.items() if k != "lfemur"})
    with pytest.raises(MotionctlError, match="'root_motion' must be one of"):
        RetargetSettings(root_motion="HIPS")
    legless = Rig(["a", "b", "c"], [-1, 0, 1], [[0, 0, 1], [0, 0, 1.5], [0, 0, 2]], quat.identity((3,)), name="stick")
    with pytest.raises(MotionctlError, match="stick.*two legs"):
        find_roles(legless)


@pytest.mark.parametrize("naming", ["Rigify", "Mixamo", "Unreal", "Character Creator"])
def test_the_root_bone_faces_the_way_the_body_faces_at_rest_and_in_the_take(walk, naming):
    """The root bone Retarget adds (Root Motion on a root bone) lies level along the body's facing
    at rest, so a game engine holding the root at its rest pose keeps the character facing its
    way; in the take it turns with the body (the engines' smoothed root frame).  It was laid along
    the armature's +Y: 180 degrees from a body facing Blender's front (-Y)."""
    from conventions import renamed

    from motionctl.body.roles import rest_facing
    from motionctl.rootframe import gaussian_smooth

    src = Rig.from_skeleton(walk.skeleton)
    body = Rig.from_skeleton(renamed(walk, naming).skeleton, name=naming)
    tgt = Rig(body.names, body.parents, quat.rotate(quat.about_axis(2, 0.7), body.heads),
              quat.mul(quat.about_axis(2, 0.7), body.rest), object_rest=quat.about_axis(2, 0.7), name=naming)
    roles = find_roles(tgt)
    facing = rest_facing(tgt, roles)
    with_root, tail = with_root_bone(tgt, roles)
    ahead = quat.rotate(with_root.rest[-1], np.array([0.0, 1.0, 0.0]))  # a bone's +Y is its direction
    assert np.degrees(np.arccos(np.clip(ahead @ facing, -1, 1))) < 1.0 and abs(ahead[2]) < 1e-9
    assert np.allclose(quat.rotate(tgt.object_rest, tail) / np.linalg.norm(tail), ahead)
    res = retarget(walk, src, tgt, auto_map(src, tgt), RetargetSettings(root_motion="BONE", floor=False))
    name, _, _ = res.added_root
    root_rest = with_root.rest[-1]
    basis = res.rotation[:, res.bones.index(name)]
    world_root = quat.mul(root_rest, basis)  # no parent: the world rotation is rest x basis
    root_dir = quat.rotate(world_root, np.broadcast_to([0.0, 1.0, 0.0], (walk.n_frames, 3)))
    left = res.world[:, roles["thigh.L"]] - res.world[:, roles["thigh.R"]]
    body_dir = np.cross(left, [0.0, 0.0, 1.0])
    yaw_body = gaussian_smooth(np.unwrap(np.arctan2(-body_dir[:, 0], body_dir[:, 1])), 0.2 * walk.fps)
    yaw_root = np.arctan2(-root_dir[:, 0], root_dir[:, 1])
    off = np.degrees(np.abs(np.angle(np.exp(1j * (yaw_root - yaw_body)))))
    assert np.all(np.abs(root_dir[:, 2]) < 1e-6)
    assert off.max() < 1.0, off.max()  # margin: the body's facing here is the thighs' axis, the root's the hips' turn


@pytest.mark.mocap
def test_a_source_whose_joints_rest_otherwise_retargets_the_same(walk, mocap):
    """Issue 58: a file whose joints rest in other frames (at random, or every bone along its own X as
    a Maya rig's joint orients write it) has a rest pose that is no pose of the body, and a retarget
    that compared it with the target's turned bones about themselves by up to 171 degrees (the
    upper arm along X; 163 at random; measured).  Such a source is compared in the capture's mean
    pose instead (``Rig.from_clips``): both variants give the same take, bones and turns, while a
    standing rest (CMU's T-pose) is still the one compared."""
    from conventions import along_x_turns, random_turns, rerested

    from motionctl.retarget.mapping import standing_rest

    tgt = Rig.from_skeleton(a_pose(walk), name="a-pose")
    assert standing_rest(walk.skeleton)  # CMU's T-pose: the rest is compared, as before
    takes = []
    for clip in (rerested(walk, random_turns(walk.skeleton.n_joints, 7)), rerested(walk, along_x_turns(walk))):
        assert not standing_rest(clip.skeleton)
        src = Rig.from_clips([clip])
        takes.append(retarget(clip, src, tgt, auto_map(src, tgt), RetargetSettings()))
    a, b = takes
    assert np.abs(a.world - b.world).max() < 1e-6  # measured 0.000 mm; the rest compared: 21.8 mm apart
    common = [n for n in a.bones if n in b.bones]  # keyed where the basis leaves the rest by 1e-7
    turned = np.degrees(quat.angle(quat.mul(quat.conj(a.rotation[:, [a.bones.index(n) for n in common]]),
                                            b.rotation[:, [b.bones.index(n) for n in common]])))
    assert turned.max() < 1e-3  # measured 0.000 degrees; the rest compared: up to 171 degrees apart
    # and the take is the capture's body: the thighs' midpoint follows the source's, scaled by 1
    pos, _ = walk.world()
    mid = 0.5 * (pos[:, walk.skeleton.index("lfemur")] + pos[:, walk.skeleton.index("rfemur")])
    got = 0.5 * (a.world[:, tgt.names.index("lfemur")] + a.world[:, tgt.names.index("rfemur")])
    assert np.abs((got - got[0])[:, :2] - (mid - mid[0])[:, :2]).max() < 0.02  # margin: the floor's lift aside


@pytest.mark.mocap
def test_character_creator_rests_its_legs_up_so_its_mean_pose_is_compared(mocap):
    """Character Creator's BVH rests with its knees above its hips (joint orients in the rest): not a
    standing body, so its retarget compares the capture's mean pose."""
    from motionctl.retarget.mapping import standing_rest

    path = os.path.join(mocap, "cc_base", sorted(f for f in os.listdir(os.path.join(mocap, "cc_base"))
                                                 if f.endswith(".bvh"))[0])
    clip = load_clip(path, ImportSettings())[0]
    assert not standing_rest(clip.skeleton)
    src = Rig.from_clips([clip])
    roles = find_roles(src)
    # margin: upright, the head 0.6 m above the hips and the hips 0.9 m above the foot
    assert src.heads[roles["head"], 2] > src.heads[roles["hips"], 2] + 0.3 > src.heads[roles["foot.L"], 2] + 0.6
