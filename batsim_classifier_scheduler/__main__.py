import os
import sys

from batsim_classifier_scheduler.cli import main
from batsim_classifier_scheduler.cli.teardown import teardown_skipped

code = main()
if teardown_skipped():  # (see batsim_classifier_scheduler.cli.teardown: its output is written; only the freeing of memory is left)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken pipe: the usual exit reports it
        raise SystemExit(code) from None
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    os._exit(code)
raise SystemExit(code)
