"""The one engine interface (DESIGN.md 3.0): what every controller provides, so that training,
Drive, Play Trace, Bake, certification, the command line and the benchmarks work on any of them.

An engine is one folder with a ``Settings`` dataclass (``motionctl.settings``: its fields describe
themselves) and ``fit(library, settings, *, progress, should_stop, cache) -> Model``, registered
by one ``Engine`` line in ``motionctl.engines.ENGINES``.  A ``Model``:

- saves and loads itself as one ``.npz`` archive (JSON header + arrays, never pickle);
- summarises itself as a plain dict (what the panel and the command line print);
- builds the ``FrameTable`` it plays from the library clips it was trained on;
- starts at a frame of that table (``start``) and decides the next ``Step`` from a ``State``
  (the character's root frame and the model's memory) and a ``Command`` (``decide``).

``motionctl.play.session.Session`` plays any model; ``motionctl.evaluate.room.certify`` measures any model
through the macro-steps it takes while a command is held (a motion graph as it is: ``own_graph``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from .. import quat
from ..clip import Clip, MotionDatabase, resample
from ..body.mirror import MIRROR_SUFFIX, mirror_clip, mirror_source
from ..errors import MotionctlError, MotionFileError
from ..play.session import State
from ..play.commands import Command
from ..settings import from_dict, to_dict, validate
from ..store import open_archive, save_archive
from .schema import Flag, Items, Num, Plain, Row, Table, Text, check_arrays, settings_shape
from .schema import check_header as check_shape
from ..play.synth import FrameTable, Step, frame_table
from ..skeleton import forward_kinematics


@dataclass(frozen=True, eq=False)
class Engine:
    """One registry line, and everything the rest of the program needs to know about an engine, so
    that the command line, the panels, the operators and the contract test are generated from it
    and nothing outside ``motionctl/engines/`` names an engine.

    name, label, description, paper   files and commands; panel; tooltips; the paper it follows
    Settings, fit, Model    its settings dataclass, ``fit(library, settings, *, progress,
                            should_stop, cache) -> Model`` and model class
    summary      ((key, label, format), ...): the figures of ``Model.summary()`` the panel and the
                 command line show, in order (``summary_lines``); ``seconds`` is common to all
    warnings     ((key, text), ...): a summary entry that, when set, is a warning; ``{key}`` in
                 the text takes that summary entry (lists joined by commas)
    quick        settings for a quick run (the contract test, the clean-Blender check)
    command      the command-line word (default: ``name``); ``aliases`` ((sub-command, other
                 names), ...) and ``model_flags`` (flags naming a model file for ``eval``)
    cli          ``hook(subparsers, cli)``: sub-commands or options of its own, given the command
                 line's helpers (``motionctl.cli``); ``evaluate(model, args, cli) -> status``:
                 ``eval`` without ``--env`` (its own figures; default: print the summary)
    room_default the Evaluate panel's default source (paper 004 measures motion graphs)
    panel        a sidebar panel of its own besides the Controller panel's (settings, a train button
                 named by its first ``train`` alias, its summary)
    colour       its colour in plots (``evaluate.plot.PALETTE``)
    variants     ((name, settings), ...): other ways it plays, checked by the contract test too
    """

    name: str
    label: str
    description: str
    paper: str
    Settings: type
    fit: object
    Model: type
    summary: tuple = ()
    warnings: tuple = ()
    quick: dict = field(default_factory=dict)
    command: str = ""
    aliases: tuple = ()
    model_flags: tuple = ("--model",)
    cli: object = None
    evaluate: object = None
    room_default: bool = False
    panel: bool = False
    colour: str = "grey"
    variants: tuple = ()

    @property
    def word(self) -> str:
        """The command-line word."""
        return self.command or self.name

    def aliases_of(self, sub: str) -> list:
        """Other names of a sub-command ("train", "run", "eval")."""
        return [a for k, names in self.aliases if k == sub for a in names]


COMMON_SUMMARY = (("seconds", "seconds to train", "{:.1f}"),
                  # how a check run looks beside the capture (``evaluate.looks.model_looks``)
                  ("looks_skating", "feet sliding", "{}"), ("looks_sliding", "sliding per step", "{}"),
                  ("looks_pose", "pose distance p95", "{}"), ("looks_worst", "check run", "{}"))
COMMON_WARNINGS = (("looks_missed", "looks worse than the capture: {looks_missed}"),
                   ("library_cannot", "the capture cannot answer every command: {library_cannot}"))


def summary_lines(engine: Engine, summary: dict) -> list:
    """[(text, is_warning)]: a model's summary as its engine labels it, then its warnings."""
    out = []
    for key, label, fmt in tuple(engine.summary) + COMMON_SUMMARY:
        v = summary.get(key)
        if v is None or (isinstance(v, float) and v != v):
            continue
        try:
            out.append((f"{label}: {fmt.format(v)}", False))
        except (ValueError, TypeError):
            out.append((f"{label}: {v}", False))
    words = {k: ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v for k, v in summary.items()}
    for key, text in tuple(engine.warnings) + COMMON_WARNINGS:
        if summary.get(key):
            out.append((text.format_map(words), True))
    return out


