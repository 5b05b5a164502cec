"""Judging through a provider's batch API, at the batch price (half the direct one at OpenAI).

A caller that can wait (a judge with ``batch: true``) hands :func:`fill_by_batch` the calls its
store lacks. They go to the provider as one batch (several when they pass the provider's
limits) through litellm's file and batch API: the requests as a JSONL file whose ``custom_id``
is each request's store key (:attr:`voirdire.llm.request.Request.key`), uploaded with
``litellm.create_file``, started with ``litellm.create_batch``, polled with
``litellm.retrieve_batch`` every ``poll_s`` seconds (a tqdm bar of the requests done), read
with ``litellm.file_content`` once it ends (each on a worker thread: :class:`Client` says why).
Each answer lands in the store under its key, as a direct answer would (same record, same
acceptance rule; its cost at the batch price), so a later direct run makes no call.

Every promise of the direct path holds:

* **Resumable, never paid twice.** Before a batch is created, its input file's id and the keys
  it carries are committed to the store's ``batches`` and ``batch_calls`` tables
  (:class:`voirdire.llm.store.Store`); the batch id follows the moment the provider returns it.
  A killed or timed-out job's rerun picks up the batches not yet read (polls, reads, stores) and
  submits none of their keys again. A kill between creating a batch and recording its id is
  covered too: the rerun looks the input file up among the provider's batches
  (``litellm.list_batches``) before it creates one. Answers are read in one transaction with
  the batch's ``read`` mark, so a kill while reading loses nothing and stores nothing twice.
* **Failures are counted and asked again, never read as a grade.** A line of the error file (a
  request the provider rejected or could not answer) is asked again directly; so is a failed
  batch's every request. The requests an expired or cancelled batch did not run (its answered
  ones are read and kept: they are paid) go into a new batch, ``resubmits`` times at most,
  then directly. An answer the caller's rule does not accept is asked again directly, its
  batch answer counted as an attempt (tokens and cost carried into the stored record). Each
  count is in :class:`BatchStats` and the job's log.
* **Only what the protocol promises** (docs/batch.md, "What the client assumes of the provider"):
  lines in any order, matched by ``custom_id``; an error in either file, as a non-200 response or
  as ``error`` with no response; files read for any ended batch; any JSONL line ends; opaque ids;
  a 404 on a batch or file, or a batch missing from the list, believed only after
  ``consistency_s`` (an API may be eventually consistent), so that a batch still answering is
  never replaced by a second one.
* **The wait is bounded.** ``timeout_s`` after it started waiting, a job stops with
  :class:`voirdire.llm.calls.BatchPending`: what was read is stored, the batches still running
  stay recorded, and a rerun resumes them.

No secret reaches the batch tables, the JSONL or the log: the key is read from the environment
(the endpoint's ``api_key_env``) at call time and handed to litellm only; error messages are
redacted of it before they are logged or stored.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..defaults import schema_default
from ..errors import ConfigError
from .calls import (
    Accept,
    Answer,
    BatchPending,
    Call,
    CallsIncomplete,
    Carried,
    RunStats,
    _field,
    _litellm,
    _record,
    is_permanent,
    redact,
    retry_delay,
    token_cost,
)
from .endpoint import Endpoint
from .store import BatchOutcome, BatchRow, Store

log = logging.getLogger(__name__)

BATCH_PROVIDERS = ("openai", "azure", "vertex_ai", "bedrock", "hosted_vllm", "litellm_proxy", "mistral", "xai")
"""The litellm providers whose batches ``litellm.create_batch`` can create."""
ENDED = ("completed", "failed", "expired", "cancelled")
"""A batch's final statuses (before them: validating, in_progress, finalizing, cancelling)."""
NOT_RUN = ("batch_expired", "batch_cancelled")
"""Error codes of an error-file line whose request the batch stopped before running."""
ENDPOINT = "/v1/chat/completions"
PAID = ("answered", "unaccepted", "unused")
"""Outcomes of a request whose answer the provider charged for."""
OUTCOMES = (*PAID, "error", "missing", "failed")
"""What becomes of a request in a batch (:class:`voirdire.llm.store.BatchOutcome`)."""


