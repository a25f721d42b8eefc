"""Motion fragments and tabular policies (paper 000: McCann & Pollard 2007, DESIGN.md 3.1).

Modules: ``cut`` (fragments and their evident control), ``quality`` (motion and control quality,
eqs. 9-12), ``control`` (control bins, traces, the stochastic player, the user model), ``solver``
(modified policy iteration and the off-line optimum), ``controller`` (training and Table 1's
evaluation), ``model`` (the engine: ``fit`` and ``FragmentController``).
"""

from ..base import Engine
from . import cli
from .control import (EVALUATION_PLAYER, PLAYER_STYLES, TRAINING_PLAYERS, ControlBins, PlayerSettings, Trace,
                      bin_occupancy, generate_trace, kmeans_bins, learn_user_model, paper_bins, player_traces,
                      read_trace, resample_trace, scale_player, write_trace)
from .controller import ControllerSettings, FragmentModel, TrainedController, evaluate_controllers, train_controller
from .cut import CONTROL_COLUMNS, FragmentSet, FragmentSettings, cut_fragments, evident_control
from .model import FragmentController, Settings, fit
from .quality import (QualitySettings, control_distance, control_quality, motion_distances, motion_quality,
                      project_velocity, top_transitions)
from .solver import PolicySettings, SolveResult, Transitions, optimal_path, path_quality, run_table, solve

ENGINE = Engine("fragments", "Motion Fragments", "Steered by a player's control signal; a tabular policy over 0.1 s "
                "fragments of the capture (paper 000)", "McCann & Pollard 2007", Settings, fit, FragmentController,
                summary=(("clips", "clips", "{:d}"), ("fragments", "fragments", "{:d}"),
                         ("improvements", "policy improvements", "{:d}"), ("converged", "converged", "{}"),
                         ("warm", "warm start", "{}"),
                         ("percent_of_optimal", "% of optimal on held-out traces", "{:.1f}")),
                quick={"trace_seconds": 30.0, "held_out": 0}, cli=cli.add_commands, evaluate=cli.evaluate,
                colour="orange")

__all__ = [
    "CONTROL_COLUMNS", "ControlBins", "ControllerSettings", "ENGINE", "EVALUATION_PLAYER", "FragmentController",
    "FragmentModel", "FragmentSet", "FragmentSettings", "PLAYER_STYLES", "PlayerSettings", "PolicySettings",
    "QualitySettings", "Settings", "SolveResult", "TRAINING_PLAYERS", "Trace", "TrainedController", "Transitions",
    "bin_occupancy", "control_distance", "control_quality", "cut_fragments", "evaluate_controllers",
    "evident_control", "fit", "generate_trace", "kmeans_bins", "learn_user_model", "motion_distances",
    "motion_quality", "optimal_path", "paper_bins", "path_quality", "player_traces", "project_velocity",
    "read_trace", "resample_trace", "run_table", "scale_player", "solve", "top_transitions", "train_controller",
    "write_trace",
]
