"""One tag vocabulary for every engine: what a clip shows, from its sidecar, its description or its
file name.

Tags are plain lower-case words on a clip (``Clip.tags``).  Every engine reads them through this
module, so "hop", "jumps" and "jump" mean the same motion everywhere: ``canonical`` maps any tag
or synonym to the vocabulary word, and the sets below say which words are actions, jumps and so
on.  ``tags_from_text`` reads tags from free text such as a CMU trial description ("run/jog,
sudden stop") or a file name ("forward_jumps_turn_around", "WalkTurnLeft"), matching whole words,
word stems ("jumps", "running", "kicked") and vocabulary words inside longer tokens ("walkrun").
Sidecars (``clip.json`` beside a motion file) carry tags, a description or action centres.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .errors import MotionFileError
from .store import read_json

# The vocabulary: locomotion, actions and modifiers.
LOCOMOTION = ("walk", "run", "sneak", "sidestep", "backward", "turn", "veer", "stop", "start", "idle", "crouch")
ACTION_WORDS = ("jump", "kick", "punch", "pick", "reach", "duck", "dive", "roll", "stepover", "dance")
MODIFIERS = ("left", "right", "slow", "fast")
VOCABULARY = frozenset(LOCOMOTION + ACTION_WORDS + MODIFIERS)

# Words people (and the CMU index) use for the same motions.
SYNONYMS = {
    "jog": "run", "jogging": "run", "sprint": "run", "dash": "run",
    "hop": "jump", "leap": "jump",
    "pickup": "pick", "scoop": "pick",
    "grasp": "reach", "grab": "reach",
    "strike": "punch", "jab": "punch", "boxing": "punch",
    "geri": "kick", "maegeri": "kick", "mawashigeri": "kick", "yokogeri": "kick", "roundhouse": "kick",
    "squat": "crouch", "kneel": "crouch", "bend": "crouch",
    "stealth": "sneak", "stealthy": "sneak", "stealthily": "sneak", "tiptoe": "sneak", "creep": "sneak",
    "sideways": "sidestep", "strafe": "sidestep",
    "backwards": "backward",
    "brisk": "fast",
    "stand": "idle", "standing": "idle",
    "halt": "stop",
    "curve": "veer",
}
# Two-word phrases, read before single words ("pick up", "side step").
PHRASES = {("pick", "up"): "pick", ("side", "step"): "sidestep", ("step", "over"): "stepover",
           ("turn", "around"): "turn", ("jumping", "jacks"): "jump"}

# What the engines ask of tags.
HAND_ACTIONS = frozenset({"pick", "reach", "punch"})  # a hand goes to a target
FOOT_ACTIONS = frozenset({"kick"})
JUMPS = frozenset({"jump"})  # airborne: may cross a chasm
STEP_OVER = frozenset({"jump", "stepover"})  # may cross a low obstacle
ACTIONS = HAND_ACTIONS | FOOT_ACTIONS | {"duck", "jump"}  # have an action centre (paper 004)

_SUFFIXES = ("ings", "ing", "ers", "er", "ed", "es", "s", "ly")


def canonical(tag: str) -> str:
    """The vocabulary word for a tag or synonym (lower-cased; unknown tags are kept as they are)."""
    t = tag.strip().lower()
    return SYNONYMS.get(t, t)


def canonical_set(tags) -> set:
    """Canonical form of every tag in ``tags``."""
    return {canonical(t) for t in tags if t and t.strip()}


def has(tags, group) -> bool:
    """True when any of ``tags`` (any spelling) falls in ``group`` (a vocabulary word or a set)."""
    wanted = {group} if isinstance(group, str) else set(group)
    return bool(canonical_set(tags) & wanted)


def _known(word: str) -> str | None:
    if word in VOCABULARY:
        return word
    return SYNONYMS.get(word)


def _stem(word: str) -> str | None:
    """The vocabulary word a token is an inflection of ("jumps", "running", "kicked"), or None."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            for cand in (base, base + "e", base[:-1] if len(base) > 3 and base[-1] == base[-2] else base):
                found = _known(cand)
                if found:
                    return found
    return None


# Words that carry no tag but may be glued to tag words in a name ("forwardjump", "runover").
NEUTRAL = ("forwards", "forward", "underneath", "around", "under", "over", "into", "onto", "from", "then", "with",
           "place", "straight", "normal", "twice", "down", "and", "the", "up", "to", "in", "on", "of", "a")
