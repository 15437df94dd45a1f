"""Batsim's side, embedded: the discrete-event engine, in-process simulations, ``batsim-peer``, and
the result files (Batsim's ``_jobs.csv`` and ``_schedule.csv``, our summary)."""
