"""Where a sweep's runs execute: a local process pool (or the calling process), or a Dask cluster."""

from __future__ import annotations

import concurrent.futures
import os
import uuid
from typing import Any, Callable

from batsim_classifier_scheduler.errors import ConfigError


class LocalBackend:
    """A process pool on this machine (``workers=0``: everything in the calling process)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        if self.workers < 0:
            raise ConfigError(f"--workers must be 0 (in-process) or more, got {self.workers}")
        if self.workers == 0:
            self.pool = _InlineExecutor()
        else:
            # workers forked from this process inherit the modules imported here
            import batsim_classifier_scheduler.knowledge.classifier  # noqa: F401
            import batsim_classifier_scheduler.sim.results  # noqa: F401
            import batsim_classifier_scheduler.sim.simulate  # noqa: F401

            self.pool = concurrent.futures.ProcessPoolExecutor(max_workers=self.workers)
        self.description = f"local, {self.workers} worker(s)" if self.workers else "local, in-process"
        self.capacity = max(self.workers, 1)

    def submit(self, fn: Callable, *args: Any, priority: float = 0.0):
        return self.pool.submit(fn, *args)

    def wait_any(self, pending: set) -> set:
        done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
        return done

    def close(self, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


class _InlineExecutor(concurrent.futures.Executor):
    """Runs each submitted call at once, in the calling process."""

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001
            future.set_exception(exc)
        return future


class DaskBackend:
    """A Dask distributed cluster, by scheduler address (``tcp://host:8786``) or an existing client."""

    def __init__(self, address: str | None = None, client: Any = None) -> None:
        try:
            import distributed
        except ImportError:
            raise ConfigError("--dask-scheduler needs Dask distributed: pip install 'dask[distributed]' "
                              "(on this machine and on the workers)") from None
        self.distributed = distributed
        self.own_client = client is None
        try:
            self.client = client or distributed.Client(address, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise ConfigError(f"cannot connect to the Dask scheduler at {address} ({exc})") from None
        workers = self.client.scheduler_info().get("workers", {})
        self.workers = sum(w.get("nthreads", 1) for w in workers.values()) or 1
        self.description = f"dask {self.client.scheduler.address}, {len(workers)} worker(s), {self.workers} thread(s)"
        self.capacity = None  # everything at once: the Dask scheduler balances, by priority

    def submit(self, fn: Callable, *args: Any, priority: float = 0.0):
        return self.client.submit(fn, *args, pure=False, priority=priority, key=f"{fn.__name__}-{uuid.uuid4().hex}")

    def wait_any(self, pending: set) -> set:
        done, _ = self.distributed.wait(list(pending), return_when="FIRST_COMPLETED")
        return set(done)

    def close(self, cancel: bool = False) -> None:
        if self.own_client:
            self.client.close()
