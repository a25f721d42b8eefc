"""Long work as plain functions: ``progress(fraction, message)`` and ``should_stop()`` callbacks.

Every engine entry point that can take more than a moment (train, build, evaluate) accepts both;
operators run it in a worker thread and poll it, the command line prints progress.

Parallel pieces go through ``parallel_map``: joblib threads by default (numpy and scikit-learn
release the GIL in their kernels), or the workers of a running Dask cluster when a scheduler is
set (``use_scheduler``, ``--scheduler`` or ``MOTIONCTL_SCHEDULER=tcp://host:port``; needs the
optional ``cluster`` extra, never Blender).  A piece is ``fn(item, **shared)``: it returns its
result instead of writing into the caller's arrays, and takes the large arrays it reads as
``shared`` (a ``Shared``), which a cluster receives once per job instead of once per task.
Stop requests and progress are handled by ``parallel_map`` between pieces, on the caller's side.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable

from .errors import Cancelled, MotionctlError

Progress = Callable[[float, str], None]
StopCheck = Callable[[], bool]


def no_progress(fraction: float, message: str) -> None:
    """A progress callback that ignores progress."""
    pass


def never_stop() -> bool:
    """A stop callback that never asks to stop."""
    return False


def progress_range(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    """A ``progress`` callback for one part of a job: its fractions 0-1 reported as ``lo``-``hi``
    of the whole (None when there is no progress to report)."""
    if progress is None:
        return None
    return lambda f, m: progress(lo + (hi - lo) * f, m)


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


class MemoryLimitError(MotionctlError):
    """A job would need more memory than the machine has free: raised before it starts."""


def memory_budget() -> int:
    """Bytes a job may use: ``MOTIONCTL_MEMORY_GB`` if set, else 90% of the memory now available."""
    env = os.environ.get("MOTIONCTL_MEMORY_GB")
    if env:
        try:
            return int(float(env) * 2**30)
        except ValueError:
            raise MotionctlError(f"MOTIONCTL_MEMORY_GB must be a number of gigabytes, got {env!r}") from None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(int(line.split()[1]) * 1024 * 0.9)
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 0.9)
    except (ValueError, OSError, AttributeError):
        return 2**62  # unknown: do not refuse


def check_memory(need: float, what: str, fix: str) -> None:
    """Refuse (MemoryLimitError) before a job that would need ``need`` bytes when fewer are free;
    the message says what needs it and ``fix``, the setting to change."""
    budget = memory_budget()
    if need > budget:
        raise MemoryLimitError(f"{what} needs about {need / 2**30:.1f} GB of memory but {budget / 2**30:.1f} GB is "
                               f"free: {fix}")


# ----------------------------------------------------------------------------- parallel pieces

_SCHEDULER = {"address": None, "client": None}


def use_scheduler(address: str | None) -> None:
    """Run parallel pieces on the Dask cluster at ``address`` (``tcp://host:port``); None: locally.
    Without a call, ``MOTIONCTL_SCHEDULER`` decides."""
    old = _SCHEDULER["client"]
    if old is not None and _SCHEDULER["address"] != address:
        old.close()
        _SCHEDULER["client"] = None
    _SCHEDULER["address"] = address or ""


def cluster():
    """The ``distributed.Client`` of the configured scheduler, connected once; None when local."""
    address = _SCHEDULER["address"]
    if address is None:
        address = os.environ.get("MOTIONCTL_SCHEDULER", "")
    if not address:
        return None
    client = _SCHEDULER["client"]
    if client is not None and client.status == "running":
        return client
    try:
        from distributed import Client
    except ImportError:
        raise MotionctlError(f"a Dask scheduler ({address}) was given but dask.distributed is not installed: "
                             "pip install -e \".[cluster]\"") from None
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError) as exc:
        raise MotionctlError(f"cannot reach the Dask scheduler {address}: {exc}") from None
    _SCHEDULER["address"], _SCHEDULER["client"] = address, client
    return client


class Shared:
    """Large read-only arrays that many pieces of one job read: passed as they are locally, and
    scattered to every worker of a cluster once (the first ``parallel_map`` using them)."""

    def __init__(self, **arrays):
        self.arrays = arrays
        self._client = None
        self._futures = None

    def on(self, client) -> dict:
        if self._client is not client:
            # A list, not the dict: scattering a dict would key the data by its names, so two
            # jobs' "data" would be one key, and releasing the old one would cancel the new one.
            futures = client.scatter(list(self.arrays.values()), broadcast=True, hash=False)
            self._futures = dict(zip(self.arrays, futures))
            self._client = client
        return self._futures


def parallel_map(fn, items, n_jobs: int | None = None, shared: Shared | dict | tuple | None = None, should_stop=None,
                 progress=None, what: str = "job", collect=None) -> list | None:
    """``[fn(x, **shared) for x in items]`` in order: on joblib threads, or on the Dask cluster
    when one is configured (see the module docstring).  Between pieces it stops when
    ``should_stop()`` (Cancelled) and reports ``progress(fraction, "<what> i/n")``.  With
    ``collect(i, result)`` each result is handed over as it arrives and not kept (returns None):
    memory then holds a few pieces' results, not all of them."""
    items = list(items)
    parts = [p if isinstance(p, Shared) else Shared(**p)
             for p in (shared if isinstance(shared, (tuple, list)) else (shared or {},))]
    n = len(items)
    if collect is not None:
        kept = None
    else:
        kept = [None] * n

        def collect(i, r):
            kept[i] = r

    def report(i):
        check_stop(should_stop, what)
        if progress is not None:
            progress(i / n, f"{what} {i}/{n}")

    client = cluster() if n > 1 else None
    if client is not None:
        _on_cluster(client, fn, items, {k: v for p in parts for k, v in p.on(client).items()}, report, collect, what)
        return kept
    arrays = {k: v for p in parts for k, v in p.arrays.items()}
    workers = min(n_workers(n_jobs), n)
    if workers <= 1:
        for i, x in enumerate(items):
            check_stop(should_stop, what)
            collect(i, fn(x, **arrays))
            report(i + 1)
        return kept
    from joblib import Parallel, delayed

    pieces = Parallel(n_jobs=workers, prefer="threads", return_as="generator")(
        delayed(fn)(x, **arrays) for x in items)
    for i, r in enumerate(pieces):
        collect(i, r)
        report(i + 1)
    return kept


def _on_cluster(client, fn, items, futures_of: dict, report, collect, what: str = "job") -> None:
    from distributed import as_completed

    futures = client.map(fn, items, pure=False, **futures_of)
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for done, (future, result) in enumerate(as_completed(futures, with_results=True)):
            if future.status != "finished":  # cancelled by the cluster: a worker died, or its data was lost
                raise MotionctlError(f"{what}: a piece was {future.status} on the Dask cluster ({result!r}); a worker "
                                     "may have run out of memory (see the scheduler's log)")
            collect(index[future.key], result)
            report(done + 1)
    finally:
        client.cancel(futures)


def one_blas_thread():
    """A context in which BLAS (numpy's matrix products) runs on one thread.  BLAS splits a product's
    sums across its threads, so their last bits depend on the thread count, and trainings that
    compare costs or take maxima amplify that into different results.  Inside, results depend
    only on the package versions (constraints.txt) and the CPU."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


def clock(seconds: float) -> str:
    """A duration as m:ss (or h:mm:ss)."""
    seconds = int(round(max(seconds, 0.0)))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


class Eta:
    """Time left for a job from its progress so far: elapsed x (1 - f) / f, the job's average pace
    (a step that stalls makes the estimate grow while the clock runs, which is what it is).  Nothing
    is estimated before ``MIN_FRACTION`` of the work and ``MIN_SECONDS`` of it have passed."""

    MIN_FRACTION = 0.02
    MIN_SECONDS = 2.0

    def __init__(self, t0: float | None = None):
        self.t0 = time.perf_counter() if t0 is None else t0
        self.fraction = 0.0

    def update(self, fraction: float) -> None:
        self.fraction = max(self.fraction, min(max(float(fraction), 0.0), 1.0))

    def elapsed(self, now: float | None = None) -> float:
        return (time.perf_counter() if now is None else now) - self.t0

    def left(self, now: float | None = None) -> float | None:
        """Seconds left, or None while there is too little to go on."""
        t = self.elapsed(now)
        if self.fraction < self.MIN_FRACTION or t < self.MIN_SECONDS or self.fraction >= 1.0:
            return None
        return t * (1.0 - self.fraction) / self.fraction

    def text(self, now: float | None = None) -> str:
        """"1:20 elapsed, about 2:10 left" (or just the elapsed time)."""
        left = self.left(now)
        out = f"{clock(self.elapsed(now))} elapsed"
        return out + (f", about {clock(left)} left" if left is not None else "")


class PrintProgress:
    """A ``progress`` callback for the command line: one line per step (at most every ``every``
    seconds) with the time elapsed and left; while no step reports for ``stalled`` seconds, a
    background ticker prints the last step again with the clock, so a long step never looks hung.
    Use it as a context manager (``with PrintProgress(...) as progress:``) so the ticker stops with
    the job, however it ends."""

    def __init__(self, label: str = "", every: float = 0.5, stream=None, stalled: float = 5.0):
        self.label = label
        self.every = every
        self.stalled = stalled
        self.stream = stream or sys.stdout
        self._last = -1.0
        self.t0 = time.perf_counter()
        self.eta = Eta(self.t0)
        self._message = ""
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None

    def _print(self, now: float) -> None:
        prefix = f"{self.label}: " if self.label else ""
        print(f"  {prefix}{100 * self.eta.fraction:5.1f}%  {self._message}  ({self.eta.text(now)})", file=self.stream,
              flush=True)
        self._last = now

    def __call__(self, fraction: float, message: str) -> None:
        now = time.perf_counter()
        with self._lock:
            self.eta.update(fraction)
            self._message = message
            if now - self._last >= self.every or fraction >= 1.0:
                self._print(now)
        if fraction >= 1.0:
            self._done.set()
        elif self._ticker is None and self.stalled > 0:
            self._ticker = threading.Thread(target=self._tick, name="motionctl-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._done.wait(min(1.0, self.stalled)):
            now = time.perf_counter()
            with self._lock:
                if now - self._last >= self.stalled:
                    self._print(now)

    def close(self) -> None:
        """Stop the ticker (the job ended without reporting 100%, or failed)."""
        self._done.set()

    def __enter__(self) -> "PrintProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["Cancelled", "Eta", "progress_range", "MemoryLimitError", "Progress", "Shared", "StopCheck", "check_memory", "check_stop", "clock",
           "cluster",
           "memory_budget", "n_workers", "never_stop", "no_progress", "one_blas_thread", "parallel_map",
           "PrintProgress", "use_scheduler"]
