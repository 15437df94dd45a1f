"""Experiments: sweeps over traces x policies x variants x seeds, and the reports made from them.

- :mod:`batsim_classifier_scheduler.experiments.grid`: the sweep config and its runs;
- :mod:`batsim_classifier_scheduler.experiments.sweep`: running a sweep (process pool or Dask), resumably; its parts:
  :mod:`~batsim_classifier_scheduler.experiments.traces` (the trace cache), :mod:`~batsim_classifier_scheduler.experiments.worker` (one run),
  :mod:`~batsim_classifier_scheduler.experiments.backends` and :mod:`~batsim_classifier_scheduler.experiments.outcomes` (timings and summary);
- :mod:`batsim_classifier_scheduler.experiments.collect`: reading runs back (ours, or Batsim ``_jobs.csv`` files);
- :mod:`batsim_classifier_scheduler.experiments.report`: ``REPORT.md`` and its files; its parts: :mod:`~batsim_classifier_scheduler.experiments.report_tables`
  (the tables) and :mod:`~batsim_classifier_scheduler.experiments.report_markdown` (the text);
- :mod:`batsim_classifier_scheduler.experiments.plots`: the figures (matplotlib, Agg).
"""
