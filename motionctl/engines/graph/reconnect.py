"""Keep Every Clip: put back the source clips a motion graph's merging and branching budget cut off
(``reconnect``), with their best unmerged candidate transitions into and out of the rest."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

RELAX = 2.0  # reconnecting may use transitions up to this many times the threshold (or ROUGH_UNIT, if lower)
ROUGH_UNIT = 0.08  # frame difference (about 16° of joint angle) an edge's roughness is measured in, whatever the threshold
SPECIAL_COST = 4.0  # thresholds added to a reconnecting transition from or to a jump or action take


def _frame_scc(frm, to, clip_of) -> np.ndarray:
    """bool [frames]: the frames in the largest strongly connected component of the frame graph
    (each frame to the next in its clip, plus the transitions): the graph's clips, before cutting."""
    n = len(clip_of)
    nat = np.flatnonzero(clip_of[1:] == clip_of[:-1])
    a, b = np.r_[nat, frm], np.r_[nat + 1, to]
    _, labels = connected_components(sparse.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=True,
                                     connection="strong")
    return labels == np.argmax(np.bincount(labels))


def _best_per_source(idx, score, other, k: int) -> np.ndarray:
    """``idx`` of the ``k`` best-scored candidates, each the best of its other end's source clip."""
    order = np.argsort(score, kind="stable")
    _, first = np.unique(other[order], return_index=True)
    return idx[order[np.sort(first)[:k]]]


def reconnect(frm, to, raw, clip_of, lengths, first, threshold: float, special=None, least: float = 0.8,
              rounds: int = 6, ways: int = 3):
    """Put back source clips that coalescing and branching cut off: while a clip has under ``least``
    of its frames in the largest strongly connected component, add raw candidate transitions (local
    minima under RELAX times the threshold or ROUGH_UNIT, whichever is lower, never rerouted) into it from the component, early in the
    clip, and out of it back into the component, late in it: the best from (and to) each of ``ways``
    other source clips, each scored by its cost plus ``threshold`` times how far from the clip's
    start (or end) it lies, plus SPECIAL_COST times the threshold when the other end is a
    ``special`` [source clips] take (a jump or an action): subject 16's walks and runs meet under
    the threshold only in a forward jump's run-up, so without these a run began with a jump.  On subject 16 every
    candidate together keeps 98% of the capture, while after coalescing the walk-run transitions
    (run poses change fast, so a rerouted end no longer matches) and the branching budget (spent on
    the cheaper walk-to-walk links) kept 40%: no run.  The added ends are not coalesced, for the
    same reason, so some clips are shorter than Min Clip.  A clip also loses what lies before its
    first way in and after its last way out: with ``least`` 0.6 random dozens of subject 16's clips
    kept 76-91% of their seconds, with 0.8 92-95%.  The ways in and out come from other takes only
    (a take's own frames cut a looping clip into pieces of a few frames).  Returns (from, to) with
    the added ones."""
    cf, ct, cc = raw
    frm, to = np.asarray(frm), np.asarray(to)
    special = np.zeros(len(lengths), dtype=bool) if special is None else np.asarray(special, dtype=bool)
    for _ in range(rounds):
        keep = _frame_scc(frm, to, clip_of)
        share = np.bincount(clip_of[keep], minlength=len(lengths)) / lengths
        add_f, add_t = [], []
        for c in np.flatnonzero(share < least).tolist():  # per lost source clip (a few dozen), vectorised
            lo, n = first[c], lengths[c]
            into = np.flatnonzero(keep[cf] & (clip_of[ct] == c) & (clip_of[cf] != c))  # from other takes
            out = np.flatnonzero((clip_of[cf] == c) & keep[ct] & (clip_of[ct] != c))
            if len(into) == 0 or len(out) == 0:
                continue  # only through other lost clips: a later round, once they are back
            src_in, src_out = clip_of[cf[into]], clip_of[ct[out]]
            a = _best_per_source(into, cc[into] + threshold * ((ct[into] - lo) / n + SPECIAL_COST * special[src_in]),
                                 src_in, ways)
            b = _best_per_source(out, cc[out] + threshold * ((lo + n - 1 - cf[out]) / n
                                                             + SPECIAL_COST * special[src_out]), src_out, ways)
            if cf[b].max() >= ct[a].min():
                add_f += [*cf[a], *cf[b]]
                add_t += [*ct[a], *ct[b]]
        if not add_f:
            break
        frm, to = np.r_[frm, add_f], np.r_[to, add_t]
    return frm, to
