"""Experiments: sweeps over traces x policies x variants x seeds, and the reports made from them.

- :mod:`scheduler.experiments.grid`: the sweep config and its runs;
- :mod:`scheduler.experiments.sweep`: running a sweep (process pool or Dask), resumably; its parts:
  :mod:`~scheduler.experiments.traces` (the trace cache), :mod:`~scheduler.experiments.worker` (one run),
  :mod:`~scheduler.experiments.backends` and :mod:`~scheduler.experiments.outcomes` (timings and summary);
- :mod:`scheduler.experiments.collect`: reading runs back (ours, or Batsim ``_jobs.csv`` files);
- :mod:`scheduler.experiments.report`: ``REPORT.md`` and its files; its parts: :mod:`~scheduler.experiments.report_tables`
  (the tables) and :mod:`~scheduler.experiments.report_markdown` (the text);
- :mod:`scheduler.experiments.plots`: the figures (matplotlib, Agg).
"""
