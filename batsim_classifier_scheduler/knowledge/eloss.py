"""Gaussier et al.'s online runtime regression (SC'15): E-Loss trained with NAG.

The paper gives no code and no hyper-parameters; everything below follows the authors' public
simulator (``predictsim``: ``predictor_sgdlinear.py``, ``valopt/algos/nag.py``, the experiment
configs), read for facts, and is documented in ``docs/related-work.md``.

**Features** (computed once, at submission; seconds and counts, not rescaled, since NAG is
scale-invariant), for a job of user u with request p̃ and q processors:

===  =====================================================================================
 0   1 (bias)
1-3  u's last three runtimes (most recent first), each capped at p̃; p̃ when missing
 4   p̃
 5   mean of features 1-2
 6   mean of features 1-3
 7   mean runtime of u's terminated jobs (0 without any)
 8   time since u's last termination (0 without any)
 9   q / mean processors of u's terminated jobs (0 without any)
10   processors of u's running jobs
11   summed elapsed time of u's running jobs
12   number of u's running jobs
13   longest elapsed time of u's running jobs
14   cos, sin of the time of day (submission time modulo 86,400 s)
16   cos, sin of the time of week (modulo 604,800 s)
18   q
===  =====================================================================================

then the pairwise products of features 1-16 and the squares of features 1-18 (157 in all).
predictsim's features 1-3 hold, through a slip, the time since the earlier jobs' *submission*;
we use their runtimes, as the paper describes.

**Model and loss.** f(x) = w·x, in seconds; the prediction is |f(x)| (clamped to [1 s, p̃] by
:class:`~batsim_classifier_scheduler.knowledge.predictors.Predictions`). At each termination (runtime p), one
step on the E-Loss weighted by γ = 1 + ln(q·p): γ·(f − p)² when over-predicting (f > p),
γ·(p − f) when under-predicting, plus the ℓ2 term λ/2·|w|² (its gradient λ·w is not
weighted by γ).

**Optimiser.** NAG is the *Normalized Adaptive Gradient* of Ross, Mineiro and Langford
("Normalized Online Learning", UAI 2013), not Nesterov's method: per-feature scales s_i (the
largest |x_i| seen; weights are shrunk by s_i/|x_i| when a larger value arrives), the running
normaliser N = Σ_t Σ_i x_i²/s_i², AdaGrad sums G_i of squared gradients, and the step
w_i −= η·√(t/N)·g_i / (s_i·√G_i). Weights start at 0, so the first predictions are 1 s.

Defaults: λ = 4·10⁹ and γ = 1 + ln(q·p), as predictsim; η = 500 (predictsim runs η = 5000 with
a slightly different step), chosen on KTH-SP2 and SDSC-SP2 (``docs/related-work.md`` has the grid).
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from typing import Any

import numpy as np

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.knowledge.predictors import Predictor, user_of

DAY = 86400.0
WEEK = 7 * DAY
NB_BASE = 19
_PAIRS = np.triu_indices(16, k=1)  # pairs of features 1-16 (offset by one below)


class _UserHistory:
    """What the features need to know of one user."""

    __slots__ = ("last", "terminated", "runtime_sum", "res_sum", "last_end", "running")

    def __init__(self) -> None:
        self.last: deque = deque(maxlen=3)  # runtimes, most recent first
        self.terminated = 0
        self.runtime_sum = 0.0
        self.res_sum = 0.0
        self.last_end: float | None = None
        self.running: dict[str, tuple[float, int]] = {}  # job id -> (start, processors)


def expand(base: np.ndarray) -> np.ndarray:
    """The base vector, the pairwise products of features 1-16 and the squares of features 1-18."""
    head = base[1:17]
    return np.concatenate((base, head[_PAIRS[0]] * head[_PAIRS[1]], base[1:19] ** 2))


class NormalizedAdaptiveGradient:
    """Ross, Mineiro and Langford's NAG for a linear model ``w·x`` (see the module doc)."""

    def __init__(self, size: int, eta: float) -> None:
        self.eta = eta
        self.w = np.zeros(size)
        self.scale = np.zeros(size)
        self.squared_gradients = np.zeros(size)
        self.normaliser = 0.0
        self.steps = 0

    def predict(self, x: np.ndarray) -> float:
        return float(self.w @ x)

    def rescale(self, x: np.ndarray) -> None:
        """Widen the per-feature scales to cover ``x``, shrinking the weights to match."""
        magnitude = np.abs(x)
        grown = magnitude > self.scale
        if grown.any():
            seen = grown & (self.scale > 0)
            self.w[seen] *= (self.scale[seen] / magnitude[seen]) ** 2
            self.scale[grown] = magnitude[grown]
        active = self.scale > 0
        self.normaliser += float(((x[active] / self.scale[active]) ** 2).sum())

    def step(self, gradient: np.ndarray) -> None:
        self.steps += 1
        self.squared_gradients += gradient ** 2
        moving = (self.scale > 0) & (self.squared_gradients > 0)
        factor = self.eta * math.sqrt(self.steps / self.normaliser) if self.normaliser > 0 else 0.0
        self.w[moving] -= factor * gradient[moving] / (self.scale[moving] * np.sqrt(self.squared_gradients[moving]))