@dataclass(frozen=True)
class BatchOptions:
    """A judge's ``batch:`` settings (``batch: true`` takes these defaults: the schema's, read
    from it; ``max_bytes`` is no config key)."""

    poll_s: float = float(schema_default("judges", "batch", "poll_s"))
    """Seconds between two looks at a running batch."""
    timeout_s: float = float(schema_default("judges", "batch", "timeout_s"))
    """How long a job waits for its batches (25 hours: the 24-hour window and some) before it
    stops; the batches stay recorded and a rerun resumes them."""
    resubmits: int = int(schema_default("judges", "batch", "resubmits"))
    """How many times a request an expired or cancelled batch did not run goes into a new batch
    before it is asked directly."""
    max_requests: int = int(schema_default("judges", "batch", "max_requests"))
    """Requests in one batch at most (OpenAI's limit); more make several batches."""
    max_bytes: int = 190_000_000
    """Bytes of one batch's input file at most (OpenAI's limit is 200 MB)."""
    consistency_s: float = float(schema_default("judges", "batch", "consistency_s"))
    """How long the provider may not know a batch or file it has made (a 404 on a look or a read,
    a batch missing from its list) before the client believes it: a provider's API may be
    eventually consistent (Anthropic's batches answered 404 for seconds after creation,
    anthropic-sdk-python#1432). Before that, it looks again; after, the batch is gone and its
    requests go into a new batch (a batch never listed is created)."""

    def __post_init__(self) -> None:
        if self.poll_s <= 0 or self.timeout_s <= 0:
            raise ValueError("poll_s and timeout_s must be positive")
        if self.consistency_s < 0:
            raise ValueError("consistency_s must be at least 0")
        if self.resubmits < 0 or self.max_requests < 1 or self.max_bytes < 1:
            raise ValueError("resubmits must be at least 0, max_requests and max_bytes at least 1")

    async def fill(
        self, endpoint: Endpoint, missing: Sequence[Call], store: Store, stats: RunStats, **options: Any
    ) -> None:
        """:func:`fill_by_batch` with these settings (what :func:`voirdire.llm.calls.fill_store` calls)."""
        await fill_by_batch(endpoint, missing, store, stats, batch=self, **options)

    @classmethod
    def from_config(cls, value: Any, *, key: str) -> BatchOptions | None:
        """``batch:`` as a config gives it: false/absent (None), true (the defaults) or a mapping."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        try:
            return cls(**{name: value[name] for name in cls.__dataclass_fields__ if value.get(name) is not None})
        except (TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(str(exc), key=key) from None


@dataclass
class BatchStats:
    """What the provider batches of one run did (in the judging job's summary as ``batch``)."""

    submitted: int = 0  # batches this run created
    resumed: int = 0  # batches an earlier run left running (or unread), picked up
    requests: int = 0  # requests this run put in batches
    answered: int = 0  # answers read from the batches and stored
    unaccepted: int = 0  # answers the caller's rule did not accept: asked again directly
    error_lines: int = 0  # requests in an error file (rejected or failed by the provider): asked again directly
    not_run: int = 0  # requests an expired, cancelled or failed batch did not run
    resubmitted: int = 0  # requests put in a new batch after their batch did not run them
    direct: int = 0  # requests asked directly after the batches (error lines, not accepted, not run)
    unused: int = 0  # answers of a resumed batch that this run does not ask for (paid, not stored)
    ended: dict[str, int] = field(default_factory=dict)  # batches read, by final status
    batch_ids: list[str] = field(default_factory=list)  # every batch the store records (this run's and earlier)

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------- prices
def batch_prices(litellm: Any, model: str) -> tuple[float, float] | None:
    """Per-token (input, output) batch prices from litellm's cost map; None when it has none."""
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # noqa: BLE001 - unknown model: no price
        return None
    prices = (info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches"))
    return None if None in prices else (float(prices[0]), float(prices[1]))


def batch_token_cost(litellm: Any, model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
    """The batch price of that many tokens, and whether it is assumed: litellm's batch prices
    where its cost map has them, else half the direct price (:func:`voirdire.llm.calls.token_cost`),
    which is what OpenAI, Anthropic, Gemini and Mistral charge for a batch."""
    prices = batch_prices(litellm, model)
    if prices is not None:
        return prompt_tokens * prices[0] + completion_tokens * prices[1], False
    return token_cost(litellm, model, prompt_tokens, completion_tokens) / 2, True


def estimated_batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, bool]:
    """What that many tokens cost in a batch (None without a price) and whether the batch price
    is assumed (half the direct one). The local model: 0, nothing assumed."""
    from .calls import _is_local, has_price

    if _is_local(model):
        return 0.0, False
    litellm = _litellm()
    if not has_price(litellm, model) and batch_prices(litellm, model) is None:
        return None, False
    return batch_token_cost(litellm, model, prompt_tokens, completion_tokens)


# ---------------------------------------------------------------------------- the provider
def provider_of(litellm: Any, model: str) -> tuple[str, str]:
    """The model's name at its provider and the provider (litellm's reading of the model string)."""
    try:
        name, provider, _, _ = litellm.get_llm_provider(model=model)
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"litellm does not know the provider of {model!r}: {exc}") from None
    if provider not in BATCH_PROVIDERS:
        raise ConfigError(
            f"{model!r} is served by {provider!r}, whose batches litellm cannot create (it can for "
            f"{', '.join(BATCH_PROVIDERS)}); set batch: false for this judge"
        )
    return name, provider


def jsonl_lines(calls: Sequence[Call], model_name: str) -> Iterator[bytes]:
    """One batch line per call: its store key as ``custom_id`` and exactly the body a direct call
    sends (the model named as its provider names it)."""
    for call in calls:
        body = call.request.body() | {"model": model_name}
        line = {"custom_id": call.key, "method": "POST", "url": ENDPOINT, "body": body}
        yield (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def chunks(calls: Sequence[Call], model_name: str, max_requests: int, max_bytes: int) -> Iterator[tuple[list, bytes]]:
    """The calls cut into batches within the provider's limits: (calls, their JSONL)."""
    batch: list[Call] = []
    data: list[bytes] = []
    size = 0
    for call, line in zip(calls, jsonl_lines(calls, model_name), strict=True):
        if batch and (len(batch) >= max_requests or size + len(line) > max_bytes):
            yield batch, b"".join(data)
            batch, data, size = [], [], 0
        batch.append(call)
        data.append(line)
        size += len(line)
    if batch:
        yield batch, b"".join(data)


class Client:
    """litellm's file and batch calls for one endpoint, each retried on transient errors.

    Each call is litellm's synchronous function on a worker thread (``asyncio.to_thread``), not its
    ``a``-prefixed coroutine: litellm builds a fresh HTTP client for every file and batch call and
    leaves it to the garbage collector. An async client's finalizer schedules its close on whatever
    event loop runs in the thread where the collection happens, after its sockets' own finalizers
    have freed their descriptors; that late close then unregisters the descriptor number from the
    event loop, which by then may belong to a new connection: the connection never reads its
    answer and its request waits out the whole timeout before it is sent again (docs/batch.md). A
    synchronous client's sockets are never registered with an event loop, so collecting it cannot
    touch one. The calls are few (an upload, a create, a look every ``poll_s``, two reads), so a
    thread each costs nothing.
    """

    def __init__(self, litellm: Any, endpoint: Endpoint, provider: str, secret: str | None, attempts: int) -> None:
        self.litellm = litellm
        self.secret = secret
        self.attempts = attempts
        # no resend inside the SDK (its default is 2): a create retried there after a lost answer
        # would make a second batch, paid twice; _call resends, and find() looks for it first
        self.kwargs: dict[str, Any] = {"custom_llm_provider": provider, "timeout": endpoint.timeout_s, "max_retries": 0}
        if endpoint.api_base:
            self.kwargs["api_base"] = endpoint.api_base
        if secret is not None:
            self.kwargs["api_key"] = secret

    async def _call(self, what: str, function: Callable[..., Any], **kwargs: Any) -> Any:
        for attempt in range(1, self.attempts + 1):
            try:
                return await asyncio.to_thread(function, **kwargs, **self.kwargs)
            except Exception as exc:  # noqa: BLE001 - classified here
                if is_permanent(exc) or attempt == self.attempts:
                    message = redact(f"{type(exc).__name__}: {exc}", self.secret).splitlines()[0][:500]
                    raise BatchError(f"{what} failed: {message}", gone=type(exc).__name__ == "NotFoundError") from None
                log.warning(
                    "%s failed (attempt %d of %d), retrying: %s",
                    what,
                    attempt,
                    self.attempts,
                    redact(str(exc), self.secret).splitlines()[0][:200],
                )
                delay = retry_delay(exc, attempt)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def upload(self, data: bytes) -> str:
        file = await self._call(
            "uploading the batch input", self.litellm.create_file, file=("voirdire-batch.jsonl", data), purpose="batch"
        )
        return _field(file, "id")

    async def create(self, input_file_id: str) -> Any:
        return await self._call(
            f"creating the batch of {input_file_id}",
            self.litellm.create_batch,
            completion_window="24h",
            endpoint=ENDPOINT,
            input_file_id=input_file_id,
            metadata={"voirdire_input_file": input_file_id},
        )

    async def retrieve(self, batch_id: str) -> Any:
        return await self._call(f"looking at batch {batch_id}", self.litellm.retrieve_batch, batch_id=batch_id)

    async def content(self, file_id: str) -> bytes:
        found = await self._call(f"reading file {file_id}", self.litellm.file_content, file_id=file_id)
        return file_bytes(found)

    async def find(self, input_file_id: str, since: float) -> Any | None:
        """The provider's batch of ``input_file_id`` (created at ``since`` or later), if there is one.

        The list's order is not promised: paging stops early only on a page wholly older than an
        hour before ``since`` once the batches read so far show the list newest first (OpenAI's
        order): ``created_at`` never rising and falling at least once. Equal stamps (batches made in
        the same second, or one batch a page) say nothing of the order: an oldest-first list looks
        the same, and stopping there would miss the batch on a later page and pay for it twice;
        otherwise every page is read. ``has_more`` absent means: go on while pages have batches (as
        the OpenAI client does)."""
        after = None
        stamps: list[Any] = []  # created_at of every batch read, in the list's order
        while True:
            page = await self._call(
                "listing the batches", self.litellm.list_batches, limit=100, **({"after": after} if after else {})
            )
            batches = list(_field(page, "data") or [])
            for batch in batches:
                if _field(batch, "input_file_id") == input_file_id:
                    return batch
            if not batches or _field(page, "has_more") is False:
                return None
            created = [_field(b, "created_at") for b in batches]
            stamps.extend(created)
            pairs = list(zip(stamps, stamps[1:]))
            newest_first = None not in stamps and all(a >= b for a, b in pairs) and any(a > b for a, b in pairs)
            if newest_first and float(created[0]) < since - 3600:  # the rest is older still
                return None
            following = _field(page, "last_id") or _field(batches[-1], "id")
            if following == after:
                return None  # a provider that ignores the cursor: no other page to read
            after = following


def file_bytes(found: Any) -> bytes:
    """The bytes of what ``litellm.file_content`` returns: the OpenAI client's binary response
    (``.content``, also ``.read()`` and ``.text``), or bytes or text themselves."""
    if isinstance(found, bytes | bytearray | memoryview):
        return bytes(found)
    if isinstance(found, str):
        return found.encode("utf-8")
    content = getattr(found, "content", None)
    if isinstance(content, bytes | bytearray | memoryview | str):
        return file_bytes(content)
    read = getattr(found, "read", None)
    if callable(read):
        return file_bytes(read())
    text = getattr(found, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8")
    raise BatchError(f"a file's content came back as {type(found).__name__}, which has no bytes to read")


def jsonl_entries(content: bytes, file_id: str) -> Iterator[tuple[int, dict]]:
    """The entries of a batch output or error file, with their line numbers: any line end (LF,
    CRLF), blank lines skipped, the last line with or without its newline, a byte-order mark
    ignored. A line that is not a JSON object stops the read with the file and line named."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BatchError(f"file {file_id} is not UTF-8 ({exc})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BatchError(f"file {file_id}:{number}: not a JSON line ({exc})") from None
        if not isinstance(entry, dict):
            raise BatchError(f"file {file_id}:{number}: a JSON {type(entry).__name__}, not an object")
        yield number, entry


class BatchError(CallsIncomplete):
    """The batch API refused or failed for good (an upload, a creation, a look, a download);
    ``gone``: the provider no longer knows the batch or file (deleted, or past its retention)."""

    def __init__(self, message: str, *, gone: bool = False) -> None:
        super().__init__(message)
        self.gone = gone


# ---------------------------------------------------------------------------- one run
@dataclass
class _Run:
    """One :func:`fill_by_batch` call's state."""

    endpoint: Endpoint
    calls: dict[str, Call]
    store: Store
    stats: RunStats
    tally: BatchStats
    options: BatchOptions
    accept: Accept
    reasks: int
    client: Client
    model_name: str
    provider: str
    name: str
    progress: bool
    prices: dict[tuple[int, int], float] = field(default_factory=dict)
    unseen: dict[str, float] = field(default_factory=dict)
    """Batch and file ids the provider answered 404 for, and when it first did (this run)."""

    def gone(self, ident: str) -> bool:
        """After a 404 for ``ident``: whether the provider has not known it for ``consistency_s``
        (then it is gone; before, it may not be visible yet: look again)."""
        first = self.unseen.setdefault(ident, time.monotonic())
        return time.monotonic() - first >= self.options.consistency_s

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        tokens = (prompt_tokens, completion_tokens)
        if tokens not in self.prices:
            self.prices[tokens] = batch_token_cost(self.client.litellm, self.endpoint.model, *tokens)[0]
        return self.prices[tokens]

    def routes(self) -> dict[str, list[Call]]:
        """The calls the store lacks and no unread batch carries, by where they go next (:func:`route`)."""
        in_batch = {key for row in self.store.batches(unread=True) for key in self.store.batch_keys(row.input_file_id)}
        have = self.store.existing(self.calls)
        left = [c for c in self.calls.values() if c.key not in in_batch and c.key not in have]
        history = self.store.batch_history(c.key for c in left)
        routes: dict[str, list[Call]] = {"batch": [], "direct": []}
        for call in left:
            routes[route(history.get(call.key, []), self.options.resubmits)].append(call)
        return routes

    # -------------------------------------------------------------- submitting
    async def settle(self, *, create: bool = True) -> None:
        """Batches whose input was uploaded and recorded, but whose creation was not: find the
        batch the provider made of it before the job stopped, or create it now (``create``; a
        direct run's collection does not: a batch never created is closed, its requests not run,
        and nothing was paid for them)."""
        for row in self.store.batches(unread=True):
            if row.state != "submitting":
                continue
            try:
                found = await self.client.find(row.input_file_id, row.created)
                # a list may lag behind a creation: look again until consistency_s after the upload
                while found is None and (young := self.options.consistency_s - (time.time() - row.created)) > 0:
                    if not create:
                        raise BatchPending(
                            f"{self.name}: the provider's list of batches does not show the batch of "
                            f"{row.input_file_id} (recorded in {self.store.path}) yet, {young:.0f} s within the "
                            f"{self.options.consistency_s:g} s a list may lag behind a creation; nothing is asked, so "
                            "that none of its requests is paid twice: rerun in a few minutes"
                        )
                    await asyncio.sleep(min(self.options.poll_s, young))
                    found = await self.client.find(row.input_file_id, row.created)
            except BatchError as exc:
                if not create:
                    raise BatchPending(
                        f"{self.name}: cannot tell whether the provider created the batch of {row.input_file_id} "
                        f"(recorded in {self.store.path}) before an earlier run stopped ({exc}); nothing is asked, "
                        "so that none of its requests is paid twice: rerun when the provider answers"
                    ) from None
                log.warning(
                    "%s: cannot list the provider's batches (%s); creating the batch of %s, which "
                    "the stopped job may have created already",
                    self.name,
                    exc,
                    row.input_file_id,
                )
                found = None
            if found is not None:
                log.info(
                    "%s: batch %s of %s was created before the job stopped; picked up",
                    self.name,
                    _field(found, "id"),
                    row.input_file_id,
                )
                self.store.batch_submitted(row.input_file_id, _field(found, "id"))
                continue
            if not create:
                keys = self.store.batch_keys(row.input_file_id)
                closed = {key: BatchOutcome("missing", detail="the batch was never created") for key in keys}
                with self.store.transaction():
                    self.store.batch_read(row.input_file_id, closed, {"missing": len(keys)})
                log.info(
                    "%s: the batch of %s was never created (nothing paid): its %d requests are asked directly",
                    self.name,
                    row.input_file_id,
                    len(keys),
                )
                continue
            batch = await self.client.create(row.input_file_id)
            self.store.batch_submitted(row.input_file_id, _field(batch, "id"))
            self.tally.submitted += 1
            self.tally.requests += row.requests

    async def submit(self, calls: Sequence[Call]) -> None:
        for part, data in chunks(calls, self.model_name, self.options.max_requests, self.options.max_bytes):
            input_file_id = await self.client.upload(data)
            self.store.batch_begin(input_file_id, self.provider, self.endpoint.model, [c.key for c in part])
            batch = await self.client.create(input_file_id)
            self.store.batch_submitted(input_file_id, _field(batch, "id"))
            self.tally.submitted += 1
            self.tally.requests += len(part)
            log.info(
                "%s: batch %s submitted: %d requests (%d bytes)", self.name, _field(batch, "id"), len(part), len(data)
            )

    # -------------------------------------------------------------- waiting
    async def wait(self, rows: Sequence[BatchRow], deadline: float) -> list[BatchRow]:
        """Poll ``rows`` until each has ended (read as it ends) or the deadline; returns those left running."""
        from tqdm.auto import tqdm

        pending = {row.input_file_id: row for row in rows}
        done = dict.fromkeys(pending, 0)
        bar = tqdm(
            total=sum(r.requests for r in rows), desc=f"{self.name} (batch)", unit="request", disable=not self.progress
        )
        try:
            while pending:
                for input_file_id, row in list(pending.items()):
                    try:
                        batch = await self.client.retrieve(row.batch_id)
                        self.unseen.pop(row.batch_id, None)
                    except BatchError as exc:
                        if not exc.gone:
                            raise
                        if not self.gone(row.batch_id):  # maybe not visible yet: look again
                            log.info("%s: %s (not believed yet: looked at again)", self.name, exc)
                            pending[input_file_id] = _with_status(row, "not found")
                            continue
                        batch = {"id": row.batch_id, "status": "gone", "errors": {"data": [{"message": str(exc)}]}}
                    status = _field(batch, "status")
                    if status != row.provider_status:
                        self.store.batch_status(input_file_id, status)
                        pending[input_file_id] = row = _with_status(row, status)
                    counts = _field(batch, "request_counts")
                    done[input_file_id] = int(_field(counts, "completed") or 0) + int(_field(counts, "failed") or 0)
                    if status in (*ENDED, "gone"):
                        if await self.read(row, batch):
                            done[input_file_id] = row.requests
                            del pending[input_file_id]
                        else:
                            pending[input_file_id] = _with_status(row, f"{status}, its files not found yet")
                bar.n = min(bar.total, sum(done.values()))
                bar.refresh()
                if not pending or time.monotonic() > deadline:
                    break
                await asyncio.sleep(self.options.poll_s)
        finally:
            bar.close()
        return list(pending.values())

    # -------------------------------------------------------------- reading
    async def read(self, row: BatchRow, batch: Any) -> bool:
        """Store a finished batch's answers and record what became of each of its requests; False
        (nothing read) when one of its files is not visible yet (look again)."""
        status = _field(batch, "status")
        keys = self.store.batch_keys(row.input_file_id)
        wanted = set(keys)
        answers: dict[str, dict] = {}
        outcomes: dict[str, BatchOutcome] = {}
        strays = 0  # lines naming no request of this batch
        if status == "gone":  # what it answered cannot be read: its requests go into a new batch
            outcomes = {key: BatchOutcome("missing", detail=f"batch {row.batch_id} is gone") for key in keys}
            log.warning(
                "%s: the provider no longer knows batch %s: its %d requests are asked again",
                self.name,
                row.batch_id,
                len(keys),
            )
        else:
            # every ended batch's files are read, whatever its status: an expired or cancelled batch's
            # output holds the requests it ran (paid), and a failed one, should it have files, too
            for name in ("output_file_id", "error_file_id"):
                if file_id := _field(batch, name):
                    try:
                        content = await self.client.content(file_id)
                        self.unseen.pop(file_id, None)
                    except BatchError as exc:
                        if not exc.gone:
                            raise
                        if not self.gone(file_id):  # maybe not visible yet: the batch is read at the next look
                            log.info("%s: %s (not believed yet: read at the next look)", self.name, exc)
                            return False
                        log.warning("%s: %s: the requests it held are asked again", self.name, exc)
                        continue
                    for number, entry in jsonl_entries(content, file_id):
                        if entry.get("custom_id") in wanted:
                            self._line(entry, answers, outcomes)
                        else:
                            strays += 1
                            log.warning(
                                "%s: file %s:%d names no request of batch %s (custom_id %r): skipped",
                                self.name,
                                file_id,
                                number,
                                row.batch_id,
                                str(entry.get("custom_id"))[:80],
                            )
            if status == "failed":
                errors = _field(_field(batch, "errors"), "data") or []
                detail = "; ".join(f"{_field(e, 'code')}: {_field(e, 'message')}" for e in errors)[:500] or "failed"
                detail = redact(detail, self.client.secret)
                left = wanted - answers.keys() - outcomes.keys()
                outcomes |= {key: BatchOutcome("failed", detail=detail) for key in left}
                log.warning(
                    "%s: batch %s failed (%s): its %d requests are asked directly",
                    self.name,
                    row.batch_id,
                    detail,
                    len(left),
                )
        for key in wanted - answers.keys() - outcomes.keys():  # in neither file: not run
            outcomes[key] = BatchOutcome("missing", detail=f"not run: the batch {status}")
        turnaround = max(0.0, time.time() - row.created)
        history = self.store.batch_history(k for k in answers if k in self.calls)
        records = []
        for key, body in answers.items():
            answer = Answer.from_response(body)
            cost = self.price(answer.prompt_tokens, answer.completion_tokens)
            paid = BatchOutcome("answered", answer.prompt_tokens, answer.completion_tokens, cost)
            self.stats.prompt_tokens += answer.prompt_tokens
            self.stats.completion_tokens += answer.completion_tokens
            self.stats.cost += cost
            call = self.calls.get(key)
            if call is None:
                outcomes[key] = BatchOutcome("unused", *_tokens_and_cost(paid))
                continue
            before = carried(history.get(key, []))
            verdict = self.accept(answer)
            if not verdict.ok and before.attempts + 1 < self.reasks + 1:
                outcomes[key] = BatchOutcome("unaccepted", *_tokens_and_cost(paid), detail=(answer.text or "")[:200])
                continue
            outcomes[key] = paid
            records.append(
                _record(
                    call,
                    answer,
                    verdict,
                    attempts=before.attempts + 1,
                    prompt_tokens=before.prompt_tokens + answer.prompt_tokens,
                    completion_tokens=before.completion_tokens + answer.completion_tokens,
                    cost=before.cost + cost,
                    latency_s=turnaround,
                    created=time.time(),
                )
            )
        counts = {name: sum(o.outcome == name for o in outcomes.values()) for name in OUTCOMES}
        with self.store.transaction():
            stored = sum(self.store.put(record) for record in records)
            self.store.batch_read(row.input_file_id, outcomes, counts)
        self.stats.stored += stored
        self.stats.unparsed += sum(r.status != "ok" for r in records)
        self.tally.answered += counts["answered"]
        self.tally.unaccepted += counts["unaccepted"]
        self.tally.unused += counts["unused"]
        self.tally.error_lines += counts["error"]
        self.tally.not_run += counts["missing"] + counts["failed"]
        self.tally.ended[status] = self.tally.ended.get(status, 0) + 1
        log.info(
            "%s: batch %s %s: %d answered and stored, %d not accepted (asked again directly), %d error lines "
            "(asked again directly), %d not run (%s), %d paid but not asked for by this run, %d lines naming no "
            "request of it (skipped)",
            self.name,
            row.batch_id,
            status,
            counts["answered"],
            counts["unaccepted"],
            counts["error"],
            counts["missing"] + counts["failed"],
            "asked directly" if status == "failed" else "into a new batch, or directly",
            counts["unused"],
            strays,
        )
        return True

    def _line(self, entry: dict, answers: dict[str, dict], outcomes: dict[str, BatchOutcome]) -> None:
        """One line of an output or error file, matched to its request by ``custom_id`` (never by
        position): an answer (``response.status_code`` 200, a body with choices, no ``error``), or
        an error, whichever file it is in (a non-200 response with an error body; or ``error`` set
        and ``response`` null)."""
        key = entry["custom_id"]
        response = entry.get("response")
        response = response if isinstance(response, dict) else {}
        body = response.get("body")
        if isinstance(body, str):  # a body given as JSON text
            try:
                body = json.loads(body)
            except json.JSONDecodeError:
                body = {"error": {"message": body[:200]}}
        error = entry.get("error")
        status = response.get("status_code")
        if status == 200 and isinstance(body, dict) and body.get("choices") and not error:
            answers[key] = body
            outcomes.pop(key, None)
            return
        if key in answers:
            return
        error = error or (body.get("error") if isinstance(body, dict) else None) or {}
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else str(error)
        detail = redact(f"{response.get('status_code') or code}: {message}", self.client.secret)[:500]
        outcomes[key] = BatchOutcome("missing" if code in NOT_RUN else "error", detail=detail)


def _with_status(row: BatchRow, status: str) -> BatchRow:
    return BatchRow(**{**asdict(row), "provider_status": status})


def _tokens_and_cost(outcome: BatchOutcome) -> tuple[int | None, int | None, float | None]:
    return outcome.prompt_tokens, outcome.completion_tokens, outcome.cost


def carried(history: Sequence[BatchOutcome]) -> Carried:
    """What a request's batch answers that were not accepted cost: its attempts so far."""
    unaccepted = [o for o in history if o.outcome == "unaccepted"]
    return Carried(
        attempts=len(unaccepted),
        prompt_tokens=sum(o.prompt_tokens or 0 for o in unaccepted),
        completion_tokens=sum(o.completion_tokens or 0 for o in unaccepted),
        cost=sum(o.cost or 0.0 for o in unaccepted),
    )


def route(history: Sequence[BatchOutcome], resubmits: int) -> str:
    """Where a request the store lacks goes next, from what its batches did: ``batch`` (never in
    one, or not run by an expired or cancelled batch at most ``resubmits`` times) or ``direct``
    (an error line, an answer not accepted, a failed batch, not run too often)."""
    last = history[-1].outcome if history else None
    if last in (None, "unused"):
        return "batch"
    if last == "missing":
        return "batch" if sum(o.outcome == "missing" for o in history) <= resubmits else "direct"
    return "direct"


async def fill_by_batch(
    endpoint: Endpoint,
    missing: Sequence[Call],
    store: Store,
    stats: RunStats,
    *,
    batch: BatchOptions,
    direct: Callable[[Sequence[Call], Mapping[str, Carried]], Awaitable[None]],
    accept: Accept,
    reasks: int,
    progress: bool,
    desc: str | None,
    transport_attempts: int,
    config_key: str | None,
) -> None:
    """Get ``missing`` (calls the store lacks) answered through provider batches, then ``direct``
    what the batches could not answer (see the module docstring). Sets ``stats.batch`` (a
    :class:`BatchStats`) and, when batches are still running at the deadline,
    ``stats.batch_pending``."""
    litellm = _litellm()
    model_name, provider = provider_of(litellm, endpoint.model)
    secret = endpoint.api_key(key=config_key)
    name = desc or endpoint.model
    run = _Run(
        endpoint=endpoint,
        calls={c.key: c for c in missing},
        store=store,
        stats=stats,
        tally=BatchStats(),
        options=batch,
        accept=accept,
        reasks=reasks,
        client=Client(litellm, endpoint, provider, secret, transport_attempts),
        model_name=model_name,
        provider=provider,
        name=name,
        progress=progress,
    )
    stats.batch = run.tally
    run.tally.resumed = len(store.batches(unread=True))
    if run.tally.resumed:
        log.info(
            "%s: %d batch(es) of an earlier run not read yet: picked up, their requests not sent again",
            name,
            run.tally.resumed,
        )
    await run.settle()
    deadline = time.monotonic() + batch.timeout_s
    running: list[BatchRow] = []
    while True:
        routes = run.routes()
        if routes["batch"]:
            run.tally.resubmitted += sum(bool(h) for h in store.batch_history(c.key for c in routes["batch"]).values())
            await run.submit(routes["batch"])
        unread = store.batches(unread=True)
        if not unread:
            break
        running = await run.wait(unread, deadline)
        if running:
            break
    to_direct = run.routes()["direct"]
    run.tally.batch_ids = [row.batch_id for row in store.batches() if row.batch_id]
    if running:
        ids = ", ".join(str(row.batch_id) for row in running)
        stats.batch_pending = (
            f"{name}: {len(running)} batch(es) still running at the provider after {batch.timeout_s:g} s ({ids}); "
            f"they are recorded in {store.path}: a rerun picks them up and sends none of their requests again"
        )
    if to_direct:
        history = store.batch_history(c.key for c in to_direct)
        run.tally.direct = len(to_direct)
        log.info(
            "%s: %d requests the batches could not answer (error lines, answers not accepted, not run) are "
            "asked directly",
            name,
            len(to_direct),
        )
        await direct(to_direct, {c.key: carried(history.get(c.key, [])) for c in to_direct})


# ---------------------------------------------------------------------------- the direct path
@dataclass(frozen=True)
class CollectFirst:
    """The direct path of a judge without ``batch:`` (:data:`DIRECT`, what its job hands
    :func:`voirdire.llm.calls.fill_store`): the provider batches an earlier batch run of the same
    judge left in its store, not read yet, are collected before anything is asked
    (:func:`collect_batches`), so that a direct run never asks, and pays for, a request a batch
    is answering. Without such batches it is the plain direct path."""

    options: BatchOptions = field(default_factory=BatchOptions)
    """How long the provider may not know a batch before it is believed (``consistency_s``);
    the rest of the settings is a batch run's."""

    async def fill(
        self,
        endpoint: Endpoint,
        missing: Sequence[Call],
        store: Store,
        stats: RunStats,
        *,
        direct: Callable[[Sequence[Call], Mapping[str, Carried]], Awaitable[None]],
        **options: Any,
    ) -> None:
        unread = store.batches(unread=True)
        if unread and not await collect_batches(endpoint, missing, store, stats, options=self.options, **options):
            return  # a batch still running (stats.batch_pending): nothing asked
        have = store.existing(c.key for c in missing)
        left = [c for c in missing if c.key not in have]
        if left:
            history = store.batch_history(c.key for c in left)
            await direct(left, {c.key: carried(history.get(c.key, [])) for c in left})


DIRECT = CollectFirst()
"""The direct path that collects an earlier batch run's batches first (:class:`CollectFirst`)."""


async def collect_batches(
    endpoint: Endpoint,
    missing: Sequence[Call],
    store: Store,
    stats: RunStats,
    *,
    accept: Accept,
    reasks: int,
    progress: bool,
    desc: str | None,
    transport_attempts: int,
    config_key: str | None,
    options: BatchOptions | None = None,
) -> bool:
    """A direct run over a store with provider batches not read yet (an earlier batch run of the
    judge, killed or timed out, then ``batch:`` turned off): look at each once; a batch that has
    ended is read and its answers stored (as a batch run reads them: accepted, not accepted,
    error lines, each counted in ``stats.batch``); a batch whose creation was never recorded is
    looked up among the provider's batches and closed if there is none (nothing was paid). True
    when every batch is read. A batch still running (or one the provider cannot say it created)
    sets ``stats.batch_pending``, naming the judge, the batch ids and what to do, and nothing is
    asked directly (:func:`voirdire.llm.calls.call_all` raises :class:`voirdire.llm.calls.BatchPending`):
    the direct path does not wait (a batch may take 24 hours) and never asks what a batch is answering."""
    unread = store.batches(unread=True)
    name = desc or endpoint.model
    secret = endpoint.api_key(key=config_key)
    run = _Run(
        endpoint=endpoint,
        calls={c.key: c for c in missing},
        store=store,
        stats=stats,
        tally=BatchStats(resumed=len(unread)),
        options=options or BatchOptions(),
        accept=accept,
        reasks=reasks,
        client=Client(_litellm(), endpoint, unread[0].provider, secret, transport_attempts),
        model_name=endpoint.model,
        provider=unread[0].provider,
        name=name,
        progress=progress,
    )
    stats.batch = run.tally
    log.info(
        "%s: %d provider batch(es) of an earlier batch run not read yet: collected before any direct call, so "
        "that none of their requests is paid twice",
        name,
        len(unread),
    )
    try:
        await run.settle(create=False)
    except BatchPending as exc:
        stats.batch_pending = str(exc)
        return False
    running = await run.wait(store.batches(unread=True), deadline=time.monotonic())  # one look at each
    run.tally.batch_ids = [row.batch_id for row in store.batches() if row.batch_id]
    if running:
        ids = ", ".join(f"{row.batch_id} ({row.provider_status or 'submitted'})" for row in running)
        who = config_key or name  # the judge's config entry: judges[NAME]
        stats.batch_pending = (
            f"{who}: {len(running)} provider batch(es) of an earlier batch run are still running ({ids}; recorded in "
            f"{store.path}). This direct run asks nothing, so that no request is paid twice (what the ended batches "
            "answered is stored). Rerun once they have ended, or turn batch: back on for this judge (a batch run "
            "waits for them), or cancel them at the provider (a cancelled batch's answered lines are read and kept, "
            "the rest asked directly)."
        )
        return False
    return True
