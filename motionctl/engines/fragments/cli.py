"""The fragment controller's own command-line parts: ``eval`` without a room is paper 000's Table 1
figure (percent of the off-line optimum on traces), and ``fragments trace`` writes a generated
player's trace.  Given the command line's helpers (``motionctl.cli``) by the registry's hook."""

from __future__ import annotations

from .control import EVALUATION_PLAYER, TRAINING_PLAYERS, generate_trace, read_trace, scale_player, write_trace


def add_commands(commands, cli) -> None:
    """``fragments trace`` and the evaluation-trace options of ``fragments eval``."""
    ev = commands.eval
    ev.add_argument("--traces", nargs="*", default=[], help="evaluation traces (CSV/JSON); default: generated")
    ev.add_argument("--count", type=cli.positive(int, 1000), default=12, help="generated evaluation traces")
    g = commands.add("trace", help="write a generated player trace (CSV or JSON)")
    g.add_argument("--player", default="evaluator", choices=[p.name for p in TRAINING_PLAYERS + (EVALUATION_PLAYER,)])
    g.add_argument("--seconds", type=cli.positive(float, cli.MAX_SECONDS), default=60.0)
    g.add_argument("--rate", type=cli.positive(float, 1000.0), default=10.0)
    g.add_argument("--max-speed", type=cli.positive(float, 15.0), default=3.5)
    g.add_argument("--seed", type=cli.seed, default=0)
    g.add_argument("--out", required=True)
    g.set_defaults(func=lambda args: write_player_trace(args, cli))


def write_player_trace(args, cli) -> int:
    """``fragments trace``: write a generated player's trace."""
    players = {p.name: p for p in TRAINING_PLAYERS + (EVALUATION_PLAYER,)}
    out = cli.out_path(args.out, ".json" if args.out.endswith(".json") else ".csv", 64 * args.seconds * args.rate)
    trace = generate_trace(scale_player(players[args.player], args.max_speed), args.seconds, args.rate, args.seed)
    write_trace(trace, out)
    print(f"wrote {out}: {len(trace.samples)} samples at {trace.rate:g} Hz from player {args.player!r}")
    return 0


def evaluate(model, args, cli) -> int:
    """Percent of the off-line optimum (paper 000's Table 1) on traces."""
    from ...jobs import PrintProgress
    from .controller import FragmentModel, evaluate_controllers
    from .model import evaluation_traces

    clips = cli.model_clips(model, args)
    s = model.settings
    with PrintProgress("fragments") as progress:
        fm = FragmentModel.build(clips, s.fragments, s.quality, progress)
    traces = [read_trace(p) for p in args.traces] if args.traces else \
        evaluation_traces(fm.fragments, args.count, args.seed, args.trace_seconds)
    kind = s.policy.kind
    with PrintProgress("eval") as progress:
        res = evaluate_controllers(fm, {kind: model.table}, model.bins, traces, s.quality, {"opt": None}, progress)
    r = res[kind]
    print(f"{kind}: {r['mean']:.1f}% of the off-line optimum (std {r['std']:.1f}) over {len(traces)} traces")
    return 0
