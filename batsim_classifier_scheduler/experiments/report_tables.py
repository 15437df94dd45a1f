"""The runs' data and the tables of the report made from them (:class:`Report`), and the order they are shown in:
the paper's queue orders and variants first. :mod:`batsim_classifier_scheduler.experiments.report` writes them, with the figures."""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import pandas as pd

from batsim_classifier_scheduler.config import VARIANTS
from batsim_classifier_scheduler.config.variants import PRESETS
from batsim_classifier_scheduler.errors import UsageError, WorkloadError
from batsim_classifier_scheduler.experiments.collect import RunData
from batsim_classifier_scheduler.experiments.labels import split_label
from batsim_classifier_scheduler.metrics import report_columns

POLICY_ORDER = ["fcfs", "wfp", "spf", "saf", "sqf", "lpf"]


def _known(given: str | None, default: str, names: list[str], option: str, what: str) -> str:
    """``given`` if the runs have it (a command-line mistake naming ``option`` otherwise), else ``default``."""
    if given is None:
        return default
    if given not in names:
        raise UsageError(f"{option} {given}: no run has it; the runs' {what}: {', '.join(names)}")
    return given


def policy_key(label: str) -> tuple:
    """Sort key of a queue-order label: EASY's first, then by algorithm; the paper's orders first, in its order."""
    algorithm, policy = split_label(label)
    return (algorithm != "easy", algorithm,
            POLICY_ORDER.index(policy) if policy in POLICY_ORDER else len(POLICY_ORDER), policy)


def variant_order(variants: Iterable[str]) -> list[str]:
    variants = list(dict.fromkeys(variants))
    known = [*VARIANTS, *PRESETS]
    return [v for v in known if v in variants] + sorted(v for v in variants if v not in known)


