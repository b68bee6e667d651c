"""What the benchmarks share besides the timing: their argument types and the shared data they read.

Each script builds its options in ``parser()``, so tests/test_benchmarks.py checks the documented command lines and
the refusals without running anything. A count of 0 or below (``--repeats 0``, ``--slices 0``) ended in a
``ZeroDivisionError`` or ``StatisticsError`` traceback after the data was built; it is one usage line now.
"""

from __future__ import annotations

from pathlib import Path

from dialeval.errors import InputError
from dialeval.paths import shared_data_dir
from dialeval.quality.argtypes import count

#: An argparse ``type=`` for a count of at least 1 (items, contexts, repeats, resamples).
POSITIVE = count(1)
#: An argparse ``type=`` for a count of at least 0 (0: the default or none, as the option says).
COUNT = count(0)


def data_file(relative: str) -> Path:
    """Return the file ``relative`` of the shared data folder (``$DIALEVAL_DATA``, else ``../shared/data``).

    Raises:
        SystemExit: One line: no shared data folder, a ``$DIALEVAL_DATA`` that is not a folder, or no such file in it.
            (The scripts asserted "needs ../shared/data", or read ``../shared/data`` beside the checkout whatever
            ``$DIALEVAL_DATA`` said, and a missing file was a traceback.)
    """
    try:
        data = shared_data_dir()
    except InputError as exc:
        raise SystemExit(f"error: {exc}") from None
    if data is None:
        raise SystemExit("error: no shared data folder: set $DIALEVAL_DATA to it, or put it at ../shared/data")
    if not (data / relative).is_file():
        raise SystemExit(f"error: {data / relative} is not there: the benchmark reads {relative} of the shared data "
                         "folder ($DIALEVAL_DATA, else ../shared/data)")  # fmt: skip
    return data / relative
