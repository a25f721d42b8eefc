"""Issue 38.1/38.4 in Blender: the Retarget panel's Export (the target's takes to one file) and Batch
Export (every ticked clip or trace retargeted and written as its own file, with progress and Esc,
nothing written for a cancelled take), and the same batch from the command line
(tools/export_game.py); bad input is one line naming the file or folder."""

import os

import pytest
from rigs import make_rig
from test_blender_export import RUN, TAKES, bake_takes

pytestmark = pytest.mark.blender


def imported_takes(ext, bpy, path):
    arm, acts = ext.operators.gamefile.import_file(path)
    names = sorted(acts)
    data = arm.data
    bpy.data.objects.remove(arm)
    bpy.data.armatures.remove(data)
    for a in acts.values():
        bpy.data.actions.remove(a)
    return names


@pytest.fixture
def clips(bpy_clean, ext, mocap):
    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    folder = os.path.join(mocap, "cmu_amc", "16")
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[{"name": t + ".amc"} for t in TAKES]) \
        == {"FINISHED"}
    return bpy


def test_export_writes_the_targets_takes_as_named_animations(bpy_clean, ext, mocap, tmp_path):
    bpy = bpy_clean
    ob = bake_takes(bpy, ext, mocap, "mixamo")
    rt = bpy.context.scene.motionctl.retarget
    rt.export_preset, rt.export_folder = "GODOT", str(tmp_path / "made")
    assert bpy.ops.motionctl.export_game() == {"FINISHED"}
    path = tmp_path / "made" / f"{ob.name}.glb"
    assert sorted(os.listdir(tmp_path / "made")) == [path.name]
    assert imported_takes(ext, bpy, str(path)) == sorted("rt_" + t for t in TAKES + (RUN,))  # the takes and the run


@pytest.mark.parametrize("prefix", ["rt_", ""])
def test_export_names_a_second_characters_takes_as_batch_export_does(clips, ext, tmp_path, prefix):
    """Issue 58.5.1: a second character's actions are "rt_16_15.001" (and "16_15.001" with no prefix:
    the clips' own actions hold "16_15"); Export names its takes as Batch Export does, never ".001"."""
    bpy = clips
    rt = bpy.context.scene.motionctl.retarget
    rt.source, rt.nla, rt.action_prefix, rt.export_preset = "GROUP", True, prefix, "GODOT"
    for ob in (make_rig(bpy, "ue"), make_rig(bpy, "ue")):
        rt.target = ob
        assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    names = sorted(prefix + t for t in TAKES)
    assert prefix + "16_15.001" in bpy.data.actions  # the name was taken: Blender added ".001"
    rt.export_folder = str(tmp_path / "one")
    assert bpy.ops.motionctl.export_game() == {"FINISHED"}
    assert imported_takes(ext, bpy, str(tmp_path / "one" / f"{ob.name}.glb")) == names  # count: take names
    rt.export_folder = str(tmp_path / "batch")
    assert bpy.ops.motionctl.export_batch() == {"FINISHED"}
    assert sorted(os.listdir(tmp_path / "batch")) == [n + ".glb" for n in names]
    # count: take names
    assert [imported_takes(ext, bpy, str(tmp_path / "batch" / f"{n}.glb")) for n in names] == [[n] for n in names]
    rt.nla, rt.target = False, make_rig(bpy, "ue")  # a third, its first take as its action
    assert bpy.ops.motionctl.retarget() == {"FINISHED"}
    assert [n for n, _, _ in ext.operators.gamefile.takes_of(rt.target)] == [prefix + TAKES[0]]  # count: names


def test_batch_writes_a_file_per_take_and_nothing_when_cancelled(clips, ext, tmp_path, monkeypatch):
    bpy = clips
    st = bpy.context.scene.motionctl
    ob = make_rig(bpy, "ue")
    rt = st.retarget
    rt.target, rt.source, rt.export_preset, rt.export_folder = ob, "GROUP", "UNREAL", str(tmp_path)
    n_actions = len(bpy.data.actions)
    original = ext.operators.background.Job._progress

    def cancel_after_first(self, fraction, message):  # Esc while the second take is retargeted
        if fraction > 0:
            self.cancel()
        original(self, fraction, message)

    monkeypatch.setattr(ext.operators.background.Job, "_progress", cancel_after_first)
    assert bpy.ops.motionctl.export_batch() == {"CANCELLED"}
    monkeypatch.undo()
    assert os.listdir(tmp_path) == [] and len(bpy.data.actions) == n_actions
    assert bpy.ops.motionctl.export_batch() == {"FINISHED"}
    assert sorted(os.listdir(tmp_path)) == ["rt_16_15.fbx", "rt_16_58.fbx"]
    for name in ("rt_16_15", "rt_16_58"):
        # count: take names
        assert imported_takes(ext, bpy, str(tmp_path / f"{name}.fbx")) == [name]  # one take each, its name


