"""The call host: one process on the machine makes the API calls of the workflow's jobs.

``import litellm`` costs a job 4 to 5 CPU-seconds on a 2-core CPU: more than the work of most
jobs that call an API (a judge of a few hundred pairs, a probe, a rewrite). With the call host,
the first job that calls an API starts it, and every later job hands its requests to it over a
Unix socket; the host sends them with ``litellm.acompletion`` (retries, timeouts and all, as
the job would have) and gives back the response as a dict, or the error by its class name and
message. The job itself never imports litellm, and reads the answer as it reads litellm's
(:meth:`voirdire.llm.calls.Answer.from_response` takes either).

It is the model host's machinery (:mod:`voirdire.llm.local.host`: a private folder, a lock per
key, leaving after :data:`~voirdire.llm.local.host.IDLE_S` idle seconds, on and off with
``$VOIRDIRE_MODEL_HOST``, never under Slurm) with other methods. What the host sends depends on
the environment litellm reads (proxies, certificates, provider keys a judge does not name), so
its key hashes the job's whole environment, besides the Python and this module: only jobs
with the same environment share a host, and the key is a hash, so no value leaves the job.
The API key a judge names (``api_key_env``) travels with each request over the socket,
which only its user can reach, and the host keeps it only for that call; it writes no request
or answer to its log. Where the host cannot be reached or started, or dies during a request,
the job imports litellm and sends the request itself, saying so in its log: the host saves
time, it never changes an answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import logging
import os
import pickle
import struct
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .local import host

log = logging.getLogger(__name__)

PER_JOB_ENV = (host.ENV, host.IDLE_ENV, "VOIRDIRE_TORCH_THREADS", "VECLIB_MAXIMUM_THREADS", "TIKTOKEN_CACHE_DIR")
"""Environment variables that differ between the jobs of one run and do not change a call: the
hosts' switches, the thread counts Snakemake gives each job (and every ``*_NUM_THREADS``), and
the tokenizer cache that importing litellm sets."""


def _per_job(name: str) -> bool:
    return name in PER_JOB_ENV or name.endswith("_NUM_THREADS")


class Failed(Exception):
    """A call failed in the host: the error's class name and message."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(name, message)
        self.name = name
        self.message = message


_classes: dict[str, type[Exception]] = {}


def as_raised(failure: Failed) -> Exception:
    """The host's error as this process raises it: an exception of the same class name (the call
    path classifies errors by name: :func:`voirdire.llm.calls.is_permanent`)."""
    if failure.name not in _classes:
        _classes[failure.name] = type(failure.name, (Exception,), {"__module__": "litellm"})
    return _classes[failure.name](failure.message)


def _answer(status: str, value: Any) -> Any:
    """The host's reply (``("ok", value)`` or ``("error", exception)``) as a return or a raise."""
    if status == "error":
        raise as_raised(value) if isinstance(value, Failed) else value
    return value


def enabled() -> bool:
    """Whether this process hands its API calls to the call host: a workflow job
    (``$VOIRDIRE_MODEL_HOST=1``) outside Slurm."""
    return os.environ.get(host.ENV) == "1" and not os.environ.get("SLURM_JOB_ID")


def key() -> str:
    """The Python, this module and the environment litellm would see, hashed."""
    digest = hashlib.sha256(sys.executable.encode())
    digest.update(Path(__file__).read_bytes())
    for name, value in sorted(os.environ.items()):
        if not _per_job(name):
            digest.update(f"\0{name}={value}".encode())
    return "calls-" + digest.hexdigest()[:16]


# ----------------------------------------------------------------------------- the job's side


