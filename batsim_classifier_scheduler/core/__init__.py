"""The pure pieces of scheduling: jobs, events and decisions, the waiting queue and its policies, the
availability profile, the scheduling algorithms (EASY backfilling, strict order), the safeguard.

Nothing here reads a file, a socket or a clock, and nothing imports the rest of the project but
``batsim_classifier_scheduler.errors`` and ``batsim_classifier_scheduler.registry`` (where the algorithms and queue orders register their names);
``scheduler.decision`` puts the pieces together.
"""