MIN_TRAVEL = 0.1  # metres: a library whose root never gets this far from where it started cannot move
MIN_TURN = np.radians(10.0)  # ... nor turn this far


def clips_of(library) -> list:
    """The clips of a library: a MotionDatabase, or any sequence of clips on one skeleton.  A
    library with no clip, or whose root never moves (travels under ``MIN_TRAVEL`` and turns under
    ``MIN_TURN`` in every clip), is refused: any controller trained on it would stand still."""
    clips = list(library.clips if isinstance(library, MotionDatabase) else library)
    if not clips:
        raise MotionctlError("no clips to train on: select at least one")
    travel = max(float(np.linalg.norm(c.root_pos[:, :2] - c.root_pos[:1, :2], axis=1).max()) for c in clips)
    turn = max(float(quat.angle(quat.mul(quat.conj(c.local_rot[:1, 0]), c.local_rot[:, 0])).max()) for c in clips)
    if travel < MIN_TRAVEL and turn < MIN_TURN:
        root = clips[0].skeleton.names[0]
        raise MotionctlError(
            f"none of the {len(clips)} clip(s) moves its root {root!r} (at most {100 * travel:.1f} cm from where it "
            f"starts, {np.degrees(turn):.1f}° of turn): a controller trained on them would never move. If the "
            f"motion lies on a joint above the hips, import again with Fold Extra Roots on (--fold-roots); or add "
            f"clips that walk or turn")
    return clips


def fingerprint(clips) -> str:
    """A short hash of clips' names and motion values, to know when cached work still applies and
    which clips a model was trained on.  Values, not bytes: a clip mirrored before resampling holds
    -0.0 where the same clip resampled, then mirrored holds 0.0 (a library holding mirror images,
    played by an engine that does not mirror, did not match itself)."""
    h = hashlib.blake2b(digest_size=12)
    for c in clips:
        h.update(c.name.encode())
        for a in (c.root_pos, c.local_rot):
            h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64) + 0.0).tobytes())  # + 0.0: -0.0 -> 0.0
    return h.hexdigest()


def working_set(clips, fps: float, mirror: bool, mirrors_last: bool = False) -> list:
    """The clips an engine works on: each library clip resampled to ``fps`` and, with ``mirror``,
    its mirror image after it (``mirrors_last``: every mirror image after every clip)."""
    work = [resample(c, fps) for c in clips]
    if not mirror:
        return work
    if mirrors_last:
        return work + [mirror_clip(c) for c in work]
    return [m for c in work for m in (c, mirror_clip(c))]


def sources_of(work) -> list:
    """[(library clip name, mirrored?)] of working clips (``working_set``'s): what a model stores."""
    return [(mirror_source(c.name)[0], True) if "mirrored" in c.tags else (c.name, False) for c in work]


def working_clips(clips, sources, fps: float) -> list:
    """The working clips a model was trained on, rebuilt from library ``clips``: each of ``sources``
    [(library clip name, mirrored?)] resampled to ``fps`` (and mirrored), in that order.  A missing
    clip is a MotionctlError naming it."""
    by_name = {c.name: c for c in clips}
    out, cache = [], {}
    for base, mirrored in sources:
        own = base + MIRROR_SUFFIX
        if mirrored and own in by_name:  # the library's own mirror image (mirroring after resampling differs in the last bits)
            out.append(resample(by_name[own], fps))
            continue
        if base not in by_name:
            raise MotionctlError(f"the model's clip {base!r} is not in this library (train it again on these clips)")
        if base not in cache:
            cache[base] = resample(by_name[base], fps)
        c = cache[base]
        out.append(mirror_clip(c) if mirrored else c)
    return out


def rest_frames(table: FrameTable) -> np.ndarray:
    """[J, 4] each joint's inverse mean rotation relative to the heading over ``table`` (``quat.mean``),
    found once per table: a joint's rotation followed by it (an engine's pose features) is the same
    whatever frame the file's joint rests in (a joint resting turned by Q has rotations ending in Q
    and a mean ending in Q, which cancel)."""
    if getattr(table, "_rest_frames", None) is None:
        _, rot = forward_kinematics(table.skeleton, np.zeros((table.n_frames, 3)), table.local_rot)
        table._rest_frames = quat.conj(quat.mean(rot, axis=0))
    return table._rest_frames


def check_pieces(table: FrameTable, clip, end, what: str) -> None:
    """MotionctlError unless every piece (working clip ``clip`` [N], ending at frame ``end`` [N]) of a
    model lies inside ``table``'s clips (a damaged file's piece past them asked for any memory)."""
    clip, end = np.asarray(clip), np.asarray(end)
    n = len(table.first)
    if len(clip) and (clip.max() >= n or np.any(end > table.length[np.minimum(clip, n - 1)])):
        raise MotionctlError(f"the model's {what} lie outside these clips: train it again on these clips")


MAX_FPS = 1000.0  # frames per second a model may say it runs at
MAX_CLIPS = 1_000_000  # working clips one model may name
MAX_SPEED = 50.0  # m/s: a speed figure past this in a header is damage (a sprinter runs at 12)

# The summary's figures the program reads (a run's generated player, certification's commands, the
# active panel's picture, ``run`` without --clips); the rest are only shown (``summary_lines``).
SUMMARY = Table({"top_speed": Num(0.0, MAX_SPEED, optional=True), "typical_speed": Num(0.0, MAX_SPEED, optional=True),
                 "pool_coverage": Num(0.0, 1.0, optional=True), "seconds": Num(0.0, optional=True),
                 "sources": Items(Text(empty=False), 1, MAX_CLIPS, optional=True),
                 "looks_missed": Items(Text(), optional=True)}, others=Plain(), optional=True)


def header_shape(model) -> Table:
    """The whole header of a ``model`` class's files (``Model.save``): the common part, the settings'
    kinds (``settings_shape``; their ranges are ``validate``'s) and the engine's own ``header``."""
    return Table({"format": Text(), "engine": Text(choices=(model.engine,)), "settings": settings_shape(model.Settings),
                  "summary": SUMMARY, "clip_names": Items(Text(empty=False), 1, MAX_CLIPS),
                  "sources": Items(Row((Text(empty=False), Flag())), 1, MAX_CLIPS, optional=True),
                  "fps": Num(1.0, MAX_FPS), "heading_smooth": Num(0.0, 10.0, optional=True),
                  "data_key": Text(longest=128, optional=True), "model": model.header})


def check_header(path, meta: dict, model) -> dict:
    """The common part of a model header (what ``Model.save`` writes besides the engine's own and
    the settings) as ``from_archive``'s ``base``, plus "sources" and "data_key", once the whole header
    fits ``header_shape(model)`` (``schema.check_header``: MotionFileError naming ``path`` and the
    field)."""
    check_shape(path, header_shape(model), meta)
    names, sources = meta["clip_names"], meta.get("sources")
    if sources is None:  # archives before sources were stored: the names say (``mirror_source``)
        sources = [mirror_source(n) for n in names]
    elif len(sources) != len(names):
        raise MotionFileError(path, f"its header's 'sources' must be {len(names)} [clip name, mirrored] pairs, one "
                              "per clip name (a damaged or hand-edited file?)")
    smooth = meta.get("heading_smooth")
    return {"summary": meta.get("summary") or {}, "clip_names": list(names), "sources": [tuple(s) for s in sources],
            "data_key": meta.get("data_key") or "", "fps": float(meta["fps"]),
            "heading_smooth": 0.2 if smooth is None else float(smooth)}