_LONG = sorted((w for w in VOCABULARY | set(SYNONYMS) if len(w) >= 4), key=len, reverse=True)
_SHORT = sorted(w for w in VOCABULARY | set(SYNONYMS) if len(w) == 3)


def _inside(token: str) -> set:
    """Vocabulary words glued into a longer token ("walkrun", "runstop", "forwardjump"): accepted
    only when tag words and neutral words make up the whole token (give or take two letters), so
    "controller" does not read as "roll"."""
    found, rest = set(), token
    for w in _LONG:
        if w in rest:
            found.add(_known(w))
            rest = rest.replace(w, " ")
    parts = []
    for p in rest.split():
        for w in _SHORT:  # three-letter words only at either end of a part
            if p.startswith(w):
                found.add(_known(w))
                p = p[len(w):]
            if p.endswith(w):
                found.add(_known(w))
                p = p[: -len(w)]
        parts.append(p)
    rest = " ".join(parts)
    for w in NEUTRAL:
        rest = rest.replace(w, " ") if len(w) > 2 else " ".join(p for p in rest.split() if p != w)
    return found if len(rest.replace(" ", "")) <= 2 else set()


def words(text: str) -> list:
    """Lower-case words of free text or a file name: split at non-letters and at camelCase."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.sub(r"[^A-Za-z]+", " ", text).lower().split()


def tags_from_text(text: str) -> set:
    """Canonical tags read from a description or a file name (see the module docstring)."""
    tokens = words(text)
    out, used = set(), set()
    for i in range(len(tokens) - 1):
        tag = PHRASES.get((tokens[i], tokens[i + 1]))
        if tag:
            out.add(tag)
            used.update((i, i + 1))
    for i, tok in enumerate(tokens):
        if i in used or len(tok) < 3:
            continue
        tag = _known(tok) or _stem(tok)
        if tag:
            out.add(tag)
        elif len(tok) >= 6:
            out |= _inside(tok)
    return out


# ----------------------------------------------------------------------------- sidecars

def tags_from_name(name: str) -> set:
    """Tags read from a file or clip name."""
    return tags_from_text(name)


def sidecar_path(path: str) -> str:
    """``clip.json`` beside ``clip.bvh`` (or ``.amc``)."""
    return os.path.splitext(path)[0] + ".json"


def read_sidecar(path: str) -> dict:
    """Tags, description and annotations from ``<file>.json`` beside a motion file ({} if absent).

    Format: {"tags": ["walk", ...], "description": "walk, veer left", "action_centres": [frame, ...]};
    every key is optional.
    """
    side = sidecar_path(path)
    if not os.path.exists(side):  # a folder or pipe of that name is refused by read_json, not ignored
        return {}
    data = read_json(side)
    if not isinstance(data, dict):
        raise MotionFileError(side, 'expected an object like {"tags": ["walk"]} or {"description": "walk"}')
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise MotionFileError(side, '"tags" must be a list of words, like ["walk", "turn"]')
    if not isinstance(data.get("description", ""), str):
        raise MotionFileError(side, '"description" must be text')
    centres = data.get("action_centres", [])
    if not isinstance(centres, list) or not all(isinstance(f, int) and not isinstance(f, bool) for f in centres):
        raise MotionFileError(side, '"action_centres" must be a list of frame numbers')
    return data


def apply_tags(clip, path: str):
    """Tags from the sidecar's "tags"; else from its "description" (the CMU index's words) and the
    file name; without a sidecar, from the file name.  Always in the canonical vocabulary."""
    side = read_sidecar(path)
    if side.get("tags"):
        clip.tags |= canonical_set(side["tags"])
    else:
        clip.tags |= tags_from_text(side.get("description", "")) | tags_from_name(clip.name)
    if "action_centres" in side:
        clip.annotations["action_centres"] = np.asarray(side["action_centres"], dtype=np.int64) - clip.frame_offset
    return clip


__all__ = ["ACTIONS", "FOOT_ACTIONS", "HAND_ACTIONS", "JUMPS", "STEP_OVER", "SYNONYMS", "VOCABULARY", "canonical",
           "apply_tags", "canonical_set", "has", "read_sidecar", "sidecar_path", "tags_from_name", "tags_from_text", "words"]
