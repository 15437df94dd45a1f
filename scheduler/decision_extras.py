"""What the decision core does beside its scheduling algorithm: the classifier's siblings, promotions out of Q, the
safeguard's kills, runtime predictions and their deadlines, the end of dynamic registrations.

:class:`DecisionExtras` is a base of :class:`~scheduler.decision.DecisionCore`, which holds the state these read
(its config, jobs and their states, the algorithm, the safeguard, the predictions...) and calls them from
:meth:`~scheduler.decision.DecisionCore.decide` only when one of these parts is there.
"""

from __future__ import annotations

import heapq
import math

from scheduler.core.events import Decision, RegistrationFinished, SetMetadata
from scheduler.core.job import Job
from scheduler.core.overdue import OVERDUE_RANK_SET, OVERDUE_RANKS
from scheduler.knowledge.choices import JobClass
from scheduler.variants import HISTORY_GATES

#: Lifecycle states of a job in :attr:`DecisionCore.states <scheduler.decision.DecisionCore.states>`.
QUEUED, RUNNING, COMPLETED, REJECTED, KILLED = "queued", "running", "completed", "rejected", "killed"


def sibling_key(job: Job) -> tuple:
    """What makes jobs siblings: their user, processors and requested time."""
    return (job.extras.get("user"), job.res, job.walltime)


#: The metadata a classified job is tagged with, by class.
CLASS_METADATA = {job_class: f"class={job_class.value}" for job_class in JobClass}


