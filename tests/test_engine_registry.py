"""A new engine is one folder plus one registry line: an engine registered only here
(``tests/tiny_engine.py``) gets the command line's commands, the panels' properties and the train
button, and passes the engine contract, with no other edit."""

import os

import pytest
import tiny_engine
from test_engine_contract import check_contract

from motionctl import cli
from motionctl.engines import ENGINES
from motionctl.io import demo_data


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(ENGINES, "tiny", tiny_engine.ENGINE)
    return tiny_engine.ENGINE


def test_a_registered_engine_passes_the_contract(tiny, tmp_path):
    check_contract(tiny, [clip for clip, _, _ in demo_data.demo_clips(seed=0)], tmp_path)


def test_a_registered_engine_gets_its_command_line(tiny, demo_library, tmp_path, capsys):
    clips = [os.path.join(demo_library, f) for f in sorted(os.listdir(demo_library)) if f.endswith(".bvh")]
    parser = cli.build_parser()
    assert "tiny" in parser._subparsers._group_actions[0].choices
    model = str(tmp_path / "tiny.npz")
    assert cli.main(["tiny", "train", "--clips", *clips, "--out", model, "--piece", "0.3"]) == 0
    assert "clips" in capsys.readouterr().out
    assert cli.main(["tiny", "run", "--model", model, "--trace-seconds", "4", "--out", str(tmp_path / "run.bvh")]) == 0
    assert (tmp_path / "run.bvh").exists()
    assert cli.main(["tiny", "eval", "--model", model]) == 0
    assert '"engine": "tiny"' in capsys.readouterr().out


@pytest.mark.blender
def test_a_registered_engine_gets_its_panel_and_train_button(tiny, ext, demo_library, monkeypatch):
    import bpy

    from blender_scene import use_demo_clips

    # The extension runs its own copy of the package (imported under its own name, as in Blender).
    monkeypatch.setitem(ext.motionctl.engines.ENGINES, "tiny", tiny)
    ext.unregister()
    ext.register()  # the panels and their properties are built from the registry as it is now
    try:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        st = use_demo_clips(bpy, demo_library, {"demo_walk", "demo_walk_turn_left", "demo_run"}, fps=30)
        pg = st.engines.tiny
        assert pg.bl_rna.properties["piece"].description.startswith("Seconds each decision")
        assert "tiny" in {i.identifier for i in st.bl_rna.properties["engine"].enum_items}
        pg.piece = 0.3
        assert bpy.ops.motionctl.train(engine="tiny") == {"FINISHED"}
        entry = next(m for m in st.groups[0].models if m.engine == "tiny")
        assert '"clips": 3' in entry.summary
    finally:
        del ext.motionctl.engines.ENGINES["tiny"]
        ext.unregister()
        ext.register()
