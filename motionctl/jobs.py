"""Long work as plain functions: ``progress(fraction, message)`` and ``should_stop()`` callbacks.

Every engine entry point that can take more than a moment (train, build, evaluate) accepts both;
operators run it in a worker thread and poll it, the command line prints progress.  Parallel
pieces go through joblib threads (numpy and scikit-learn release the GIL in their kernels).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

from .errors import Cancelled

Progress = Callable[[float, str], None]
StopCheck = Callable[[], bool]


def no_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores progress."""
    pass


def never_stop() -> bool:
    """A stop callback that never asks to stop."""
    return False


def check_stop(should_stop: StopCheck | None, what: str = "job") -> None:
    """Raise Cancelled when the caller asked to stop (call between chunks of work)."""
    if should_stop is not None and should_stop():
        raise Cancelled(f"{what} cancelled")


def n_workers(n_jobs: int | None = None) -> int:
    """Threads for parallel blocks: all local cores unless told otherwise."""
    if n_jobs is not None and n_jobs > 0:
        return n_jobs
    env = os.environ.get("MOTIONCTL_JOBS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, os.cpu_count() or 1)


def parallel_map(fn, items, n_jobs: int | None = None) -> list:
    """``[fn(x) for x in items]`` on joblib threads (any joblib backend works the same)."""
    items = list(items)
    workers = min(n_workers(n_jobs), len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=workers, prefer="threads")(delayed(fn)(x) for x in items)


def one_blas_thread():
    """A context in which BLAS (numpy's matrix products) runs on one thread.  BLAS splits a product's
    sums across its threads, so their last bits depend on the thread count, and trainings that
    compare costs or take maxima amplify that into different results.  Inside, results depend
    only on the package versions (constraints.txt) and the CPU."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


class PrintProgress:
    """A ``progress`` callback for the command line: one line per step, throttled."""

    def __init__(self, label: str = "", every: float = 0.5, stream=None):
        self.label = label
        self.every = every
        self.stream = stream or sys.stdout
        self._last = -1.0
        self.t0 = time.perf_counter()

    def __call__(self, fraction: float, message: str) -> None:
        now = time.perf_counter()
        if now - self._last >= self.every or fraction >= 1.0:
            self._last = now
            prefix = f"{self.label}: " if self.label else ""
            print(f"  {prefix}{100 * fraction:5.1f}%  {message}  ({now - self.t0:.1f} s)", file=self.stream, flush=True)


__all__ = ["Cancelled", "Progress", "StopCheck", "check_stop", "n_workers", "never_stop", "no_progress",
           "one_blas_thread", "parallel_map", "PrintProgress"]
