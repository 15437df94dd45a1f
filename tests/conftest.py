"""Test-session set-up.

The hand-written SWF fixtures are stored as ``tests/data/*.swf.txt`` (so that no ``.swf`` file is
committed: the project ships no traces) and written out as ``*.swf`` before the tests run.
"""

from tests.helpers import DATA

for source in DATA.glob("*.swf.txt"):
    target = source.with_suffix("")
    if not target.exists() or target.read_bytes() != source.read_bytes():
        target.write_bytes(source.read_bytes())
