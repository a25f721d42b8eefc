"""Certifying any controller (the measurement paper 004 could not make): its transition structure
as a motion graph, embedded and measured like one.

A controller that decides every 0.1 s has no clips to embed, so its *macro-steps* stand in: a
macro clip is what the model plays while one command is held for ``hold`` seconds from an entry
memory (a fragment, a group, a clip), and it can be followed by the macro clip of any command from
the memory it ended in.  Entries are explored breadth-first from the model's first decision to walk
forward.  Every engine certifies the same way through ``Model.decide``; a motion graph is its own
transition structure (``Model.own_graph``).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ...engines.base import step_tags
from ...play.graph import MotionGraph
from ...play.session import State
from ...body import flight
from ...play.synth import SynthState, synthesize, to_clip
from ...tags import JUMPS
from .embedding import EmbedSettings
from .metrics import evaluate


def macro_graph(model, table, commands=None, hold: float = 0.5, max_clips: int = 600) -> MotionGraph:
    """The model's macro-steps (see the module docstring) as a MotionGraph [macro clips, edges]
    with each clip's root path (from frames synthesized without blends), motion types (its
    middle step's clip tags) and, where the character leaves the ground while jump is pressed (or a jump
    clip plays), a "jump" action in the middle of its flight (``body.flight``), the only rows that may
    pass over a chasm."""
    commands = commands or model.certify_commands()
    if table is not None and model.frames is not table:
        model.bind(table)
    steps = max(1, int(round(hold * model.decision_rate)))
    origin = np.zeros(2)
    _, first = model.decide(State(origin, 0.0, None), commands[1 if len(commands) > 1 else 0])
    entries, order = {model.memory_key(first): 0}, [first]
    seqs, entry_of, cmd_of, ends = [], [], [], []
    i = 0
    while i < len(order) and len(seqs) + len(commands) <= max_clips:
        memory = order[i]
        i += 1
        for k, command in enumerate(commands):
            played, m = [], memory
            for _ in range(steps):
                step, m = model.decide(State(origin, 0.0, m), command)
                played.append(step)
            seqs.append(played)
            entry_of.append(model.memory_key(memory))
            cmd_of.append(k)
            ends.append(model.memory_key(m))
            if ends[-1] not in entries:
                entries[ends[-1]] = len(order)
                order.append(m)
    first_clip = {}
    for c, e in enumerate(entry_of):
        first_clip.setdefault(e, c)
    n_cmd = len(commands)
    edges = [(c, first_clip[e] + k) for c, e in enumerate(ends) if e in first_clip for k in range(n_cmd)]
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    n = len(seqs)
    paths, lengths, types, actions, airborne = [], [], [], [], []
    for c, played in enumerate(seqs):
        root, rot, _, counts, yaw = synthesize(table, played, SynthState(origin.copy(), 0.0), blend=0.0)
        paths.append(np.column_stack((np.vstack((origin, root[:, :2])), np.concatenate(([0.0], yaw)))))
        lengths.append(int(counts.sum()))
        tags = step_tags(table, played[len(played) // 2])
        kinds = tags - JUMPS
        air = np.zeros(len(root) + 1, dtype=bool)
        action = None
        if commands[cmd_of[c]].control[3] > 0.5 or tags & JUMPS:
            # A jump only if the character leaves the ground: its flight is what may pass over a chasm.
            air[1:] = flight(to_clip(table, root, rot, "macro"), centres=np.zeros(0, dtype=np.int64)) \
                if len(root) > 2 else False
            if air.any():
                rows = np.flatnonzero(air)
                kinds |= {"jump"}
                action = ("jump", int(rows[len(rows) // 2]))
        types.append(kinds)
        actions.append(action)
        airborne.append(air)
    adj = sparse.csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, labels = connected_components(adj, directed=True, connection="strong")
    keep = labels == np.argmax(np.bincount(labels))
    remap = np.cumsum(keep) - 1
    e = edges[keep[edges[:, 0]] & keep[edges[:, 1]]]
    sel = np.flatnonzero(keep)
    stats = {"clips": int(len(sel)), "edges": int(len(e)), "entries": len(order), "controls": n_cmd,
             "steps_per_clip": steps, "seconds_kept": float(sum(lengths[k] for k in sel) / table.fps)}
    return MotionGraph(table.fps, ["controller"], np.zeros(len(sel), dtype=np.int64), np.zeros(len(sel), dtype=np.int64),
                       np.array([lengths[k] for k in sel]), remap[e], [types[k] for k in sel],
                       [actions[k] for k in sel], stats, [paths[k] for k in sel], [airborne[k] for k in sel])


def transition_graph(model, table, max_clips: int = 600) -> MotionGraph:
    """What certification embeds: the model's own graph if it is one, else its macro-steps."""
    own = model.own_graph()
    return own if own is not None else macro_graph(model, table, max_clips=max_clips)


def certify(model, table, env, settings: EmbedSettings | None = None, pairs: int = 100, lm_sample: float = 1.0,
            progress=None, should_stop=None, max_clips: int = 600) -> dict:
    """Any model measured in ``env`` like a motion graph (``evaluate``'s dict, plus the graph)."""
    graph = transition_graph(model, table, max_clips)
    result = evaluate(graph, env, settings, pairs, lm_sample, progress, should_stop)
    result["graph"] = graph
    return result


__all__ = ["certify", "macro_graph", "transition_graph"]
