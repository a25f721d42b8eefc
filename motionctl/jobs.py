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

import math
import os
import sys
import threading
import time
from typing import Callable

import numpy as np

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


def converging(residuals, tol: float, budget: int) -> float:
    """The share done, 0-1, of an iteration that stops once its residual falls below ``tol`` or
    after ``budget`` iterations: the iterations run over those plus the ones left at the recent
    rate of convergence (the residual's geometric fall per iteration over the last tenth of them,
    at least 5), as value iteration converges (linearly).  Use the running maximum: a rate that
    slows makes it smaller."""
    n = len(residuals)
    if n and residuals[-1] < tol:
        return 1.0
    share = n / max(budget, 1)
    if n >= 2:
        back = min(n - 1, max(5, n // 10))
        a, b = float(residuals[-1 - back]), float(residuals[-1])
        if a > b > 0:
            left = math.log(b / tol) / (math.log(a / b) / back)
            share = max(share, n / (n + left))
    return float(min(share, 1.0))


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
    """Time left for a job, judged on its recent pace, and said only when it can be kept.

    The pace is the fraction done per second over a recent window (the last ``WINDOW`` of the time
    elapsed, at least ``MIN_WINDOW`` seconds and ``MIN_STEPS`` reports that moved the fraction) up
    to the latest report; the time left counts down from there between reports.  No time is
    promised (``left`` is None, "time left unknown"): before ``MIN_FRACTION`` of the work and
    ``MIN_SECONDS``; while the pace is slowing (the window's recent half more than ``STEADY`` times
    slower than its older half: a slower stage begins, a step stalls); while no report has come for
    ``LATE`` times the longest gap between reports in the window; when the time promised has run
    out; and for half a window after an estimate broke its promise, the finish it promised moved
    later by more than ``SLACK`` of the time it promised (3 s at least).  So a time shown counts
    down, wavering by at most that slack, or gives way to "unknown": it never grows for long.
    Times are ``time.perf_counter()`` seconds unless ``now`` is given (tests)."""

    MIN_FRACTION = 0.02
    MIN_SECONDS = 2.0
    WINDOW = 0.3  # share of the time elapsed that the pace is judged over
    MIN_WINDOW = 5.0  # seconds
    MIN_STEPS = 3  # a window holds at least this many steps of the fraction (a job of few long steps)
    STEADY = 1.5  # the recent half of the window may be at most this many times slower than the older
    LATE = 2.0  # silence longer than this many times the longest recent gap between reports: stalled
    SLACK = 0.2  # an estimate that grows past the promised finish by this share of it (and 3 s) is broken
    KEEP = 256  # samples kept (thinned beyond)

    def __init__(self, t0: float | None = None):
        self.t0 = time.perf_counter() if t0 is None else t0
        self.fraction = 0.0
        self._samples = [(self.t0, 0.0)]  # (time, fraction) of each report, the start first
        self._moved: list = []  # when the last MIN_STEPS + 1 reports that moved the fraction came
        self._promise = None  # (when promised, finish time promised)
        self._quiet_until = -float("inf")

    def update(self, fraction: float, now: float | None = None) -> None:
        """A report: ``fraction`` of the work done at ``now`` (progress never goes back)."""
        now = time.perf_counter() if now is None else now
        before = self.fraction
        self.fraction = max(self.fraction, min(max(float(fraction), 0.0), 1.0))
        if self.fraction > before:
            self._moved = (self._moved + [now])[-(self.MIN_STEPS + 1):]
        s = self._samples
        if now <= s[-1][0]:
            s[-1] = (s[-1][0], self.fraction)
            return
        s.append((now, self.fraction))
        start = self._window(now)[0]
        first = next((i for i, (t, _) in enumerate(s) if t > start), len(s)) - 1
        if first > 0:
            del s[:first]  # one sample at or before the window's start is enough
        if len(s) > self.KEEP:
            s[1:-1] = s[1:-1:2]

    def elapsed(self, now: float | None = None) -> float:
        return (time.perf_counter() if now is None else now) - self.t0

    def _window(self, t: float) -> tuple:
        start = t - max(self.MIN_WINDOW, self.WINDOW * (t - self.t0))
        steps = self._moved[0] if len(self._moved) > self.MIN_STEPS else self.t0
        return max(self.t0, min(start, steps)), t

    def _at(self, t: float) -> float:
        """The fraction done at time ``t``, linear between reports."""
        times = [p[0] for p in self._samples]
        return float(np.interp(t, times, [p[1] for p in self._samples]))

    def pace(self) -> float | None:
        """Fraction per second over the window up to the latest report; None while it is slowing."""
        last_t, last_f = self._samples[-1]
        start, end = self._window(last_t)
        if end - start <= 0:
            return None
        mid = 0.5 * (start + end)
        f0, fm = self._at(start), self._at(mid)
        older, recent = (fm - f0) / (mid - start), (last_f - fm) / (end - mid)
        whole = (last_f - f0) / (end - start)
        if whole <= 0 or recent * self.STEADY < older:
            return None
        return whole

    def _stalled(self, now: float) -> bool:
        times = [t for t, _ in self._samples]
        gaps = np.diff(times) if len(times) > 1 else np.zeros(0)
        longest = float(gaps.max()) if len(gaps) else now - self.t0
        return now - times[-1] > max(self.LATE * longest, 1.0)

    def left(self, now: float | None = None) -> float | None:
        """Seconds left, or None while it cannot be told (see the class docstring)."""
        now = time.perf_counter() if now is None else now
        if (self.fraction >= 1.0 or self.fraction < self.MIN_FRACTION or self.elapsed(now) < self.MIN_SECONDS
                or now < self._quiet_until or self._stalled(now)):
            return None
        pace = self.pace()
        if pace is None:
            return None
        finish = self._samples[-1][0] + (1.0 - self.fraction) / pace
        if finish <= now:
            return None  # overdue
        if self._promise is not None:
            since, promised = self._promise
            slack = max(3.0, self.SLACK * (promised - since))
            if finish > promised + slack:
                self._promise = None  # it said too little: quiet for a while, then judge again
                start, end = self._window(now)
                self._quiet_until = now + 0.5 * (end - start)
                return None
            if finish < promised - slack:
                self._promise = (now, finish)  # faster than promised: promise that
        else:
            self._promise = (now, finish)
        return finish - now

    def text(self, now: float | None = None) -> str:
        """"1:20 elapsed, about 2:10 left", "0:03 elapsed, time left unknown", or at the end
        "2:31 elapsed"."""
        out = f"{clock(self.elapsed(now))} elapsed"
        if self.fraction >= 1.0:
            return out
        left = self.left(now)
        return out + (f", about {clock(left)} left" if left is not None else ", time left unknown")


class PrintProgress:
    """A ``progress`` callback for the command line: one line per step (at most every ``every``
    seconds) with the time elapsed and left (``Eta``); while no step reports for ``stalled`` seconds,
    a background ticker prints the last step again with the clock, so a long step never looks hung.
    The clock starts at the first report (a printer made before other work does not count it).  Use
    it as a context manager (``with PrintProgress(...) as progress:``): the ticker stops with the
    job however it ends, and a job that ends well without having reported 100% gets its 100% line
    ("done"), so the last line printed at success always says 100%."""

    def __init__(self, label: str = "", every: float = 0.5, stream=None, stalled: float = 5.0):
        self.label = label
        self.every = every
        self.stalled = stalled
        self.stream = stream or sys.stdout
        self._last = -1.0
        self.t0 = time.perf_counter()
        self.eta = Eta(self.t0)
        self.reports = 0
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
            if not self.reports:
                self.t0, self.eta = now, Eta(now)
            self.reports += 1
            self.eta.update(fraction, now)
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

    def close(self, succeeded: bool = False) -> None:
        """Stop the ticker; ``succeeded``: the job ended well, so print its 100% line if it has not."""
        self._done.set()
        if succeeded and self.reports and self.eta.fraction < 1.0:
            with self._lock:
                self.eta.update(1.0)
                self._message = "done"
                self._print(time.perf_counter())

    def __enter__(self) -> "PrintProgress":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(succeeded=exc_type is None)


__all__ = ["Cancelled", "Eta", "converging", "progress_range", "MemoryLimitError", "Progress", "Shared", "StopCheck", "check_memory", "check_stop", "clock",
           "cluster",
           "memory_budget", "n_workers", "never_stop", "no_progress", "one_blas_thread", "parallel_map",
           "PrintProgress", "use_scheduler"]
