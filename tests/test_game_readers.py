"""The bench's readers that are not Blender (bench/game_readers.py, issue 58.5): a 3-frame take on the
Mixamo rig (an object turned 90 degrees and scaled 0.01 over centimetre, Y-up bone data, names in
the "mixamorig:" namespace) and on the UE-mannequin rig, exported with each preset by Blender's own
exporters and read back by ufbx (FBX) and our .glb parser: every bone's world head within 0.1 mm
and its world rotation within 0.01 degree of what Blender plays, the take starting at frame 0.  And
the glTF samplers Blender never writes (STEP, CUBICSPLINE) against values worked by hand."""

import numpy as np
import pytest

import game_readers as R
from rigs import make_rig

FRAMES = (1, 2, 3)


def _keyed_rig(bpy, ext, kind):
    """Rig ``kind`` with one take: random bone rotations and a root location on frames 1-3, on NLA."""
    ob = make_rig(bpy, kind)
    rng = np.random.default_rng(58)
    act = bpy.data.actions.new("take_a")
    ad = ob.animation_data_create()
    ad.action = act
    for f in FRAMES:
        for pb in ob.pose.bones:
            pb.rotation_mode = "QUATERNION"
            q = np.r_[1.0, rng.normal(0.0, 0.2, 3)]
            pb.rotation_quaternion = q / np.linalg.norm(q)
            pb.keyframe_insert("rotation_quaternion", frame=f)
            if pb.parent is None:  # in the bone's own units (the Mixamo rig's are centimetres)
                pb.location = rng.normal(0.0, 0.3, 3) / ob.scale[0]
                pb.keyframe_insert("location", frame=f)
    track = ad.nla_tracks.new()
    track.name = "take_a"
    strip = track.strips.new("take_a", FRAMES[0], act)
    strip.name = "take_a"
    ad.action = None
    return ob


def _played(bpy, ext, ob):
    takes = ext.operators.gamefile.takes_of(ob)
    import bench_export

    return bench_export.played_world(bpy, ext, ob, takes)


@pytest.mark.blender
@pytest.mark.parametrize("kind, preset", [("mixamo", "UNITY"), ("mixamo", "GODOT"), ("ue", "UNREAL"), ("ue", "GODOT")])
def test_the_readers_see_every_bone_where_blender_plays_it(bpy_clean, ext, tmp_path, kind, preset):
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    p = ext.motionctl.retarget.export.PRESETS[preset]
    if p.format == "FBX":
        pytest.importorskip("ufbx", reason="ufbx (a bench dependency: pip install -e .[bench]) reads the FBX")
    ob = _keyed_rig(bpy, ext, kind)
    before = _played(bpy, ext, ob)
    path = str(tmp_path / f"{kind}{p.ext}")
    ext.operators.gamefile.export_armature(ob, p, path)
    read = R.read_fbx(path, 30) if p.format == "FBX" else R.read_glb(path, 30)
    assert sorted(read["bones"]) == sorted(before["bones"])  # count: names, the namespace kept
    assert {n: (t["first"], t["last"], t["first_key"]) for n, t in read["takes"].items()} == {"take_a": (0, 2, 0)}
    err = R.world_errors(before, read)
    assert err["bones_compared"] == len(ob.data.bones) and err["frames_compared"] == len(FRAMES)
    assert err["frames_missing"] == 0
    assert err["world_error_mm_max"] < 0.1, err  # margin: measured ~0.001 mm (float32 in the files and in bpy)
    assert err["world_angle_deg_max"] < 0.01, err  # margin: measured ~0.0002 degree
    if kind == "mixamo":  # the root moved by tens of centimetres: a unit or axis mistake is far above 0.1 mm
        heads = before["takes"]["take_a"]["world"][:, :, :3, 3]
        assert np.ptp(heads[:, 0], axis=0).max() > 0.1


@pytest.mark.blender
def test_a_take_read_a_frame_late_is_caught(bpy_clean, ext, tmp_path):
    """The fault issue 58.5 names (a .glb's takes starting at 1/30 s): the take one frame late is
    seen as a first frame of 1, a frame missing, and the bones far off."""
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    ob = _keyed_rig(bpy, ext, "ue")
    before = _played(bpy, ext, ob)
    path = str(tmp_path / "ue.glb")
    ext.operators.gamefile.export_armature(ob, ext.motionctl.retarget.export.PRESETS["GODOT"], path)
    read = R.read_glb(path, 30)
    take = read["takes"]["take_a"]
    read["takes"]["take_a"] = dict(take, first=1, last=3)  # the same keys, 1/30 s later
    err = R.world_errors(before, read)
    assert err["first_frame"] == 1 and err["frames_missing"] == 2 and err["frames_compared"] == 2
    assert err["world_error_mm_max"] > 10.0  # margin: random poses a frame apart, centimetres


def test_gltf_samplers_step_linear_and_cubic_spline_by_hand():
    times = np.array([0.0, 1.0, 2.0])
    values = np.array([[0.0], [10.0], [30.0]])
    t = np.array([-1.0, 0.25, 1.0, 1.5, 5.0])
    # count: exact small binary fractions
    assert R.sample(times, values, "STEP", t, False)[:, 0].tolist() == [0.0, 0.0, 10.0, 10.0, 30.0]
    assert np.allclose(R.sample(times, values, "LINEAR", t, False)[:, 0], [0.0, 2.5, 10.0, 20.0, 30.0])
    # CUBICSPLINE: (in-tangent, value, out-tangent) per key; Hermite with tangents times the interval
    cubic = np.array([[0.0], [0.0], [4.0], [0.0], [10.0], [-2.0], [0.0], [30.0], [0.0]])
    u = 0.25  # between keys 0 and 1 (interval 1): h00 v0 + h10 b0 + h01 v1 + h11 a1
    h = (2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u, -2 * u**3 + 3 * u**2, u**3 - u**2)
    want = h[0] * 0.0 + h[1] * 4.0 + h[2] * 10.0 + h[3] * 0.0
    assert np.allclose(R.sample(times, cubic, "CUBICSPLINE", np.array([0.25, 1.0]), False)[:, 0], [want, 10.0])
    q0, q1 = np.array([[0.0, 0.0, 0.0, 1.0]]), np.array([[0.0, 0.0, 1.0, 0.0]])  # identity, 180 degrees about Z
    half = R.sample(np.array([0.0, 1.0]), np.vstack([q0, q1]), "LINEAR", np.array([0.5]), True)
    assert np.allclose(half, [[0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)]])  # slerp: 90 degrees about Z
