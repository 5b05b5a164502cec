"""The private folder of the machine's helper processes (the model, call and job hosts): their
sockets, locks and logs, in ``$XDG_RUNTIME_DIR/voirdire`` or ``/tmp/voirdire-UID``."""

from __future__ import annotations

import os
from pathlib import Path


def private_directory() -> Path:
    """The hosts' folder, made if missing; :class:`PermissionError` when another user could enter it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "voirdire" if runtime else Path("/tmp") / f"voirdire-{os.getuid()}"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    if base.stat().st_uid != os.getuid() or base.stat().st_mode & 0o077:
        raise PermissionError(f"{base} is not private to this user")
    return base