async def _send(writer: asyncio.StreamWriter, message: Any) -> None:
    """``message`` as :class:`multiprocessing.connection.Connection` frames it (the host's side)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    header = struct.pack("!i", len(data)) if len(data) <= 0x7FFFFFFF else struct.pack("!iQ", -1, len(data))
    writer.write(header + data)
    await writer.drain()


async def _receive(reader: asyncio.StreamReader) -> Any:
    (size,) = struct.unpack("!i", await reader.readexactly(4))
    if size == -1:
        (size,) = struct.unpack("!Q", await reader.readexactly(8))
    return pickle.loads(await reader.readexactly(size))  # noqa: S301 - our own host, over a private socket


class Relay:
    """A job's way to the call host: one connection per request in flight.

    A connection carries one request at a time (the host answers each on its own thread); an
    idle one is reused. A request cancelled while in flight (the circuit breaker stopping a
    run) closes its connection, and the host drops the answer.
    """

    def __init__(self) -> None:
        self.key = key()
        self._sync = host.open_connection(self.key, host.CALLS)  # starts the host when none runs
        self._address = host.address(self.key)
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._loop: asyncio.AbstractEventLoop | None = None  # the event loop the idle ones belong to
        self._lock = threading.Lock()

    def request(self, method: str, /, *args: Any) -> Any:
        """``method(*args)`` in the host, from synchronous code (prices)."""
        with self._lock:
            self._sync.send((method, args, {}))
            reply = self._sync.recv()
        return _answer(*reply)

    async def _ask(self, method: str, *args: Any) -> Any:
        if self._loop is not asyncio.get_running_loop():  # a later asyncio.run: the old loop's are gone
            self._idle.clear()
            self._loop = asyncio.get_running_loop()
        if self._idle:
            reader, writer = self._idle.pop()
        else:
            reader, writer = await asyncio.open_unix_connection(self._address)
        try:
            await _send(writer, (method, args, {}))
            status, value = await _receive(reader)
        except BaseException:
            writer.close()
            raise
        self._idle.append((reader, writer))
        return _answer(status, value)

    async def acompletion(self, **kwargs: Any) -> dict:
        return await self._ask("acompletion", kwargs)

    def close(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()
        with contextlib.suppress(OSError):
            self._sync.close()


_relay: Relay | None = None


def relay() -> Relay | None:
    """This process's relay to the call host, or None: not a workflow job, or no host answers
    (then the job calls litellm itself, and its log says why)."""
    global _relay
    if _relay is None and enabled():
        try:
            _relay = Relay()
        except host.Unavailable as why:
            log.warning("litellm imported in this job: %s", why)
            os.environ[host.ENV] = "0"
    return _relay


def forget(why: BaseException) -> None:
    """The host went away: this job calls litellm itself from now on."""
    global _relay
    if _relay is not None:
        log.warning("litellm imported in this job: the call host went away (%r)", why)
        _relay.close()
        _relay = None
    os.environ[host.ENV] = "0"


HANG_UP_CHECK_S = 0.5
"""How often the host looks whether the job of a call in flight is still there."""

HOST_GONE = (OSError, EOFError, asyncio.IncompleteReadError)
"""What a request raises when the host is gone (refused, reset, closed mid-answer)."""


# ----------------------------------------------------------------------------- the host's side


def methods() -> dict[str, Callable[..., Any]]:
    """What the call host does, by name: litellm imported once, its calls on one event loop."""
    from . import calls
    from .env import import_litellm

    litellm = import_litellm()
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True, name="voirdire-host-calls").start()

    def acompletion(kwargs: dict, *, hung_up: Callable[[], bool] = lambda: False) -> dict:
        call = asyncio.run_coroutine_threadsafe(litellm.acompletion(**kwargs), loop)
        while True:
            try:
                response = call.result(timeout=HANG_UP_CHECK_S)
                break
            except concurrent.futures.TimeoutError:
                if hung_up():  # the job was stopped (its breaker tripped, or it was killed)
                    call.cancel()
                    raise Failed("CancelledError", "the job hung up") from None
            except Exception as error:  # noqa: BLE001 - the job raises it by name
                raise Failed(type(error).__name__, str(error)) from None
        return response.model_dump()

    def token_cost(model: str, prompt_tokens: int, completion_tokens: int, **_: Any) -> float:
        return calls.token_cost(litellm, model, prompt_tokens, completion_tokens)

    def has_price(model: str, **_: Any) -> bool:
        return calls.has_price(litellm, model)

    return {"acompletion": acompletion, "token_cost": token_cost, "has_price": has_price}
