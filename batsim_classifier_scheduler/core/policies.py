"""Queue orderings. A policy maps a job to a sort key; smaller keys run first.

Every key ends with the job's id, so ties are broken by the id compared as a string
(``w0!1056`` before ``w0!962``), as batsched breaks them; FCFS and LCFS compare submission
times first. ``estimate`` is p̃, the runtime the scheduler believes (see ``batsim_classifier_scheduler.knowledge``).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

from batsim_classifier_scheduler.core.job import Job
from batsim_classifier_scheduler.errors import ConfigError
from batsim_classifier_scheduler.registry import Made, Rules, alias, call, define, describe, make, register

KeyFunction = Callable[[Job, float, float], tuple]


@dataclass(frozen=True)
class Policy:
    """A named ordering. ``dynamic`` keys change with time and are recomputed at each decision."""

    name: str
    description: str
    key: KeyFunction
    dynamic: bool = False


def _fcfs(job: Job, estimate: float, now: float) -> tuple:
    return (job.subtime, job.id)


def _lcfs(job: Job, estimate: float, now: float) -> tuple:
    return (-job.subtime, job.id)


def _spf(job: Job, estimate: float, now: float) -> tuple:
    return (estimate, job.id)


def _saf(job: Job, estimate: float, now: float) -> tuple:
    return (estimate * job.res, job.id)


def _sqf(job: Job, estimate: float, now: float) -> tuple:
    return (job.res, job.id)


def _lqf(job: Job, estimate: float, now: float) -> tuple:
    return (-job.res, job.id)


def _lpf(job: Job, estimate: float, now: float) -> tuple:
    return (-estimate, job.id)


def _wfp(job: Job, estimate: float, now: float) -> tuple:
    wait = max(now - job.subtime, 0.0)
    return (-((wait / estimate) ** 3) * job.res, job.id)


# --- Rosa et al.'s orderings (learned/obtained scores; smallest score first) --------------
#
# p̃ = ``estimate`` (the current prediction), q = processors, r = submission time, w = wait.
# Logarithms are guarded: log2(q) is taken as at least 1 (q = 1 behaves as q = 2, no division
# by zero) and log10(r) as log10(max(r, 1)) (r = 0 gives 0).


def _log2q(job: Job) -> float:
    return max(math.log2(job.res), 1.0) if job.res > 0 else 1.0


def _log10r(job: Job) -> float:
    return math.log10(max(job.subtime, 1.0))


def _unicef(job: Job, estimate: float, now: float) -> tuple:
    wait = max(now - job.subtime, 0.0)
    return (-wait / (_log2q(job) * max(estimate, 1e-9)), job.id)


def _f2(job: Job, estimate: float, now: float) -> tuple:
    return (math.sqrt(max(estimate, 0.0)) * job.res + 2.56e4 * _log10r(job), job.id)


#: Lin's coefficients: score = θ0 + θp·p̃ + θq·q + θr·r.
LIN_THETA = {"1": 3.24e-2, "p": 1.15e-7, "q": 2.61e-5, "r": -1.57e-7}


def _lin(job: Job, estimate: float, now: float) -> tuple:
    t = LIN_THETA
    return (t["1"] + t["p"] * estimate + t["q"] * job.res + t["r"] * job.subtime, job.id)


_VARIABLES = ("p", "q", "r", "w")


def _parse_monomial(term: str) -> dict[str, int]:
    """``"p^2*q"`` -> {"p": 2, "q": 1}; ``"1"`` -> {}."""
    powers: dict[str, int] = {}
    if term.strip() in ("1", ""):
        return powers
    for factor in term.replace(" ", "").split("*"):
        var, _, exp = factor.partition("^")
        if var not in _VARIABLES:
            raise ConfigError(f"score term {term!r}: unknown variable {var!r}; known: {', '.join(_VARIABLES)}")
        try:
            powers[var] = powers.get(var, 0) + (int(exp) if exp else 1)
        except ValueError:
            raise ConfigError(f"score term {term!r}: bad exponent {exp!r}") from None
    return powers


def score_policy(theta: Any, name: str = "score") -> Policy:
    """A linear/polynomial score from θ: ``{"theta": {"1": c0, "p": c1, "q*p": c2, "p^2": c3, "w": c4,
    ...}}`` (or the mapping alone), as parsed from a θ file's JSON. Variables: p = p̃ (the current
    prediction), q = processors, r = submission time, w = wait (then the policy is dynamic).
    Smallest score first. ``name`` (``score:<path>``) names the policy and its errors."""
    theta = theta.get("theta", theta) if isinstance(theta, dict) else None
    if not isinstance(theta, dict) or not theta:
        raise ConfigError(f"{name}: expected a JSON object of coefficients")
    terms = []
    for term, coef in theta.items():
        if not isinstance(coef, (int, float)) or isinstance(coef, bool):
            raise ConfigError(f"{name}: coefficient of {term!r} is not a number")
        try:
            terms.append((float(coef), tuple(_parse_monomial(term).items())))
        except ConfigError as exc:
            raise ConfigError(f"{name}: {exc}") from None
    dynamic = any(var == "w" for _, powers in terms for var, _ in powers)

    def key(job: Job, estimate: float, now: float) -> tuple:
        values = {"p": estimate, "q": job.res, "r": job.subtime, "w": max(now - job.subtime, 0.0)}
        score = 0.0
        for coef, powers in terms:
            value = coef
            for var, exp in powers:
                value *= values[var] ** exp
            score += value
        return (score, job.id)

    return Policy(name, f"polynomial score of {name}", key, dynamic=dynamic)


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("fcfs", "first come, first served: submission time", _fcfs),
        Policy("spf", "smallest (estimated) processing time first", _spf),
        Policy("saf", "smallest area first: estimate x processors", _saf),
        Policy("sqf", "smallest number of processors first", _sqf),
        Policy("lpf", "largest (estimated) processing time first", _lpf),
        Policy("wfp", "WFP3: (wait / estimate)^3 x processors, largest first", _wfp, dynamic=True),
    )
}

#: The other orders of batsched. Kept out of :data:`POLICIES` (the paper's six, which sweeps take as
#: "all") but accepted everywhere a policy name is.
BATSCHED_POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("lcfs", "last come, first served: latest submission time first", _lcfs),
        Policy("lqf", "largest number of processors first", _lqf),
    )
}

#: Rosa et al.'s orderings. Kept out of :data:`POLICIES` (the paper's six, which sweeps take as
#: "all") but accepted everywhere a policy name is.
EXTRA_POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("unicef", "UNICEF: wait / (log2(q) x estimate), largest first", _unicef, dynamic=True),
        Policy("f2", "F2: sqrt(estimate) x q + 2.56e4 x log10(submit time), smallest first", _f2),
        Policy("lin", "Lin: 3.24e-2 + 1.15e-7 p + 2.61e-5 q - 1.57e-7 r, smallest first", _lin),
    )
}

#: batsched's ``-o/--queue_order`` names that mean the same thing as ours. In batsched 1.4.0 the two
#: slowdown orders sort by the current wait over a constant: the FCFS order.
BATSCHED_ALIASES = {"fcfs": "fcfs", "lcfs": "lcfs", "asc_walltime": "spf", "desc_walltime": "lpf",
                    "asc_size": "sqf", "desc_size": "lqf", "desc_slowdown": "fcfs", "desc_bounded_slowdown": "fcfs"}


def _theta_file(path: str) -> str:
    if not path:
        raise ValueError("name the θ file (score:FILE)")
    return path


def _check(spec: str, target: Any) -> None:
    if not (isinstance(target, Policy) or callable(target)):
        raise ConfigError(f"policy {spec!r}: not a queue order (a key function (job, estimate, now) -> tuple, a "
                          f"Policy, or a class making a key function); got {describe(target)}")


def _make(made: Made) -> Policy:
    """The queue order: a built-in's :class:`Policy`, a ``score:FILE`` policy of its θ (the file's parsed JSON), or
    a plug-in's: a Policy, a key function, or what a class (given its ``Options`` instance if any) makes."""
    target = made.target
    if target is score_policy:
        return score_policy(made.argument, made.name)
    if made.instance is not None:
        target = call("policy", made.name, target, made.instance)
    elif inspect.isclass(target):
        target = call("policy", made.name, target)
    if isinstance(target, Policy):
        return target
    if not callable(target):
        raise ConfigError(f"policy {made.name!r}: it made {describe(target)}, not a key function (job, estimate, now)")
    doc = (inspect.getdoc(target) or "").partition("\n")[0]
    return Policy(made.name, doc or f"the queue order of {made.name}", target,
                  dynamic=bool(getattr(target, "dynamic", False)))


define("policy", Rules(check=_check, make=_make, make_at_check=True))
for _policy in (*POLICIES.values(), *BATSCHED_POLICIES.values(), *EXTRA_POLICIES.values()):
    register("policy", _policy.name, _policy)
alias("policy", {name: policy for name, policy in BATSCHED_ALIASES.items() if name != policy})
register("policy", "score", score_policy, argument=_theta_file, metavar="FILE", bare=False, reads_file=True)


def get_policy(name: str, theta: Any = None) -> Policy:
    """The policy called ``name``; a ``score:FILE`` policy is built from ``theta``, its file's parsed JSON."""
    return make("policy", name, read=lambda path: theta)