class Report:
    """The runs' data and the tables made from them."""

    def __init__(self, data: list[RunData], reference_policy: str | None = None, reference_variant: str | None = None,
                 compare: str | None = None) -> None:
        """``reference_policy`` and ``reference_variant`` name the reference of the reduction table (default
        EASY-FCFS base), ``compare`` the variant shown against base in Figures 4, 6, 7 (default
        classification-idempotent). A name given must be one of the runs'; a default may be absent."""
        if not data:
            raise WorkloadError("no run found (no NAME_jobs.csv with a NAME_config.json, NAME_summary.json or "
                                "NAME_schedule.csv)")
        self.data = data
        self.runs = pd.DataFrame([d.row for d in data])
        self.traces = list(dict.fromkeys(self.runs["trace"]))
        self.policies = sorted(set(self.runs["policy"]), key=policy_key)
        self.variants = variant_order(self.runs["variant"])
        self.reference = (_known(reference_policy, "fcfs", self.policies, "--reference-policy", "policies"),
                          _known(reference_variant, "base", self.variants, "--reference-variant", "variants"))
        self.compare = _known(compare, "classification-idempotent", self.variants, "--compare", "variants")

    # --- tables ------------------------------------------------------------------------------------

    def mean_over_seeds(self, columns: Sequence[str]) -> pd.DataFrame:
        """Per trace x policy x variant, the mean of ``columns`` over seeds (and ``seeds``: their count)."""
        grouped = self.runs.groupby(["trace", "policy", "variant"], sort=False)
        table = grouped[list(columns)].mean(numeric_only=True)
        table["seeds"] = grouped.size()
        return table

    def pivot(self, column: str) -> pd.DataFrame:
        """``column`` (mean over seeds) as rows trace x policy and columns variants."""
        table = self.mean_over_seeds([column])[column].unstack("variant")
        table = table.reindex(columns=[v for v in self.variants if v in table.columns])
        return self._sort_rows(table)

    def _sort_rows(self, table: pd.DataFrame) -> pd.DataFrame:
        index = sorted(table.index, key=lambda k: (self.traces.index(k[0]), policy_key(k[1])) + tuple(k[2:]))
        return table.reindex(index)

    def reduction(self) -> pd.DataFrame:
        """Table 7: ``1 - bsld / bsld(reference)`` per trace x policy (rows) and variant (columns)."""
        bsld = self.pivot("mean_bsld")
        policy, variant = self.reference
        reference = {}
        for trace in self.traces:
            try:
                reference[trace] = bsld.loc[(trace, policy), variant]
            except KeyError:
                reference[trace] = math.nan
        factor = pd.Series([reference[t] for t, _ in bsld.index], index=bsld.index)
        return 1.0 - bsld.div(factor, axis=0)

    def classes(self) -> pd.DataFrame:
        """Figure 8's numbers: mean bsld of actual small and large jobs, and of predicted ones."""
        columns = ["mean_bsld_actual_small", "mean_bsld_actual_large", "nb_jobs_actual_small",
                   "nb_jobs_actual_large", "mean_bsld_small", "mean_bsld_large", "nb_jobs_small", "nb_jobs_large",
                   "nb_jobs_uncertain"]
        present = [c for c in columns if c in self.runs.columns]
        return self._sort_variants(self.mean_over_seeds(present))

    def _sort_variants(self, table: pd.DataFrame) -> pd.DataFrame:
        index = sorted(table.index, key=lambda k: (self.traces.index(k[0]), policy_key(k[1]),
                                                    self.variants.index(k[2])))
        return table.reindex(index)

    def classifier(self) -> pd.DataFrame:
        """Tables 5 and 6: the classifier's quality over each run (runs with a classifier)."""
        return self._means_where_counted(["classifier_precision", "classifier_recall", "classifier_accuracy",
                                          "classifier_false_small_rate", "classifier_false_large_rate",
                                          "classifier_uncertain", "classifier_uncertain_rate", "classifier_n"])

    def predictions(self) -> pd.DataFrame:
        """The runtime predictors' accuracy per trace x policy x variant (runs with a predictor)."""
        return self._means_where_counted(["prediction_mae", "prediction_r2", "prediction_under", "prediction_ra",
                                          "prediction_ai", "prediction_deadline_misses", "prediction_nb_jobs"])

    def _means_where_counted(self, columns: list[str]) -> pd.DataFrame:
        """The mean of ``columns`` per trace x policy x variant, over the runs whose count (the last column) is
        positive; an empty table with those columns when no run has one."""
        counted = columns[-1]
        if counted not in self.runs.columns:
            return pd.DataFrame(columns=columns)
        runs = self.runs[self.runs[counted].fillna(0) > 0]
        if runs.empty:
            return pd.DataFrame(columns=columns)
        grouped = runs.groupby(["trace", "policy", "variant"], sort=False)
        return self._sort_variants(grouped[[c for c in columns if c in runs.columns]].mean())

    def costs(self) -> pd.DataFrame:
        """The metrics of the costs table (AWF, P2SF, waits, utilisation:
        :func:`~batsim_classifier_scheduler.metrics.report_columns`), kills and wasted
        work per trace x policy x variant."""
        columns = [m.key for m in report_columns()] + ["nb_jobs_killed", "share_jobs_killed", "nb_kills",
                                                       "wasted_core_seconds", "wasted_fraction", "nb_jobs"]
        return self._sort_variants(self.mean_over_seeds([c for c in columns if c in self.runs.columns]))

    def tradeoff(self) -> pd.DataFrame:
        """Gain against harm, per trace x policy x variant: the reduction of mean bsld (as in :meth:`reduction`),
        the wasted work, the actually-large jobs' mean bsld and the longest wait, each against base under the
        same policy (``large_vs_base`` is a relative change, ``max_wait_vs_base`` a ratio; NaN without base)."""
        reduction = self.reduction().stack().rename("reduction")
        columns = [c for c in ("wasted_fraction", "mean_bsld_actual_large", "max_wait") if c in self.runs.columns]
        table = self.mean_over_seeds(columns).join(reduction, how="left")
        if "base" in self.variants:
            base = table.xs("base", level="variant")
            for column, name, change in (("mean_bsld_actual_large", "large_vs_base", True),
                                         ("max_wait", "max_wait_vs_base", False)):
                if column in table:
                    reference = pd.Series([base[column].get((t, p), math.nan) for t, p, _ in table.index],
                                          index=table.index)
                    table[name] = table[column] / reference - (1.0 if change else 0.0)
        return self._sort_variants(table)

    @property
    def plotted_variants(self) -> list[str]:
        """The variants Figures 6 and 7 draw: every variant that ran, in the report's order."""
        return list(self.variants)

    def why_not(self, figure: str, trace: str) -> str | None:
        """Why ``figure`` (``fig9`` or ``tradeoff``) is not drawn for ``trace``, or None when it is: a figure
        that would compare nothing is left out."""
        if figure == "fig9":
            bsld = self.pivot("mean_bsld")
            cells = int(bsld.loc[trace].notna().to_numpy().sum()) if trace in bsld.index.get_level_values(0) else 0
            if cells < 2:
                return (f"No Figure 9 for {trace}: it sets runs side by side, and the trace has "
                        f"{'one run' if cells else 'no run'} (one queue order, one variant).")
        if figure == "tradeoff":
            policy, variant = self.reference
            others = [v for v in self.runs.loc[self.runs["trace"] == trace, "variant"] if v != variant]
            if not others:
                return (f"No gain-against-harm figure for {trace}: it sets each variant against {variant}, and "
                        f"only {variant} ran.")
        return None

    def pick(self, trace: str, policy: str, variant: str) -> RunData | None:
        """The run of the lowest seed of a trace x policy x variant."""
        candidates = [d for d in self.data if (d.files.trace, d.files.policy, d.files.variant) == (trace, policy, variant)]
        return min(candidates, key=lambda d: d.files.seed) if candidates else None

    def classifier_run(self, trace: str) -> RunData | None:
        """The run whose weekly classifier report Figure 4 shows: the compared variant under the
        reference policy if it has one, else the first run of the trace with a weekly report."""
        preferred = self.pick(trace, self.reference[0], self.compare)
        if preferred is not None and preferred.weeks is not None:
            return preferred
        with_weeks = [d for d in self.data if d.files.trace == trace and d.weeks is not None]
        with_weeks.sort(key=lambda d: (policy_key(d.files.policy), self.variants.index(d.files.variant), d.files.seed))
        return with_weeks[0] if with_weeks else None
