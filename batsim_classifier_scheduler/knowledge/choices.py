"""The job classifier's choices, named once for the config and the classifier (which needs numpy); the classes
themselves are :class:`batsim_classifier_scheduler.core.job.JobClass`."""

#: How jobs are classified: not at all (every job is large), by the online Random Forest, or by their true class.
CLASSIFIER_METHODS = ("none", "rf", "oracle")
#: Which completed jobs the history features see: all up to the submission, or those of previous weeks.
FEATURE_MODES = ("live", "paper")
#: The small/large boundaries by name (a number of seconds is the other kind).
DIVIDERS = ("median", "last-week-median")
#: Measurement aids, not methods (docs/notebook/2026-12-05-results.md, "The gap, decomposed"): the forest's answers
#: with one kind of error removed by the true class (against the divider in force), or the first, model-less week's
#: jobs given their true class against the median runtime of the jobs completed so far.
PARTIAL_ORACLES = ("none", "no-false-large", "no-false-small", "no-blind-week")
