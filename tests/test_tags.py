"""One tag vocabulary: tags from sidecar descriptions, file names (stems, glued words), synonyms."""

import json
import os

import numpy as np
import pytest

from motionctl import tags
from motionctl.errors import MotionFileError
from motionctl.tags import apply_tags, read_sidecar


@pytest.mark.parametrize("text, expected", [
    ("forward_jumps_turn_around", {"jump", "turn"}),  # a stem, not a whole word
    ("run/jog, sudden stop", {"run", "stop"}),  # CMU's description of 16_08
    ("Run Side Step Left", {"run", "sidestep", "left"}),  # a two-word phrase
    ("walk stealthily", {"walk", "sneak"}),  # a synonym
    ("Mawashigeri (roundhouse kick), martial-arts walk", {"kick", "walk"}),
    ("navigate - walk forward, backward, sideways", {"walk", "backward", "sidestep"}),
    ("WalkTurnLeft", {"walk", "turn", "left"}),  # camelCase
    ("walkrun", {"walk", "run"}), ("runstop", {"run", "stop"}), ("forwardjump", {"jump"}),  # glued words
    ("cmu_131_03_start_hop_stop", {"start", "jump", "stop"}),
    ("controller", set()), ("brunch", set()), ("16_01", set()),  # no false matches inside words
])
def test_tags_from_text(text, expected):
    assert tags.tags_from_text(text) == expected  # count: tag sets


def test_canonical_synonyms_and_groups():
    assert tags.canonical_set(["Hop", "jog", "pickup", "strike"]) == {"jump", "run", "pick", "punch"}
    assert tags.has({"leap"}, tags.JUMPS) and not tags.has({"walk"}, tags.ACTIONS)
    assert tags.canonical("unknownword") == "unknownword"  # the user's own tags are kept


def _sidecar(tmp_path, name, data):
    path = tmp_path / f"{name}.bvh"
    path.write_text("")
    (tmp_path / f"{name}.json").write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


class _Clip:  # apply_tags only needs name, tags, annotations and frame_offset
    def __init__(self, name):
        self.name, self.tags, self.annotations, self.frame_offset = name, set(), {}, 0


def test_sidecar_description_gives_tags_when_it_has_none(tmp_path):
    path = _sidecar(tmp_path, "16_08", {"description": "run/jog, sudden stop", "source": "CMU index"})
    assert apply_tags(_Clip("16_08"), path).tags == {"run", "stop"}


def test_sidecar_tags_win_and_are_canonical(tmp_path):
    path = _sidecar(tmp_path, "clip_walk", {"tags": ["hop"], "description": "walk", "action_centres": [5]})
    clip = apply_tags(_Clip("clip_walk"), path)
    assert clip.tags == {"jump"} and np.array_equal(clip.annotations["action_centres"], [5])


@pytest.mark.parametrize("data, message", [
    ("[1, 2", "invalid JSON"), ([1], "expected an object"), ({"tags": "walk"}, "list of words"),
    ({"description": 5}, "must be text"), ({"action_centres": ["a"]}, "frame numbers"),
])
def test_bad_sidecar_names_the_sidecar(tmp_path, data, message):
    path = _sidecar(tmp_path, "x", data)
    with pytest.raises(MotionFileError, match=message) as err:
        read_sidecar(path)
    assert err.value.path.endswith("x.json")


def test_real_cmu_sidecars_tag_every_locomotion_subject(mocap):
    from motionctl.io.library import import_library

    files = [os.path.join(mocap, "cmu_amc", s, f"{s}_{t}.amc") for s, t in
             (("16", "08"), ("16", "17"), ("127", "29"), ("10", "01"), ("17", "03"), ("49", "04"))]
    got = {c.name: c.tags for c in import_library(files).groups[0].database.clips}
    assert got["16_08"] == {"run", "stop"} and got["16_17"] >= {"walk", "turn", "left"}
    assert got["127_29"] == {"run", "duck"} and got["10_01"] == {"kick"} and got["17_03"] == {"walk", "sneak"}
    assert got["49_04"] == {"run", "jump"}