def test_a_take_that_fails_midway_leaves_only_whole_files(clips, ext, tmp_path, monkeypatch):
    bpy = clips
    st = bpy.context.scene.motionctl
    rt = st.retarget
    rt.target, rt.source, rt.export_preset, rt.export_folder = make_rig(bpy, "rigify"), "GROUP", "UNITY", str(tmp_path)
    calls = []
    G = ext.operators.gamefile
    original = bpy.ops.export_scene.fbx

    class Exporter:  # the exporter dies while writing the second take
        def __call__(self, **kw):
            calls.append(kw["filepath"])
            if len(calls) == 2:
                open(kw["filepath"], "wb").write(b"half a file")
                raise RuntimeError("Error: disk full")
            return original(**kw)

        def get_rna_type(self):
            return original.get_rna_type()

    monkeypatch.setattr(G, "exporter", lambda p: Exporter())
    with pytest.raises(RuntimeError, match="disk full"):
        bpy.ops.motionctl.export_batch()
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["rt_16_15.fbx"]  # whole; the second left nothing, not even its part file


def test_bad_input_is_one_line_naming_it(clips, ext, tmp_path):
    bpy = clips
    st = bpy.context.scene.motionctl
    rt = st.retarget
    rt.target, rt.export_preset = make_rig(bpy, "ue"), "GODOT"
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    rt.export_folder = str(blocker / "sub")
    with pytest.raises(RuntimeError, match=f"{blocker / 'sub'}: cannot make the export folder"):
        bpy.ops.motionctl.export_batch()
    rt.export_folder = str(tmp_path / "out")
    st.traces.add().path = str(tmp_path / "gone.csv")
    rt.source = "TRACES"
    with pytest.raises(RuntimeError, match="gone.csv: no such trace file"):
        bpy.ops.motionctl.export_batch()
    rt.source, rt.root_motion = "GROUP", "OBJECT"
    with pytest.raises(RuntimeError, match="read root motion from a bone"):
        bpy.ops.motionctl.export_batch()
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def test_the_command_line_batch_writes_the_same_files(bpy_clean, ext, mocap, tmp_path, capsys):
    from tools import export_game

    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    make_rig(bpy, "ue")
    blend = str(tmp_path / "hero.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    clips = [os.path.join(mocap, "cmu_amc", "16", f"{t}.amc") for t in TAKES]
    out = tmp_path / "anims"
    args = ["--blend", blend, "--armature", "SK_Mannequin", "--preset", "godot", "--out", str(out)]
    assert export_game.main(args + clips) == 0
    assert sorted(os.listdir(out)) == ["16_15.glb", "16_58.glb"]
    assert imported_takes(ext, bpy, str(out / "16_58.glb")) == ["16_58"]
    from motionctl.play.commands import PlayerSettings, generate_trace, write_trace

    write_trace(generate_trace(PlayerSettings(max_speed=2.0), 3.0, 10.0, seed=5), tmp_path / "run5.csv")
    runs = tmp_path / "runs"
    assert export_game.main(args[:-1] + [str(runs), "--engine", "matching", "--trace", str(tmp_path / "run5.csv")]
                            + clips) == 0  # a controller trained on the clips plays the trace
    assert os.listdir(runs) == ["run5.glb"] and imported_takes(ext, bpy, str(runs / "run5.glb")) == ["run5"]
    capsys.readouterr()
    assert export_game.main(args + [clips[0], str(tmp_path / "missing.bvh")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'missing.bvh'}: no such file"]  # count: strings
    assert export_game.main(args[:-1] + [str(tmp_path / "hero.blend" / "x")] + clips) == 2
    assert "cannot make the output folder" in capsys.readouterr().err


def test_the_command_line_batch_takes_a_blend_that_already_holds_clips(clips, ext, mocap, tmp_path):
    """Issue 58.5.2: an animator's working .blend with clips imported by motionctl (a skeleton group
    of its own): the command line exports the clips it was given, on the one skeleton they share."""
    from tools import export_game

    bpy = clips  # 16_15 and 16_58 imported: a group the .blend keeps
    make_rig(bpy, "ue")
    blend = str(tmp_path / "hero.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    out = tmp_path / "anims"
    args = ["--blend", blend, "--armature", "SK_Mannequin", "--preset", "godot", "--out", str(out)]
    assert export_game.main(args + [os.path.join(mocap, "cmu_amc", "16", "16_15.amc")]) == 0
    assert os.listdir(out) == ["16_15.glb"]  # its clip, not the .blend's others
    assert imported_takes(ext, bpy, str(out / "16_15.glb")) == ["16_15"]
