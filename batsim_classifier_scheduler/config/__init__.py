"""The configuration: every scheduling option declared once (:mod:`.option`, :mod:`.scheduler_config`), and
the settings that go together, the variants and the presets (:mod:`.variants`)."""

from batsim_classifier_scheduler.config.scheduler_config import SchedulerConfig
from batsim_classifier_scheduler.config.variants import VARIANTS

__all__ = ["SchedulerConfig", "VARIANTS"]