class Model:
    """Base of every trained controller.  Subclasses set ``engine``, ``Settings`` and ``schema`` and implement
    ``arrays()`` / ``from_archive()``, ``frame_table``, ``start`` and ``decide``."""

    engine = ""
    Settings = None
    schema: dict | None = None  # {array name: schema.Array}: what a saved model's arrays must be
    header = Table({}, others=Plain())  # schema.Table: what the engine's own part of the header ("model") must be
    absent_settings: dict = {}  # {setting: value} for a file saved before the setting (how it played then)
    decision_rate = 10.0  # decisions per second (about; steps may vary in length)
    # Bytes a saved model takes per second of capture it was trained on, at most (measured at the
    # default settings on CMU subject 16, with a margin of 2): what the command line asks free
    # before training (``cli.estimated_model_bytes``).  Each engine states its own.
    bytes_per_second = 4 << 20
    typical_speed = 1.3  # m/s: the speed its commands are measured at (certification)

    def __init__(self, settings, summary: dict | None = None, clip_names=(), fps: float = 30.0,
                 heading_smooth: float = 0.2):
        self.settings = settings
        self.info = dict(summary or {})
        self.clip_names = list(clip_names)
        # (library clip, mirrored?) of each working clip: stored, so nothing parses names to rebuild them
        self.sources = [mirror_source(n) for n in self.clip_names]
        self.data_key = ""  # ``fingerprint`` of the working clips ("": not known)
        self.fps = float(fps)
        self.heading_smooth = heading_smooth
        self.frames = None  # the FrameTable it plays on, once bound (``bind``)

    # --- storage

    @classmethod
    def archive_format(cls) -> str:
        """The format tag of this engine's model archives ("motionctl.<engine>/1")."""
        return f"motionctl.{cls.engine}/1"

    def arrays(self) -> tuple[dict, dict]:
        """(extra JSON meta, arrays) the engine stores."""
        raise NotImplementedError

    @classmethod
    def from_archive(cls, base: dict, meta: dict, arrays) -> "Model":
        """Rebuild from ``base`` (settings, summary, clip_names, fps: the common part), the
        engine's own ``meta`` and an open archive's ``arrays``."""
        raise NotImplementedError

    def save(self, path) -> str:
        """Write the model (atomically); returns the path written (.npz added if missing)."""
        meta, arrays = self.arrays()
        header = {"engine": self.engine, "settings": to_dict(self.settings), "summary": self.info,
                  "clip_names": self.clip_names, "sources": [list(s) for s in self.sources], "fps": self.fps,
                  "heading_smooth": self.heading_smooth, "data_key": self.data_key, "model": meta}
        return save_archive(path, self.archive_format(), header, arrays)

    @classmethod
    def load(cls, path) -> "Model":
        """A model saved by ``save`` (MotionFileError if missing, damaged or another engine's).  The
        common header is checked (``check_header``), the arrays against the engine's ``schema``, and
        what the engine builds from them by its ``check``: a damaged or hand-edited file is refused
        here, naming the file, not met later while driving."""
        with open_archive(path, cls.archive_format(), f"{cls.engine} model") as (meta, z):
            base = check_header(path, meta, cls)
            base["settings"] = cls.stored_settings(path, meta.get("settings", {}))
            if cls.schema is not None:
                check_arrays(path, cls.schema, z)
            try:
                model = cls.from_archive(base, meta.get("model", {}), z)
                model.check()
            except MotionFileError:
                raise
            except MotionctlError as exc:
                raise MotionFileError(path, str(exc)) from None
            except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError,
                    OverflowError) as exc:  # the engine's header or arrays disagree: another version, or damage
                raise MotionFileError(path, f"damaged {cls.engine} model ({type(exc).__name__}: {exc})") from None
        model.sources = base["sources"]
        model.data_key = base["data_key"]  # archives before it: "" (not checked)
        return model

    def check(self) -> None:
        """Raise MotionctlError if what was loaded cannot be played (an engine's arrays and header
        telling different stories, which the per-array ``schema`` cannot see)."""

    def remember(self, work, key: str | None = None) -> None:
        """Note the working clips trained on: their sources (to rebuild them from a library) and
        their ``fingerprint`` (``key`` if already known), so a library whose clips of the same names
        hold other motion is refused."""
        self.sources = sources_of(work)
        self.data_key = key or fingerprint(work)

    @classmethod
    def stored_settings(cls, path, data):
        """The settings a model file holds, checked as the panel checks what is typed (a hand-edited
        or damaged header fails here, naming the file, not later while driving)."""
        try:
            if not isinstance(data, dict):
                raise MotionctlError("not a table of options")
            settings = from_dict(cls.Settings, data)
            for name, value in cls.absent_settings.items():  # a file from before the setting: as it played then
                if name not in data:
                    setattr(settings, name, value)
            validate(settings)
        except (MotionctlError, TypeError, ValueError, OverflowError, AttributeError) as exc:  # a list for a word...
            raise MotionFileError(path, f"its settings are not valid: {exc}") from None
        return settings

    # --- what the tools see

    def summary(self) -> dict:
        """Plain JSON numbers and words about the trained model (what the panel shows)."""
        return dict(self.info, engine=self.engine)

    def frame_table(self, clips) -> FrameTable:
        """The FrameTable this model's steps refer to, rebuilt from the library ``clips`` (nothing
        else: ``bind`` makes the model play on it)."""
        work = working_clips(clips, self.sources, self.fps)
        if self.data_key and fingerprint(work) != self.data_key:
            raise MotionctlError("the model was trained on other motion than these clips of the same names "
                                 f"({', '.join(sorted({n for n, _ in self.sources})[:3])}...): train it again on these clips")
        return frame_table(work, work[0].skeleton, self.heading_smooth)

    def bind(self, table: FrameTable) -> "Model":
        """Play on ``table`` (``frame_table``'s): what ``start`` and ``decide`` read.  ``Session``
        binds the model it plays; a caller that decides by itself binds first.  Returns the model."""
        self.frames = table
        self.on_bind(table)
        return self

    def on_bind(self, table: FrameTable) -> None:
        """What an engine derives from its table when bound (its database, its search index)."""

    def play(self, clips) -> FrameTable:
        """``bind(frame_table(clips))``: the table, bound."""
        table = self.frame_table(clips)
        self.bind(table)
        return table

    def start(self, table: FrameTable, frame: int):
        """Memory for a character starting at row ``frame`` of the table."""
        raise NotImplementedError

    def decide(self, state: State, command: Command) -> tuple[Step, object]:
        """(the step to play next, the memory after it) for ``state`` under ``command``."""
        raise NotImplementedError

    @property
    def top_speed(self) -> float:
        """The data's top speed (m/s): what a generated player's full stick asks for."""
        return float(self.info.get("top_speed") or 1.5 * self.typical_speed)

    @property
    def goals(self) -> tuple:
        """World goals the model reads from commands besides the control: "target", "gate"."""
        return ()

    def own_graph(self):
        """A MotionGraph when the model is one (certification embeds it as it is), else None."""
        return None

    def picture(self):
        """(RGBA [H, W, 4] float rows bottom-up, caption) of what the model learned, for the
        panel, or None (the default)."""
        return None

    def push(self, memory, impulse):
        """The memory after a push (``impulse`` [2] m/s in the character's frame), or None when
        the engine cannot be pushed (the default: clips play as captured)."""
        return None

    def memory_key(self, memory):
        """A hashable form of the memory (macro-steps starting from equal keys are the same)."""
        return memory

    def certify_commands(self) -> list:
        """Commands held for certification's macro-steps: stand, walk in 8 directions at the
        model's typical speed, turn left and right while walking, jump."""
        v = self.typical_speed
        ang = np.linspace(0, 2 * np.pi, 8, endpoint=False)
        controls = [[0, 0, 0, 0]] + [[v * np.sin(a), v * np.cos(a), 0, 0] for a in ang]
        controls += [[0, v, 1.0, 0], [0, v, -1.0, 0], [0, v, 0, 1]]
        return [Command(np.array(c, dtype=float)) for c in controls]


def step_tags(table: FrameTable, step: Step) -> set:
    """Tags of the clip a step mostly plays (empty for engine-made frames)."""
    if step.frames is not None or not getattr(table, "tags", None):
        return set()
    return set(table.tags[step.heaviest()[0]])


__all__ = ["Clip", "Engine", "Model", "clips_of", "fingerprint", "step_tags", "summary_lines", "working_clips",
           "working_set"]
