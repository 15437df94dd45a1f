"""What the cleaning of an SWF trace did, rule by rule (:class:`CleaningReport`; the rules are
:mod:`batsim_classifier_scheduler.workloads.cleaning`'s), as a workload keeps it and the CLI prints it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

#: Drop rules, in the order they are applied, with what they mean.
DROP_RULES = {
    "runtime<=0": "runtime unknown or zero",
    "res<=0": "no processor count",
    "res>nb_res": "more processors than the machine",
    "submit<0": "submit time unknown",
    "runtime>reqtime": "ran past its requested time",
}
#: Slurm accounting (sacct) input: its drop rules, applied before the rules above, in this order.
SACCT_DROPS = {
    "array-pending": "array elements still pending (JOBID_[A-B])",
    "not-finished": "running, pending, suspended or requeued: not finished",
    "cancelled-before-start": "cancelled before they started",
    "never-started": "ended without starting (no Start)",
    "other-partition": "in a partition not given to --partition",
}
#: Slurm accounting input: the records that are not jobs, or are folded into one, as the report names them.
RECORD_LABELS = {
    "steps": "job steps: not jobs",
    "requeue_attempts": "earlier attempts of requeued jobs: the last attempt kept",
    "het_components": "components of heterogeneous jobs: one job each",
    "array_elements": "array elements: a job each",
}


@dataclass
class CleaningReport:
    """What the conversion did, rule by rule."""

    source: str
    swf_jobs: int
    kept_jobs: int
    nb_res: int
    nb_res_from: str
    first_submit: float
    skipped_lines: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    dropped_overlaps: dict[str, int] = field(default_factory=dict)
    fixed: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    missing_walltime: float | None = None
    records: dict[str, int] = field(default_factory=dict)
    unit: str = "processors"
    reading: list[str] = field(default_factory=list)

    @property
    def dropped_jobs(self) -> int:
        return self.swf_jobs - self.kept_jobs

    def to_dict(self) -> dict:
        return asdict(self)

    def format(self) -> str:
        """What the cleaning did, rule by rule with its count, as the CLI prints it."""
        lines = [f"{Path(self.source).name}: {self.swf_jobs:,} jobs read, {self.kept_jobs:,} kept, "
                 f"{self.dropped_jobs:,} dropped"]
        if self.records:
            lines.append(f"  records {self.records['records']:>7,}  sacct records read")
            lines += [f"  records {count:>7,}  {RECORD_LABELS[name]}" for name, count in self.records.items()
                      if count and name in RECORD_LABELS]
        lines += [f"  read:   {note}" for note in self.reading]
        lines.append(f"  machine: {self.nb_res:,} {self.unit} ({self.nb_res_from})")
        if self.skipped_lines:
            lines.append(f"  malformed lines skipped: {self.skipped_lines:,}")
        for rule, count in self.dropped.items():
            if count:
                label = DROP_RULES.get(rule) or SACCT_DROPS[rule]
                lines.append(f"  dropped {count:>7,}  {rule:<{22 if self.records else 16}} {label}")
        labels = {
            "res_from_requested": f"{self.unit} taken from the request (allocation unknown)",
            "walltime_missing": "no requested time: walltime = "
                                + ("none (-1)" if self.missing_walltime is None
                                   else f"{self.missing_walltime:g} s"),
            "walltime_raised": "ran past the request: walltime raised to the runtime",
        }
        for name, count in self.fixed.items():
            if count:
                lines.append(f"  fixed   {count:>7,}  {labels[name]}")
        if self.notes.get("walltime==runtime"):
            lines.append(f"  note    {self.notes['walltime==runtime']:>7,}  walltime == runtime: "
                         "Batsim ends them as COMPLETED_WALLTIME_REACHED")
        return "\n".join(lines)
