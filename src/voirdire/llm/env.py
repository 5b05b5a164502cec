"""Importing litellm the one way this project does: lazily, offline, quietly.

``import litellm`` takes seconds, so modules import it inside functions through here.
``LITELLM_LOCAL_MODEL_COST_MAP`` makes it use the cost map bundled in the wheel instead of
fetching one from the network at import time.
"""

from __future__ import annotations

import os
from typing import Any


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
