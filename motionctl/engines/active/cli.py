"""Active learning's own command-line part: ``active run --pool DIR`` runs a learning session
against the pool's oracle, one line per step, and writes the model and its step log; with
``--model`` it drives a model like every engine.  Given the command line's helpers by the hook."""

from __future__ import annotations

import json
import os

from ...errors import MotionctlError
from ...store import atomic_file


def add_commands(commands, cli) -> None:
    """``--pool`` and the engine's settings on ``active run``."""
    run = commands.run
    run.add_argument("--pool", nargs="+", help="capture the oracle answers from (files or folders): a learning "
                                              "session that writes the model (.npz) and its step log")
    cli.add_settings(run, commands.engine)
    drive = run.get_default("func")
    run.set_defaults(func=lambda args: learn(args, cli, commands.engine) if args.pool else drive(args))


def learn(args, cli, engine) -> int:
    """A learning session against ``--pool``'s oracle, one line per step."""
    if args.model:
        raise MotionctlError("active run: give --pool (a learning session) or --model (drive a model), not both")

    def log(e):
        cov = "" if e.coverage is None else f" coverage {100 * e.coverage:.1f}%"
        print(f"step {e.step:3d} [{e.metric}] {e.candidate} -> {e.action}: {e.answer}; "
              f"{e.examples} examples, {e.pseudo} pseudo, {e.clusters} clusters{cov} ({e.seconds:.1f} s)", flush=True)

    model, written = cli.fit_and_save(engine, args, args.pool, log=log, track=True)
    log_path = os.path.splitext(written)[0] + ".steps.json"
    with atomic_file(log_path, "w", encoding="utf-8") as f:
        json.dump({"summary": model.summary(), "steps": model.log}, f, indent=1, default=str)
    print(f"wrote {log_path}")
    return 0
