import os
import sys

from scheduler.cli import main
from scheduler.cli.teardown import teardown_skipped

code = main()
if teardown_skipped():  # (see scheduler.cli.teardown: its output is written; only the freeing of memory is left)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken pipe: the usual exit reports it
        raise SystemExit(code) from None
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    os._exit(code)
raise SystemExit(code)