class DecisionExtras:
    """The parts beside the algorithm, for :class:`~scheduler.decision.DecisionCore` (see the module)."""

    def _before_scheduling(self, now: float, decisions: list[Decision]) -> bool:
        """What the parts beside the algorithm do before it schedules (promotions, the safeguard's deadlines and
        kills, the predictions' deadline misses); whether the algorithm must replan."""
        self.alarms.passed(now)
        replan = self._promote(now) if self._promotions else False
        if self.admission is not None and self.config.readmit == "waiting":  # HOOK (issue 48): trials granted later
            replan |= self._readmit(now, decisions)
        if self.overdue is not None:
            replan |= self._promote_overdue(now)
        if self.safeguard is not None:
            decisions.extend(self.safeguard.due(now, lambda job_id: self.states[job_id] == RUNNING))
            if self.admission is not None and self.safeguard.overtime:  # HOOK (issue 48): cover, kill, settle
                replan |= self._limited_kills(now, decisions)
            elif self.config.kill_on in ("blocking", "patient") and self.safeguard.overtime:
                replan |= self._kill_blocking(now, decisions)
        if self.predictions is not None:
            self._deadline_misses(now, decisions)
            replan |= self._replan
            self._replan = False
        return replan

    def _started(self, job: Job, now: float, decisions: list[Decision]) -> None:
        """What the parts beside the algorithm do when a job starts (after its EXECUTE_JOB)."""
        job_id = job.id
        self.starts[job_id] = now
        self._free -= job.res
        if self.overdue is not None and job_id not in self.origin:
            self.overdue.started(now - job.subtime, job_id)
        if job_id in self.small_waiting:
            self.small_waiting.discard(job_id)
            if self._siblings:
                self._siblings.get(sibling_key(job), set()).discard(job_id)
        if self.config.running_siblings == "large" and "user" in job.extras:
            self._running_siblings.setdefault(sibling_key(job), {})[job_id] = now
        if self.safeguard is not None and job_id in self.small:
            decisions.extend(self.safeguard.watch(job_id, now + self.small[job_id], now, job.res))
        if self.predictions is not None:
            changes = self.predictions.start(job, now)
            self._watch_prediction(job_id, now, decisions)
            self._apply_prediction_changes(changes, now, decisions)

    def _after_scheduling(self, now: float, decisions: list[Decision]) -> None:
        """What the parts beside the algorithm do once it has scheduled (kills that make room, the end of
        registrations)."""
        if self.config.kill_on in ("demand", "patient") and self.safeguard.overtime:
            self._make_room(now, decisions)
        if self.overdue is not None and self.overdue.next_due() is not None:
            decisions.extend(self.alarms.at(self.overdue.next_due(), now))
        if self.dynamic_jobs and not self.registration_finished and self._registration_over():
            self.registration_finished = True
            decisions.append(RegistrationFinished())

    # --- the classifier's siblings and promotions ---------------------------------

    def _sibling_ran_long(self, job: Job, now: float) -> bool:
        """``running_siblings`` large: whether a running job of the same user with the same request (processors
        and p̃) has run for the divider already (what is seen now, not its runtime)."""
        if self.config.running_siblings != "large" or "user" not in job.extras:
            return False
        divider = self.classifier.divider_at(now)
        return any(now - start >= divider for start in self._running_siblings.get(sibling_key(job), {}).values())

    def _promote(self, now: float) -> bool:
        """``promote_after``: the jobs of Q that have waited that many times their request since their submission
        move ahead of it, with the uncertain jobs (the safeguard's retries keep the original's submission). Whether
        any did."""
        promoted = False
        while self._promotions and self._promotions[0][0] <= now:
            _, job_id = heapq.heappop(self._promotions)
            job = self.jobs[job_id]
            queue = self.algorithm.queue
            if self.states[job_id] == QUEUED and queue.rank(job) == JobClass.LARGE.rank:
                moved = [job]
                if self.config.promote_scope != "job":  # the jobs of Q before it in its order: all, or the first
                    in_q = [other for other in queue.ordered(now) if queue.rank(other) == JobClass.LARGE.rank]
                    ahead = in_q[:in_q.index(job)]
                    moved += ahead if self.config.promote_scope == "ahead" else ahead[:1]
                for other in moved:
                    self.algorithm.requeue(other, self._estimate(other), JobClass.UNCERTAIN.rank, now)
                promoted = True
        return promoted

    def _promote_overdue(self, now: float) -> bool:
        """``promote_overdue``: the watched jobs whose total wait reached the longest first-attempt wait so far move
        ahead of every queue (or of the uncertain jobs and Q: ``overdue_ahead_of``), oldest first
        (:mod:`scheduler.core.overdue`). Whether any did."""
        planned = None
        if self.config.promote_overdue == "killed-planned":
            def planned(job_id: str) -> float:
                job = self.jobs[job_id]
                return self.algorithm.earliest_start(job.res, self._estimate(job), now)
        waiting = lambda job_id: self.states[job_id] == QUEUED  # noqa: E731
        overdue = self.overdue.due(now, waiting, planned)
        for job_id in overdue:
            self.due_since[job_id] = now
        if self.config.promote_overdue == "killed-one":
            overdue = self.overdue.one_at_a_time(overdue, lambda job_id: self.jobs[job_id].subtime, waiting)
        for job_id in overdue:
            job = self.jobs[job_id]
            self.promoted[job_id] = now
            self.algorithm.requeue(job, self._estimate(job), OVERDUE_RANKS[self.config.overdue_ahead_of], now)
        return bool(overdue)

    def _trial_pays(self, job: Job, now: float) -> bool:
        """Whether the uncertain ``job`` gets a trial: not while the kill budget is spent (a failed trial could not
        be killed); then by ``trial_gate``. machine-share: whether the forest's P(small) for it is at least the share
        of the machine it asks (a failed trial holds that share; a classifier without probabilities tries every job).
        user-history, request-history, user-pause: unless the last ``trial_history`` uncertain jobs of its user (with
        its request) all failed their trial (a job without a user is tried)."""
        if self.kill_budget is not None and not self.kill_budget.allows(now):
            return False
        if self.config.trial_gate == "none":
            return True
        if self.trial_history is not None:
            return "user" not in job.extras or not self.trial_history.failing(self._history_key(job))
        p_small = getattr(self.classifier, "p_small", None)
        return p_small is None or not p_small(job.id) < job.res / self.nb_machines

    def _history_key(self, job: Job) -> tuple:
        """Whose trials ``job``'s is judged with: its user's (user-history, user-pause), or its user's with its
        request (request-history)."""
        return sibling_key(job) if HISTORY_GATES[self.config.trial_gate] == "request" else (job.extras.get("user"),)

    # --- issue 48: the limits' admission (scheduler.core.admission) -----------------

    def _admitted(self, job: Job, job_class: JobClass, now: float, decisions: list[Decision]) -> JobClass:
        """HOOK (issue 48): the class of the watched ``job`` (small or uncertain): its own if the admission grants it a
        trial of the length it would have (fixed now), else large (Q, never killed). limit_order p-small: refused, it
        may take the place of a trial not started yet whose P(small) is lower (that one is withdrawn: large); value:
        whose P(small) / (processors x trial length) is lower."""
        length = self._trial_length(job, job_class, now)
        ordered = self.config.limit_order != "arrival" and hasattr(self.classifier, "p_small")
        p_small = self.classifier.p_small(job.id) if ordered else None
        if ordered and self.config.limit_order == "value":  # its chance to pass per processor-second it risks
            p_small = p_small / (job.res * length) if length > 0 else math.inf
        if self.admission.grant(job.id, job.res, length):
            if ordered:
                self.admission.track(job.id, p_small)
            return job_class
        if ordered:
            withdrawn = self.admission.displace(job.id, job.res, length, p_small, self.small_waiting.__contains__)
            if withdrawn is not None:
                self._withdraw(withdrawn, now, decisions)
                self.admission.track(job.id, p_small)
                return job_class
        if self.config.readmit == "waiting":
            self.admission.defer(job.id, p_small if ordered else -job.subtime, job_class)
        return JobClass.LARGE

    def _deferred_waiting(self) -> bool:
        """readmit waiting: whether a job refused a trial still waits in Q (it may get one)."""
        return self.admission.next_deferred(self._waiting_large) is not None

    def _waiting_large(self, job_id: str) -> bool:
        return self.states[job_id] == QUEUED and self.algorithm.queue.rank(self.jobs[job_id]) == JobClass.LARGE.rank

    def _readmit(self, now: float, decisions: list[Decision]) -> bool:
        """HOOK (issue 48, readmit waiting): the jobs refused a trial that still wait in Q, best first (limit_order),
        get one while the limits allow it (of the length they would have now); whether any did."""
        readmitted = False
        while (deferred := self.admission.next_deferred(self._waiting_large)) is not None:
            job_id, job_class = deferred
            job = self.jobs[job_id]
            length = self._trial_length(job, job_class, now)
            if not self.admission.readmit(job_id, job.res, length):
                break
            if self.config.limit_order != "arrival" and hasattr(self.classifier, "p_small"):
                p_small = self.classifier.p_small(job_id)
                self.admission.track(job_id, p_small / (job.res * length) if self.config.limit_order == "value"
                                     else p_small)
            self.small[job_id] = length
            self.small_waiting.add(job_id)
            rank = job_class.rank
            if job_class is JobClass.UNCERTAIN and self.config.uncertain_queue == "with-large":
                rank = JobClass.LARGE.rank
            self.algorithm.requeue(job, self._estimate(job), rank, now)
            decisions.append(SetMetadata(job_id, CLASS_METADATA[job_class]))
            readmitted = True
        return readmitted

    def _withdraw(self, job_id: str, now: float, decisions: list[Decision]) -> None:
        """limit_order p-small: the waiting watched ``job_id`` gives its trial up: it waits in Q as a large job."""
        job = self.jobs[job_id]
        self.small_waiting.discard(job_id)
        del self.small[job_id]
        self.algorithm.requeue(job, self._estimate(job), JobClass.LARGE.rank, now)
        if self.config.promote_after:
            heapq.heappush(self._promotions, (job.subtime + self.config.promote_after * self.knowledge.estimate(job),
                                              job_id))
        decisions.append(SetMetadata(job_id, CLASS_METADATA[JobClass.LARGE]))

    def _limited_kills(self, now: float, decisions: list[Decision]) -> bool:
        """HOOK (issue 48): the jobs past their trial that may still be killed now are covered by the limits up to the
        time they have run, or released (they run on as large jobs, planned with their request, never killed); then
        the kills of ``kill_on`` blocking or patient; the jobs spared then can no longer be killed: their trial passed.
        Whether the plan changed."""
        replan = False
        for job_id in list(self.safeguard.overtime):
            job = self.jobs[job_id]
            if not self.admission.cover(job_id, job.res * (now - self.starts[job_id])):
                self.safeguard.spare(job_id)
                self.algorithm.expect_end(job_id, self.starts[job_id] + self.knowledge.estimate(job))
                replan = True
        overtime = list(self.safeguard.overtime)
        if self.config.kill_on in ("blocking", "patient") and overtime:
            replan |= self._kill_blocking(now, decisions)
            for job_id in overtime:
                if job_id not in self.safeguard.overtime and job_id not in self.safeguard.killing:
                    self.admission.passed(job_id)
        return replan

    def _admission_ended(self, job_id: str, killed: bool, killed_by_us: bool, now: float) -> None:
        """HOOK (issue 48): the attempt ``job_id`` ended: its work is useful (completed), wasted (killed by the
        safeguard) or neither (killed by someone else); its trial, if open, resolves."""
        work = self.jobs[job_id].res * (now - self.starts[job_id])
        if not killed or killed_by_us:
            self.admission.ended(job_id, work, killed)
        else:
            self.admission.passed(job_id)

    # --- the safeguard's kills ------------------------------------------------------

    @property
    def _retry_rank(self) -> int:
        """The queue a job the safeguard killed waits in again."""
        return JobClass.LARGE.rank if self.config.retry_queue == "large" else JobClass.UNCERTAIN.rank

    def _kill_rank(self, head: Job) -> int:
        """The queue a job past its trial is ranked in when deciding whether the first waiting job, ``head``, goes
        before it: the one it would wait in again (``kill_for`` requeued); the uncertain jobs' (``policy``: only
        small-classified jobs and uncertain ones before it in the policy's order go before it); or the head's own,
        unless the head is classified small (``order``: the head goes before it if classified small or before it
        in the policy's order)."""
        if self.config.kill_for == "requeued":
            return self._retry_rank
        if self.config.kill_for == "policy":
            return JobClass.UNCERTAIN.rank
        return max(self.algorithm.queue.rank(head), JobClass.UNCERTAIN.rank)

    def _kill_key(self, head: Job) -> float | None:
        """The estimate the first waiting job is ordered by against a job past its trial: ``kill_for`` order compares
        their requests (a watched head's estimate is bounded by its trial, not the job's); None: the queue's."""
        return self.knowledge.estimate(head) if self.config.kill_for == "order" else None

    def _make_room(self, now: float, decisions: list[Decision]) -> None:
        """``kill_on`` demand or patient: kill the overtime jobs whose processors the first waiting job needs to start
        now, among those it outranks (requeued, they would wait behind it)."""
        queue = self.algorithm.queue
        head = queue.head(now)
        if head is None:
            return
        rank, key = self._kill_rank(head), self._kill_key(head)
        among = [job_id for job_id in self.safeguard.overtime  # only those that head goes before
                 if queue.outranks(head, self.jobs[job_id], rank, self.knowledge.estimate(self.jobs[job_id]), now, key)]
        decisions.extend(self.safeguard.needed(head.res, self._free, among))

    def _kill_blocking(self, now: float, decisions: list[Decision]) -> bool:
        """``kill_on`` blocking or patient: each job past its deadline that the first waiting job goes before
        (``kill_for``) and would delay, planned to run on to its request, by more than its slack, is in its way:
        blocking kills it, patient leaves it overtime (:meth:`_make_room` kills it once that job could start now).
        The others run on, planned with their request, as EASY would have backfilled them. Whether one did (the
        plan changed)."""
        spared, victims = False, []
        queue = self.algorithm.queue
        head = queue.head(now)
        if head is not None:
            rank, key, head_slack = self._kill_rank(head), self._kill_key(head), self._head_slack(head)
            within = self._spare_within(head)
        for job_id in list(self.safeguard.overtime):
            job = self.jobs[job_id]
            estimate = self.knowledge.estimate(job)
            end = self.starts[job_id] + estimate
            if (head is not None and queue.outranks(head, job, rank, estimate, now, key)
                    and self.algorithm.delays_head(job_id, end, now, self._slack(job_id), head_slack, **within)
                    and self._budget_allows(job, now)):
                if self.config.kill_on == "blocking":
                    victims.append(job_id)  # patient: it runs on, overtime, until that job could start now
            else:
                self.safeguard.spare(job_id)
                self.algorithm.expect_end(job_id, end)
                spared = True
        decisions.extend(self.safeguard.kill(victims))
        return spared

    def _budget_allows(self, job: Job, now: float) -> bool:
        """Whether the kill budget affords killing the running ``job`` now (it is spent if so); without one, yes."""
        return self.kill_budget is None or self.kill_budget.kill(now, job.res * (now - self.starts[job.id]))

    def _slack(self, job_id: str) -> float:
        """How long a job past its trial may hold up the first waiting job (``kill_slack`` x its trial)."""
        return self.config.kill_slack * self.small[job_id]

    def _head_slack(self, head: Job) -> float:
        """How much longer a job past its trial may hold up the first waiting job, ``head``, when a kill would not
        let it start now anyway: ``head_slack`` x its request, none for a job classified small (a delay of a
        fraction of what a job asks adds about that fraction to its bounded slowdown, if it runs that long)."""
        if not self.config.head_slack or self._small_or_overdue(head):
            return 0.0  # a small head, or an overdue one (its wait is bounded: nothing may delay it)
        return self.config.head_slack * self.knowledge.estimate(head)

    def _small_or_overdue(self, head: Job) -> bool:
        """Whether the first waiting job is classified small or overdue (nothing may delay it)."""
        rank = self.algorithm.queue.rank(head)
        return rank <= JobClass.SMALL.rank or rank in OVERDUE_RANK_SET

    def _spare_within(self, head: Job) -> dict[str, float]:
        """``spare_within`` longest-wait: the latest start of the first waiting job, ``head``, that a job past its
        trial may push it to (its submission plus the longest first-attempt wait so far), as the keyword of
        :meth:`Algorithm.delays_head`; none for a head classified small or overdue."""
        if self.config.spare_within == "none" or self._small_or_overdue(head):
            return {}
        return {"latest_start": head.subtime + self.overdue.longest}

    def _demote_siblings(self, killed: Job, now: float, decisions: list[Decision]) -> None:
        """The safeguard killed ``killed``: its user's waiting watched jobs with the same request are large."""
        for job_id in self._siblings.pop(sibling_key(killed), ()):
            job = self.jobs[job_id]
            self.small_waiting.discard(job_id)
            del self.small[job_id]
            self.algorithm.requeue(job, self._estimate(job), JobClass.LARGE.rank, now)
            decisions.append(SetMetadata(job_id, CLASS_METADATA[JobClass.LARGE]))

    def _registration_over(self) -> bool:
        """No job can be registered any more: no small job may still be killed."""
        if self.safeguard is None:
            return True
        if self.admission is not None and self.config.readmit == "waiting" and self._deferred_waiting():
            return False  # HOOK (issue 48): a job refused a trial may still get one, and be killed
        return self.no_more_static_jobs and not self.small_waiting and not self.safeguard.pending

    # --- runtime predictions -------------------------------------------------------

    def _watch_prediction(self, job_id: str, now: float, decisions: list[Decision]) -> None:
        """Ask to be called when a running job's prediction runs out (strictly in the future)."""
        end = self.predictions.expected_end(job_id)
        heapq.heappush(self._prediction_ends, (end, job_id))
        decisions.extend(self.alarms.at(end, now))

    def _apply_prediction_changes(self, changes: dict[str, float], now: float, decisions: list[Decision]) -> None:
        """Propagate changed predictions: re-key queued jobs, move running jobs' expected ends."""
        for job_id in changes:
            state = self.states.get(job_id)
            if state == QUEUED:  # re-keyed with what the algorithm plans it with (the divider may bound it)
                self.algorithm.reestimate(self.jobs[job_id], self._estimate(self.jobs[job_id]), now)
            elif state == RUNNING:
                self.algorithm.expect_end(job_id, self.predictions.expected_end(job_id))
                self._watch_prediction(job_id, now, decisions)
            else:
                continue
            self._replan = True

    def _deadline_misses(self, now: float, decisions: list[Decision]) -> None:
        """Correct the running jobs whose prediction ran out (predicted end <= now)."""
        ends = self._prediction_ends
        missed = []
        while ends and ends[0][0] <= now:
            end, job_id = heapq.heappop(ends)
            if self.states.get(job_id) != RUNNING or self.predictions.expected_end(job_id) != end:
                continue  # finished, or its prediction changed since (a newer entry exists)
            if end >= self.starts[job_id] + self.jobs[job_id].walltime > self.starts[job_id]:
                continue  # p̃ reached: Batsim ends the job now
            missed.append(job_id)
        for job_id in missed:
            self.predictions.deadline_miss(self.jobs[job_id], now)
            self.algorithm.expect_end(job_id, self.predictions.expected_end(job_id))
            self._watch_prediction(job_id, now, decisions)
            self._replan = True
