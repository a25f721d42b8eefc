"""Motion graphs (paper 004's construction: Lee et al. 2002 costs, Appendix B coalescing).

Modules: ``build`` (frame costs, candidate transitions, coalescing, splitting, the strongly
connected component), ``reconnect`` (Keep Every Clip), ``lookahead`` (the Look Ahead policy's
values), ``model`` (the engine: ``fit`` and ``GraphController``).  What a graph can
do in a room is ``motionctl.evaluate``'s business.
"""

from ..base import Engine
from .build import ACTION_TYPES, GraphSettings, MotionGraph, build_graph, frame_features
from .model import GraphController, Settings, fit

ENGINE = Engine("graph", "Motion Graph", "Clips joined where poses match, walked by a look-ahead (or greedy) "
                "choice among successors; measured in rooms by the Evaluate panel (paper 004)", "Reitsma & Pollard 2007",
                Settings, fit, GraphController,
                summary=(("clips", "clips", "{:d}"), ("transitions", "transitions", "{:d}"),
                         ("reconnected", "of them put back to keep every clip", "{:d}"),
                         ("seconds_kept", "s of capture kept", "{:.1f}"),
                         ("seconds_total", "s of capture in all", "{:.1f}"),
                         ("sweeps", "value iteration sweeps", "{:d}"), ("residual", "Bellman residual", "{:.3g}"),
                         ("value_bytes", "bytes of values", "{:,d}")),
                warnings=(("dropped", "dropped entirely: {dropped} (no transition into and back out of them passed the "
                                       "Threshold: raise it, or turn Keep Every Clip on)"),),
                quick={"threshold": 0.3}, aliases=(("train", ("build",)), ("eval", ("evaluate",))),
                model_flags=("--model", "--graph"), room_default=True, panel=True, colour="green",
                variants=(("greedy", {"policy": "greedy"}),))

__all__ = ["ACTION_TYPES", "ENGINE", "GraphController", "GraphSettings", "MotionGraph", "Settings", "build_graph",
           "fit", "frame_features"]
