"""The ASGI factory for ``uvicorn --factory dialeval.human.serve:make_app``.

The study's SQLAlchemy URL comes from ``$DIALEVAL_STUDY_DB`` (set by ``dialeval study serve``), so
every uvicorn worker process builds its own engine.
"""

from __future__ import annotations

import os
from typing import Any


def make_app() -> Any:
    """Return the annotation app for the study named by ``$DIALEVAL_STUDY_DB``."""
    from dialeval.human.app import create_app

    return create_app(os.environ["DIALEVAL_STUDY_DB"])
