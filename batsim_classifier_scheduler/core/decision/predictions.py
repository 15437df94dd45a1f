"""The predictions part: runtime predictions with a correction rule (``batsim_classifier_scheduler.knowledge.predictors``) kept in
step with the algorithm: changed predictions re-key waiting jobs and move running jobs' expected ends, and a running
job whose prediction runs out is corrected."""

from __future__ import annotations

import heapq
from typing import Any, Callable

from batsim_classifier_scheduler.core.alarms import Alarms
from batsim_classifier_scheduler.core.algorithm import Algorithm
from batsim_classifier_scheduler.core.decision.book import QUEUED, RUNNING, JobBook
from batsim_classifier_scheduler.core.messages import Decision
from batsim_classifier_scheduler.core.job import Job


class PredictionWatch:
    """The predictions of one simulation, and the running jobs' predicted ends."""

    def __init__(self, predictions: Any, book: JobBook, algorithm: Algorithm, planned: Callable[[Job], float],
                 alarms: Alarms, labels: dict[str, Any]) -> None:
        self.predictions = predictions
        self.book, self.algorithm, self.planned, self.alarms = book, algorithm, planned, alarms
        self.labels = labels
        self._ends: list[tuple[float, str]] = []  # (predicted end, running job id)
        self._replan = False  # predictions changed since the last decision

    def submitted(self, job: Job, now: float) -> None:
        self.predictions.submit(job, now)

    def started(self, job: Job, now: float, decisions: list[Decision]) -> None:
        changes = self.predictions.start(job, now)
        self._watch(job.id, now, decisions)
        self._apply(changes, now, decisions)

    def ended(self, job: Job, now: float, decisions: list[Decision]) -> None:
        self._apply(self.predictions.end(job, now), now, decisions)

    def before(self, now: float, decisions: list[Decision]) -> bool:
        """Correct the running jobs whose prediction ran out (predicted end <= now); whether the algorithm must
        replan (predictions changed since the last decision)."""
        ends, book = self._ends, self.book
        missed = []
        while ends and ends[0][0] <= now:
            end, job_id = heapq.heappop(ends)
            if book.states.get(job_id) != RUNNING or self.predictions.expected_end(job_id) != end:
                continue  # finished, or its prediction changed since (a newer entry exists)
            if end >= book.starts[job_id] + book.jobs[job_id].walltime > book.starts[job_id]:
                continue  # p̃ reached: Batsim ends the job now
            missed.append(job_id)
        for job_id in missed:
            self.predictions.deadline_miss(book.jobs[job_id], now)
            self.algorithm.expect_end(job_id, self.predictions.expected_end(job_id))
            self._watch(job_id, now, decisions)
            self._replan = True
        replan, self._replan = self._replan, False
        return replan

    def _watch(self, job_id: str, now: float, decisions: list[Decision]) -> None:
        """Ask to be called when a running job's prediction runs out (strictly in the future)."""
        end = self.predictions.expected_end(job_id)
        heapq.heappush(self._ends, (end, job_id))
        decisions.extend(self.alarms.at(end, now))

    def _apply(self, changes: dict[str, float], now: float, decisions: list[Decision]) -> None:
        """Propagate changed predictions: re-key queued jobs, move running jobs' expected ends."""
        book = self.book
        for job_id in changes:
            state = book.states.get(job_id)
            if state == QUEUED:  # re-keyed with what the algorithm plans it with (the divider may bound it)
                self.algorithm.reestimate(book.jobs[job_id], self.planned(book.jobs[job_id]), now)
            elif state == RUNNING:
                self.algorithm.expect_end(job_id, self.predictions.expected_end(job_id))
                self._watch(job_id, now, decisions)
            else:
                continue
            self._replan = True

    def summary(self) -> tuple[dict[str, Any], Any]:
        """The predictions' accuracy summary (with their names) and table."""
        table = self.predictions.accuracy_table()
        return {**self.labels, **self.predictions.accuracy_summary(table)}, table
