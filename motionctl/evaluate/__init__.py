"""How well a controller does what it is asked: ``scoreboard`` (the metrics every engine is measured
with: skating, pose, responses, path following, switches, time per decision) and ``room`` (what a
motion graph or any controller can do in an environment, paper 004).  The room's public names are
re-exported here.
"""

from .room import (CHASM, RoomSettings, LOW, WALL, EditModel, EmbedSettings, Embedding, Environment, Expander, Footprints, Grid,
                   Obstacle, action_centres_cells, action_coverage, certify, clip_permissions, count_edges, coverage,
                   coverage_rgba, embed, environment_from_dict, evaluate, flood, footprints, macro_graph,
                   path_efficiency, path_motion, practical_maneuverability, random_environment, rasterise,
                   read_environment, reference_graph, sample_best_path, shortest_path, strongly_connected,
                   summary_lines, theoretical_maneuverability, transition_graph)

__all__ = ["RoomSettings", "CHASM", "EditModel", "EmbedSettings", "Embedding", "Environment", "Expander", "Footprints", "Grid", "LOW",
           "Obstacle", "WALL", "action_centres_cells", "action_coverage", "certify", "clip_permissions", "count_edges",
           "coverage", "coverage_rgba", "embed", "environment_from_dict", "evaluate", "flood", "footprints",
           "macro_graph", "path_efficiency", "path_motion", "practical_maneuverability", "random_environment",
           "rasterise", "read_environment", "reference_graph", "sample_best_path", "shortest_path",
           "strongly_connected", "summary_lines", "theoretical_maneuverability", "transition_graph"]
