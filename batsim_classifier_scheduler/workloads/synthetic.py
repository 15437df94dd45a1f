"""A seeded synthetic workload with users, habits, and daily and weekly rhythms.

The model (inspired by Lublin & Feitelson 2003, with users added so that per-user
runtime prediction and classification have something to learn):

- **Users.** Each user has an activity weight (lognormal: a few heavy users, many light
  ones), one or more *applications*, an over-estimation factor ``f`` (``1 + lognormal``,
  median 2) and, with probability 1/4, only serial jobs.
- **Applications.** Each has a typical runtime (log10-normal around 10 minutes, so many
  short jobs and a long tail up to ``max_runtime``), a spread ``sigma`` (0.3 to 1.0 in
  log space) and a size: a power of two around the user's habit, sometimes not a power
  of two.
- **Sessions.** Jobs arrive in sessions: a user picks one of their applications and
  submits a geometric number of jobs (mean 4), about 90 s apart. Session starts follow
  a Poisson process whose rate follows an hourly profile (busy 9:00-18:00, quiet at
  night) and a weekly one (weekends at 40%). Time 0 is a Monday, 00:00.
- **Runtimes.** ``typical * lognormal(0, sigma)``; 8% of jobs crash within a minute.
  The non-crashed runtimes are then scaled so that the offered load (work / (nb_res x
  duration)) is about ``load``, and rounded to whole seconds in [1, max_runtime].
- **Requested times.** Per session, the user requests ``typical * e^(sigma/2) * f``, rounded
  up to a "round" duration (5 min, 10 min, 15 min, 30 min, 1 h, 2 h, ...), capped at
  ``max_runtime``. Jobs that run longer are killed at their request (runtime =
  walltime), as in real traces, so p ≤ p̃ always holds. With the defaults, about 5% of
  jobs reach their request and the median runtime / request is about 0.25 (SDSC-SP2:
  8% and 0.16; KTH-SP2: 2% and 0.41).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batsim_classifier_scheduler.errors import WorkloadError
from batsim_classifier_scheduler.util.values import MAX_MACHINES, MAX_SECONDS
from batsim_classifier_scheduler.workloads.batsim_json import delay_profile_names
from batsim_classifier_scheduler.workloads.model import Workload

DAY = 86_400
WEEK = 7 * DAY
#: Relative arrival rate for each hour of the day (0:00 to 23:00).
HOURLY = np.array([0.30, 0.22, 0.18, 0.15, 0.15, 0.18, 0.30, 0.55, 0.90, 1.20, 1.35, 1.40,
                   1.25, 1.35, 1.45, 1.40, 1.30, 1.10, 0.85, 0.70, 0.62, 0.55, 0.45, 0.38])
#: Relative arrival rate for each day of the week (Monday to Sunday).
WEEKLY = np.array([1.0, 1.0, 1.0, 1.0, 0.95, 0.45, 0.35])
#: The "round" durations users request, in seconds.
REQUEST_STEPS = np.array([5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480, 600, 720,
                          960, 1440, 2160, 2880, 4320, 5760, 10080]) * 60.0
CRASH_PROBABILITY = 0.08
MEAN_SESSION_JOBS = 4
MEAN_SESSION_GAP = 90.0
#: The most jobs one workload is generated with: 2**22 (4.2 million). A million take about 20 s and 1 GB of
#: memory (``generate --jobs 1000000``, most of it writing the JSON); a billion would take days and a terabyte.
MAX_JOBS = 2 ** 22
#: The highest offered load: above 1 the jobs ask for more work than the machine can do in the period, and the
#: queue grows until the submissions end.
MAX_LOAD = 1.0


def generate(n_jobs: int = 3000, weeks: float = 4, nb_res: int = 128, *, seed: int = 0,
             n_users: int | None = None, load: float = 0.7,
             max_runtime: float = 48 * 3600) -> Workload:
    """Generate a synthetic workload (see the module docstring for the model).

    Parameters
    ----------
    n_jobs : number of jobs, at most :data:`MAX_JOBS`.
    weeks : duration of the submission period, in weeks.
    nb_res : machine size (processors).
    seed : seed of the ``numpy.random.Generator``; the same seed gives the same workload.
    n_users : number of users (default: about the square root of ``n_jobs``).
    load : offered load, total work / (nb_res x duration), at most :data:`MAX_LOAD`.
    max_runtime : the machine's runtime limit (largest request), in seconds.
    """
    checks = {"n_jobs": _whole(n_jobs) and 0 < n_jobs <= MAX_JOBS,
              "nb_res": _whole(nb_res) and 0 < nb_res <= MAX_MACHINES,
              "seed": _whole(seed) and seed >= 0, "n_users": n_users is None or _whole(n_users) and n_users > 0,
              "weeks": 0 < weeks * WEEK <= MAX_SECONDS, "load": 0 < load <= MAX_LOAD,
              "max_runtime": 600 <= max_runtime <= MAX_SECONDS}  # NaN fails every test
    wrong = [name for name, right in checks.items() if not right]
    if wrong:
        values = {"n_jobs": n_jobs, "nb_res": nb_res, "seed": seed, "n_users": n_users, "weeks": weeks, "load": load,
                  "max_runtime": max_runtime}
        raise WorkloadError(f"generate: invalid {', '.join(f'{name}={values[name]!r}' for name in wrong)}: n_jobs "
                            f"(up to {MAX_JOBS}), nb_res (up to {MAX_MACHINES}) and n_users are positive integers, the "
                            f"seed a natural number, weeks positive and finite, load in (0, {MAX_LOAD:g}], max_runtime "
                            f"at least 600 s (the period and max_runtime at most {MAX_SECONDS:.0f} s)")
    rng = np.random.default_rng(seed)
    horizon = weeks * WEEK
    n_users = n_users or int(np.clip(round(np.sqrt(n_jobs)), 4, 200))

    users = _users(rng, n_users, nb_res)
    apps = _applications(rng, users, nb_res, max_runtime)
    sessions = _sessions(rng, users, apps, n_jobs, horizon)
    jobs = _jobs(rng, apps, sessions, n_jobs)

    crashed = rng.random(n_jobs) < CRASH_PROBABILITY
    runtime = np.where(crashed, rng.uniform(1, 60, n_jobs), jobs["runtime"])
    runtime, scale = _scale_to_load(runtime, crashed, jobs["res"], load * nb_res * horizon, max_runtime)
    request = _requests(apps["typical"][sessions["app"]] * scale, apps["sigma"][sessions["app"]],
                        users["factor"][apps["user"][sessions["app"]]], rng, max_runtime)
    walltime = request[jobs["session"]]
    runtime = np.minimum(runtime, walltime)

    order = np.argsort(jobs["subtime"], kind="stable")
    table = pd.DataFrame({
        "id": np.arange(1, n_jobs + 1).astype(str),
        "subtime": np.floor(jobs["subtime"][order]),
        "res": jobs["res"][order],
        "walltime": walltime[order],
        "runtime": runtime[order],
    })
    table["profile"] = delay_profile_names(table["runtime"])
    table["user"] = apps["user"][jobs["app"][order]] + 1
    table["executable"] = jobs["app"][order] + 1
    header = {"Generator": "batsim_classifier_scheduler.workloads.synthetic", "Seed": seed, "MaxProcs": nb_res,
              "Weeks": weeks, "Load": load, "Users": n_users}
    source = (f"synthetic workload: --jobs {n_jobs} --weeks {weeks:g} --nb-res {nb_res} "
              f"--seed {seed} --load {load:g} --users {n_users}")
    return Workload(jobs=table, nb_res=nb_res, name="w0", source=source, header=header)


def _whole(value: object) -> bool:
    """An integer (a numpy one too), not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def arrival_rate(t: np.ndarray) -> np.ndarray:
    """Relative arrival rate at times ``t`` (seconds since Monday 00:00)."""
    t = np.asarray(t, dtype=float)
    hour = ((t % DAY) // 3600).astype(int)
    day = ((t % WEEK) // DAY).astype(int)
    return HOURLY[hour] * WEEKLY[day]


def _users(rng: np.random.Generator, n: int, nb_res: int) -> dict[str, np.ndarray]:
    max_log2 = np.log2(nb_res)
    return {
        "activity": rng.lognormal(0.0, 1.2, n),
        "factor": 1 + rng.lognormal(0.0, 0.9, n),
        "serial": rng.random(n) < 0.25,
        "size_log2": rng.uniform(0, max(max_log2 - 2, 0), n),
        "apps": 1 + rng.poisson(1.0, n),
    }


def _applications(rng: np.random.Generator, users: dict, nb_res: int,
                  max_runtime: float) -> dict[str, np.ndarray]:
    user = np.repeat(np.arange(len(users["apps"])), users["apps"])
    n = len(user)
    typical = 10 ** np.clip(rng.normal(np.log10(600), 0.9, n), 1.3, np.log10(max_runtime) - 0.3)
    log2 = np.clip(np.round(rng.normal(users["size_log2"][user], 1.0)), 0, np.floor(np.log2(nb_res)))
    size = 2 ** log2
    odd = (rng.random(n) < 0.25) & (log2 > 0)
    size = np.where(odd, rng.integers(size.astype(np.int64) // 2 + 1, size.astype(np.int64) + 1), size)
    size = np.where(users["serial"][user], 1, size).astype(np.int64)
    return {"user": user, "typical": typical, "sigma": rng.uniform(0.3, 1.0, n), "size": size}


def _sessions(rng: np.random.Generator, users: dict, apps: dict, n_jobs: int,
              horizon: float) -> dict[str, np.ndarray]:
    sizes = rng.geometric(1 / MEAN_SESSION_JOBS, n_jobs)
    sizes = sizes[: np.searchsorted(np.cumsum(sizes), n_jobs) + 1]
    sizes[-1] -= sizes.sum() - n_jobs
    starts = _poisson_arrivals(rng, len(sizes), horizon)
    user = rng.choice(len(users["activity"]), len(sizes), p=users["activity"] / users["activity"].sum())
    first_app = np.concatenate(([0], np.cumsum(users["apps"])[:-1]))
    app = first_app[user] + rng.integers(0, users["apps"][user])
    return {"size": sizes, "start": starts, "app": app}


def _poisson_arrivals(rng: np.random.Generator, n: int, horizon: float) -> np.ndarray:
    """``n`` sorted times on [0, horizon) with density proportional to :func:`arrival_rate`."""
    peak = HOURLY.max() * WEEKLY.max()
    accepted: list[np.ndarray] = []
    count = 0
    while count < n:
        candidates = rng.uniform(0, horizon, 2 * n)
        keep = candidates[rng.random(2 * n) * peak < arrival_rate(candidates)]
        accepted.append(keep)
        count += len(keep)
    return np.sort(np.concatenate(accepted)[:n])


def _jobs(rng: np.random.Generator, apps: dict, sessions: dict, n_jobs: int) -> dict[str, np.ndarray]:
    session = np.repeat(np.arange(len(sessions["size"])), sessions["size"])
    app = sessions["app"][session]
    first = np.concatenate(([0], np.cumsum(sessions["size"])[:-1]))
    gaps = rng.exponential(MEAN_SESSION_GAP, n_jobs)
    gaps[first] = 0.0
    offset = np.cumsum(gaps) - np.repeat(np.cumsum(gaps)[first], sessions["size"])
    runtime = apps["typical"][app] * rng.lognormal(0.0, apps["sigma"][app])
    return {"session": session, "app": app, "subtime": sessions["start"][session] + offset,
            "res": apps["size"][app], "runtime": runtime}


def _scale_to_load(runtime: np.ndarray, crashed: np.ndarray, res: np.ndarray, target_work: float,
                   max_runtime: float) -> tuple[np.ndarray, float]:
    """Scale the non-crashed runtimes so that sum(res x runtime) is about ``target_work``."""
    scale = 1.0
    scaled = runtime
    for _ in range(4):  # clipping at max_runtime loses work: correct a few times
        fixed_work = (res * scaled)[crashed].sum()
        free_work = (res * scaled)[~crashed].sum()
        step = max(target_work - fixed_work, 0.0) / free_work if free_work else 1.0
        scale *= step
        scaled = np.where(crashed, runtime, np.clip(runtime * scale, 1, max_runtime))
    return np.maximum(np.round(scaled), 1.0), scale


def _requests(typical: np.ndarray, sigma: np.ndarray, factor: np.ndarray,
              rng: np.random.Generator, max_runtime: float) -> np.ndarray:
    """Per-session requests: over-estimated, rounded up to a round duration."""
    wanted = typical * np.exp(sigma / 2) * factor * rng.lognormal(0.0, 0.2, len(typical))
    steps = np.append(REQUEST_STEPS[REQUEST_STEPS < max_runtime], max_runtime)
    return steps[np.minimum(np.searchsorted(steps, wanted), len(steps) - 1)]


def repeating_users(n_jobs: int = 2000, nb_res: int = 64, *, erratic: float = 0.0, n_users: int = 30,
                    load: float = 0.8, seed: int = 0) -> Workload:
    """Users whose runtimes repeat exactly, and a share ``erratic`` of users whose runtimes do not:
    a workload on which per-user-history predictors (``ave2``, ``ruh``) behave as known by construction.

    - Each user submits jobs of one size (a power of two up to half the machine) and one requested
      time p̃: the user's typical runtime (log-uniform between 1 min and 4 h) times an
      over-estimation factor (2 to 10), rounded up to a round duration (``REQUEST_STEPS``).
    - A *regular* user's jobs all run exactly the typical runtime: once one of them has terminated,
      ``ave2`` predicts the user's next jobs exactly, and none of them outlives its prediction.
    - An *erratic* user's jobs each run a fresh time, log-uniform between 10 s and p̃: history tells
      little, and ``ave2`` under-predicts about half of them. Users 1 to ``round(erratic * n_users)``
      are the erratic ones.
    - Jobs arrive with the daily and weekly rhythm of :func:`generate`, over a period that makes the
      offered load (work / (nb_res x duration)) ``load``; each job's user is drawn uniformly.
    """
    if n_jobs <= 0 or nb_res < 2 or n_users <= 0 or load <= 0 or not 0 <= erratic <= 1:
        raise WorkloadError("repeating_users: n_jobs, n_users and load must be positive, nb_res at least 2 "
                            "and erratic a share in [0, 1]")
    rng = np.random.default_rng(seed)
    typical = np.round(np.exp(rng.uniform(np.log(60), np.log(4 * 3600), n_users)))
    wanted = typical * rng.uniform(2, 10, n_users)
    request = REQUEST_STEPS[np.minimum(np.searchsorted(REQUEST_STEPS, wanted), len(REQUEST_STEPS) - 1)]
    size = 2 ** rng.integers(0, int(np.log2(nb_res)), n_users)
    erratic_user = np.arange(n_users) < round(erratic * n_users)

    user = rng.integers(0, n_users, n_jobs)
    fresh = np.round(np.exp(rng.uniform(np.log(10), np.log(request[user]))))
    runtime = np.where(erratic_user[user], fresh, typical[user])
    horizon = float((size[user] * runtime).sum()) / (load * nb_res)
    table = pd.DataFrame({
        "id": np.arange(1, n_jobs + 1).astype(str),
        "subtime": np.floor(_poisson_arrivals(rng, n_jobs, horizon)),
        "res": size[user],
        "walltime": request[user],
        "runtime": runtime,
    })
    table["profile"] = delay_profile_names(table["runtime"])
    table["user"] = user + 1
    source = (f"repeating-users workload: {n_jobs} jobs, {nb_res} processors, {n_users} users "
              f"({erratic:.0%} erratic), load {load:g}, seed {seed}")
    return Workload(jobs=table, nb_res=nb_res, name="w0", source=source,
                    header={"Generator": "batsim_classifier_scheduler.workloads.synthetic.repeating_users", "Seed": seed})
