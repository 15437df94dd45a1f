"""The decision core's book of jobs: every job it was told of, its state, its lineage and its start, and the
processors no running job holds. The core writes it; its parts read it."""

from __future__ import annotations

from batsim_classifier_scheduler.core.job import Job

#: Lifecycle states of a job in :attr:`JobBook.states`.
QUEUED, RUNNING, COMPLETED, REJECTED, KILLED = "queued", "running", "completed", "rejected", "killed"


class JobBook:
    """The jobs of one simulation (see the module)."""

    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self.states: dict[str, str] = {}
        self.reject_reasons: dict[str, str] = {}
        self.origin: dict[str, str] = {}  # resubmitted attempt id -> original job id
        self.starts: dict[str, float] = {}  # job id -> its start (kept only when a part beside the algorithm acts)
        self.nb_machines = 0
        self.free = 0  # processors no running job holds (kept only when a part beside the algorithm acts)

    def attempt(self, job_id: str) -> int:
        """0 for an original job, k for its resubmission ``<id>#k``."""
        return int(job_id.rpartition("#")[2]) if job_id in self.origin else 0

    def waiting(self, job_id: str) -> bool:
        return self.states[job_id] == QUEUED

    def running(self, job_id: str) -> bool:
        return self.states[job_id] == RUNNING
