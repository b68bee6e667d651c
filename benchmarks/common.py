"""What the benchmarks share besides the timing: their argument types.

Each script builds its options in ``parser()``, so tests/test_benchmarks.py checks the documented command lines and
the refusals without running anything. A count of 0 or below (``--repeats 0``, ``--slices 0``) ended in a
``ZeroDivisionError`` or ``StatisticsError`` traceback after the data was built; it is one usage line now.
"""

from __future__ import annotations

from dialeval.quality.argtypes import count

#: An argparse ``type=`` for a count of at least 1 (items, contexts, repeats, resamples).
POSITIVE = count(1)
#: An argparse ``type=`` for a count of at least 0 (0: the default or none, as the option says).
COUNT = count(0)
