"""Importing litellm the one way this project does: lazily, offline, quietly.

``import litellm`` takes seconds, so modules import it inside functions through here.
``LITELLM_LOCAL_MODEL_COST_MAP`` makes it use the cost map bundled in the wheel instead of
fetching one from the network at import time. litellm logs a line per call at INFO; its
loggers are kept at WARNING (progress is the tqdm bar and the job log) unless the user asks
for more with ``LITELLM_LOG`` (e.g. ``LITELLM_LOG=DEBUG``).
"""

from __future__ import annotations

import logging
import os
from typing import Any

LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx")


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    level = os.environ.get("LITELLM_LOG", "WARNING").upper()
    for name in LITELLM_LOGGERS:
        logging.getLogger(name).setLevel(level)
    return litellm
