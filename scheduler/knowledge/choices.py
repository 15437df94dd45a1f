"""The job classifier's choices, named once for the config and the classifier (which needs numpy)."""

from enum import Enum

#: How jobs are classified: not at all (every job is large), by the online Random Forest, or by their true class.
CLASSIFIER_METHODS = ("none", "rf", "oracle")
#: Which completed jobs the history features see: all up to the submission, or those of previous weeks.
FEATURE_MODES = ("live", "paper")
#: The small/large boundaries by name (a number of seconds is the other kind).
DIVIDERS = ("median", "last-week-median")
#: Measurement aids, not methods (docs/results.md, "The gap, decomposed"): the forest's answers with one kind
#: of error removed by the true class (against the divider in force), or the first, model-less week's jobs
#: given their true class against the median runtime of the jobs completed so far.
PARTIAL_ORACLES = ("none", "no-false-large", "no-false-small", "no-blind-week")


class JobClass(Enum):
    """What the classifier says of a submitted job.

    ``SMALL`` jobs go to Q_small; ``UNCERTAIN`` ones (only with a probe threshold) queue after them and
    are watched by the safeguard like small ones; ``LARGE`` ones go to Q. :attr:`rank` is the queue rank.
    """

    SMALL = "small", 0
    UNCERTAIN = "uncertain", 1
    LARGE = "large", 2

    #: The job's queue: 0 (Q_small) before 1 (uncertain) before 2 (Q). A plain attribute, not a property: it is
    #: read for every submitted job.
    rank: int

    def __new__(cls, value: str, rank: int) -> "JobClass":
        member = object.__new__(cls)
        member._value_ = value  # the name the config and the metadata use
        member.rank = rank
        return member
