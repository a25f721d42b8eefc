"""What a motion graph, or any controller, can do in a room (paper 004: Reitsma & Pollard 2007).

Modules: ``environment`` (rooms of annotated obstacles, rasterised), ``grid`` (editing footprints,
Appendix A), ``embedding`` (the embedded graph and its strongly connected component, sections
4.2 and 4.5), ``metrics`` (coverage, path and action efficiency, local maneuverability; section 5),
``paths`` (best paths and their motion), ``certify`` (any model through its macro-steps).
"""

from .certify import certify, macro_graph, transition_graph
from .embedding import EmbedSettings, Embedding, Expander, clip_permissions, count_edges, embed, flood, strongly_connected
from .environment import (CHASM, LOW, WALL, Environment, Grid, Obstacle, environment_from_dict, random_environment,
                          rasterise, read_environment)
from .grid import EditModel, Footprints, footprints
from .metrics import (action_centres_cells, action_coverage, coverage, coverage_rgba, evaluate, jump_reach, path_efficiency,
                      practical_maneuverability, reference_graph, summary_lines, theoretical_maneuverability)
from .paths import path_motion, sample_best_path, shortest_path
from .settings import RoomSettings

__all__ = ["RoomSettings", "CHASM", "EditModel", "EmbedSettings", "Embedding", "Environment", "Expander", "Footprints", "Grid", "LOW",
           "Obstacle", "WALL", "action_centres_cells", "action_coverage", "certify", "clip_permissions", "count_edges",
           "coverage", "coverage_rgba", "embed", "environment_from_dict", "evaluate", "flood", "footprints", "jump_reach",
           "macro_graph", "path_efficiency", "path_motion", "practical_maneuverability", "random_environment",
           "rasterise", "read_environment", "reference_graph", "sample_best_path", "shortest_path",
           "strongly_connected", "summary_lines", "theoretical_maneuverability", "transition_graph"]
