"""The job classifier's choices, named once for the config and the classifier (which needs numpy)."""

#: How jobs are classified: not at all (every job is large), by the online Random Forest, or by their true class.
CLASSIFIER_METHODS = ("none", "rf", "oracle")
#: Which completed jobs the history features see: all up to the submission, or those of previous weeks.
FEATURE_MODES = ("live", "paper")
#: The small/large boundaries by name (a number of seconds is the other kind).
DIVIDERS = ("median", "last-week-median")
