"""The ASGI app for ``uvicorn dialeval.human.serve:app``; the study URL comes from ``$DIALEVAL_STUDY_DB``."""

from __future__ import annotations

import os

from dialeval.human.app import create_app

app = create_app(os.environ["DIALEVAL_STUDY_DB"])