class ELossRegression(Predictor):
    """The ``eloss`` predictor (see the module doc). Options: ``eta``, ``l2`` (λ), ``over`` and
    ``under`` (the coefficients of the two branches of the loss)."""

    name = "eloss"

    def __init__(self, eta: float = 500.0, l2: float = 4e9, over: float = 1.0, under: float = 1.0) -> None:
        for option, value in (("eta", eta), ("over", over), ("under", under)):
            if not value > 0:
                raise ConfigError(f"eloss: {option} must be positive, got {value!r}")
        if not l2 >= 0:
            raise ConfigError(f"eloss: l2 must be non-negative, got {l2!r}")
        self.l2, self.over, self.under = float(l2), float(over), float(under)
        self.optimiser = NormalizedAdaptiveGradient(len(expand(np.zeros(NB_BASE))), float(eta))
        self.users: dict[Any, _UserHistory] = defaultdict(_UserHistory)
        self.features: dict[str, np.ndarray] = {}  # job id -> x, from submission to termination

    def base_features(self, job: Job, now: float) -> np.ndarray:
        user = self.users[user_of(job)]
        request = float(job.walltime)
        last = [min(runtime, request) for runtime in user.last] + [request] * (3 - len(user.last))
        running = [(now - start, res) for start, res in user.running.values()]
        day, week = 2 * math.pi * (job.subtime % DAY) / DAY, 2 * math.pi * (job.subtime % WEEK) / WEEK
        return np.array([
            1.0, *last, request, (last[0] + last[1]) / 2, sum(last) / 3,
            user.runtime_sum / user.terminated if user.terminated else 0.0,
            now - user.last_end if user.last_end is not None else 0.0,
            job.res / (user.res_sum / user.terminated) if user.terminated else 0.0,
            float(sum(res for _, res in running)), float(sum(elapsed for elapsed, _ in running)),
            float(len(running)), float(max((elapsed for elapsed, _ in running), default=0.0)),
            math.cos(day), math.sin(day), math.cos(week), math.sin(week), float(job.res),
        ])

    def predict(self, job: Job, now: float) -> float:
        x = expand(self.base_features(job, now))
        self.features[job.id] = x
        return abs(self.optimiser.predict(x))

    def on_start(self, job: Job, now: float) -> None:
        self.users[user_of(job)].running[job.id] = (now, job.res)

    def on_end(self, job: Job, runtime: float, now: float) -> None:
        user = self.users[user_of(job)]
        user.running.pop(job.id, None)
        x = self.features.pop(job.id, None)
        if x is not None:
            self._learn(x, runtime, job.res)
        user.last.appendleft(runtime)
        user.terminated += 1
        user.runtime_sum += runtime
        user.res_sum += job.res
        user.last_end = now

    def _learn(self, x: np.ndarray, runtime: float, res: int) -> None:
        optimiser = self.optimiser
        optimiser.rescale(x)
        error = optimiser.predict(x) - runtime
        weight = 1.0 + math.log(max(res * runtime, 1.0))
        slope = weight * (2 * self.over * error if error > 0 else -self.under if error < 0 else 0.0)
        optimiser.step(slope * x + self.l2 * optimiser.w)
