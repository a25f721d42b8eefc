"""Motion fragments and tabular policies (paper 000: McCann & Pollard 2007, DESIGN.md 3.1).

Public API:
    mirror_clip, cut_fragments, FragmentSettings, FragmentSet, evident_control
    QualitySettings, motion_distances, motion_quality, control_quality, top_transitions
    ControlBins, paper_bins, kmeans_bins, Trace, read_trace, write_trace, PlayerSettings,
    generate_trace, learn_user_model
    ControllerSettings, FragmentModel, train_controller, evaluate_controllers
The solver and the run-time Policy live in ``motionctl.policy``.
"""

from .control import (EVALUATION_PLAYER, TRAINING_PLAYERS, ControlBins, PlayerSettings, Trace, generate_trace,
                      kmeans_bins, learn_user_model, paper_bins, player_traces, read_trace, scale_player, write_trace)
from .controller import ControllerSettings, FragmentModel, TrainedController, evaluate_controllers, train_controller
from .cut import CONTROL_COLUMNS, FragmentSet, FragmentSettings, cut_fragments, evident_control, mirror_clip
from .quality import (QualitySettings, control_distance, control_quality, motion_distances, motion_quality,
                      project_velocity, top_transitions)

__all__ = [
    "CONTROL_COLUMNS", "ControlBins", "ControllerSettings", "EVALUATION_PLAYER", "FragmentModel", "FragmentSet",
    "FragmentSettings", "PlayerSettings", "QualitySettings", "TRAINING_PLAYERS", "Trace", "TrainedController",
    "control_distance", "control_quality", "cut_fragments", "evaluate_controllers", "evident_control",
    "generate_trace", "kmeans_bins", "learn_user_model", "mirror_clip", "motion_distances", "motion_quality",
    "paper_bins", "player_traces", "project_velocity", "read_trace", "scale_player", "top_transitions",
    "train_controller", "write_trace",
]
