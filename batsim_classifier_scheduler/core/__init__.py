"""The pure pieces of scheduling: jobs, events and decisions, the waiting queue and its policies, the
availability profile, the scheduling algorithms (EASY backfilling, strict order), the safeguard.

Nothing here reads a file, a socket or a clock, and nothing imports the rest of the project but its errors and its
registry of names (where the algorithms and queue orders register theirs); :mod:`.decision` puts the pieces together.
"""
