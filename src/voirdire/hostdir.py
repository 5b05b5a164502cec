"""The private folder of the machine's helper processes (the model, call and job hosts): their
sockets, locks and logs, in ``$XDG_RUNTIME_DIR/voirdire`` or ``/tmp/voirdire-UID``."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO


def private_directory() -> Path:
    """The hosts' folder, made if missing; :class:`PermissionError` when another user could enter it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "voirdire" if runtime else Path("/tmp") / f"voirdire-{os.getuid()}"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    if base.stat().st_uid != os.getuid() or base.stat().st_mode & 0o077:
        raise PermissionError(f"{base} is not private to this user")
    return base


def hold_lock(path: Path) -> IO[str] | None:
    """Take the host's lock at ``path`` for the life of this process (keep the returned file
    open) and write this process's id in it; None when another process holds it."""
    lock = open(path, "a")  # noqa: SIM115 - held for the host's lifetime; "w" would empty the holder's pid
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock
