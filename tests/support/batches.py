"""The loopback server with the OpenAI Files and Batches protocol, for the batch-judging tests.

:class:`BatchLoopback` is a :class:`~support.loopback.LoopbackServer` (the chat endpoint stays)
that also speaks the batch API a provider offers at half price:

* ``POST /v1/files`` (multipart: ``file``, ``purpose=batch``) stores a JSONL of requests;
* ``POST /v1/batches`` starts a batch of an uploaded file; ``GET /v1/batches`` lists them (newest
  first, ``limit`` and ``after``); ``GET /v1/batches/{id}`` reports its status and
  ``request_counts``;
* ``GET /v1/files/{id}`` and ``GET /v1/files/{id}/content``: a file and its bytes (the output
  JSONL of the answered lines, the error JSONL of the rest).

Each look at a batch moves it one step: ``validating -> in_progress -> finalizing ->
completed``, or to the end :attr:`BatchLoopback.ends` plans for it (``failed`` from validating;
``expired`` or ``cancelled`` after in_progress, with only the first ``keep`` share of its lines
answered). While :attr:`BatchLoopback.hold` is set, a batch stays in_progress (a batch still at
the provider when the client stops). A line is answered when its batch leaves in_progress, by
the chat endpoint's own answer function (:meth:`LoopbackServer.reply`): a batch's answer equals
a direct answer of the same request. Every answered line is logged as a request (with its
``custom_id``), so a test counts, per request, the answers it paid for across both paths.

:class:`Quirks` make it a different server that keeps the same promises: everywhere the OpenAI
Batch API leaves a choice to the provider (the order of the output lines, how long a batch
validates and finalizes, the form of its ids, where and how a failed line is written, what an
expired batch says of the requests it did not run, blank lines, fields left out instead of null,
the order of the list, a batch or file not visible at once), it takes the other one, so that the
client is tested against what the protocol promises, not against this server's habits.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field, fields

from aiohttp import web
from support.loopback import LogEntry, LoopbackServer

BATCH_ERROR = "in-batch server error"
"""The message of a line the batch could not answer (:attr:`BatchLoopback.batch_error_share`)."""


def in_share(custom_id: str, share: float) -> bool:
    """Whether a line falls in the given share of lines (by a hash of its ``custom_id``)."""
    return int(hashlib.sha256(b"share:" + custom_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


@dataclass(frozen=True)
class Quirks:
    """Where a provider may differ from :class:`BatchLoopback`'s defaults and still keep the OpenAI
    Files and Batches protocol (each off by default; :meth:`every` turns them all on)."""

    shuffle: bool = False
    """Output and error lines in a random order, not the input's (the protocol promises none)."""
    slow: int = 0
    """Extra looks a batch spends in ``validating``, ``finalizing`` and ``cancelling`` each."""
    opaque_ids: bool = False
    """Batch and file ids as bare UUIDs, without a ``batch_`` or ``file-`` prefix."""
    not_found: int = 0
    """The first so many looks at each batch answer 404 (a batch not visible yet after creation)."""
    unlisted: int = 0
    """The first so many listings after a batch's creation leave it out (a list not up to date yet)."""
    file_not_found: int = 0
    """The first so many reads of each output or error file answer 404 (a file not visible yet)."""
    ragged_jsonl: bool = False
    """Output and error files with blank lines, CRLF line ends and no newline after the last line."""
    errors_inline: bool = False
    """A line the batch could not answer is written either in the output file with a non-200
    ``response.status_code`` and an ``error`` body, or in the error file with ``response: null``
    and ``error`` set, never as ours writes it (the error file, a 500 response)."""
    unrun_absent: bool = False
    """An expired or cancelled batch leaves the requests it did not run out of both files."""
    random_partial: bool = False
    """Which lines an expired or cancelled batch answered: a share chosen by hash, not the first ones."""
    sparse: bool = False
    """Fields without a value left out of the batch object instead of null (timestamps, file ids,
    ``errors``), and ``request_counts`` absent while the batch validates."""
    oldest_first: bool = False
    """``GET /v1/batches`` lists the oldest batch first."""
    page_size: int = 0
    """The most batches one page of ``GET /v1/batches`` holds, whatever ``limit`` asks (0: ``limit``)."""

    @classmethod
    def every(cls, slow: int = 2, not_found: int = 1, unlisted: int = 1, file_not_found: int = 1) -> Quirks:
        """Every quirk at once."""
        flags = {f.name: True for f in fields(cls) if f.type in (bool, "bool")}
        return cls(
            **flags, slow=slow, not_found=not_found, unlisted=unlisted, file_not_found=file_not_found, page_size=3
        )


NOT_FOUND = {"error": {"message": "no such object", "type": "invalid_request_error"}}


@dataclass
class BatchLoopback(LoopbackServer):
    """``with BatchLoopback(ends=["expired", "completed"]) as server: server.url``."""

    ends: list[str] = field(default_factory=list)
    """How each batch created ends, in order of creation (``completed`` once the list is used up)."""
    keep: float = 0.5
    """The share of an expired or cancelled batch's lines answered before it stopped."""
    batch_error_share: float = 0.0
    """Lines (chosen by a hash of their custom_id) that a batch answers with an error line (a
    server error inside the batch), though the same request asked directly is answered."""
    hold: bool = False
    """Keep every batch in_progress (no line is answered) while set."""
    quirks: Quirks = field(default_factory=Quirks)
    """Where this server differs from the defaults, as a faithful provider may (:class:`Quirks`)."""
    files: dict[str, dict] = field(default_factory=dict)
    batches: dict[str, dict] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    """Batch ids in order of creation: ``len(server.created)`` is how many batches were paid for."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._lock = threading.RLock()  # a batch's lines are answered under it, and answering takes it too
        self._ids = itertools.count(1)
        self._lines: dict[str, list[dict]] = {}
        self._auth: dict[str, str | None] = {}
        self._looks: dict[str, int] = {}  # looks at a batch, listings that could show it, reads of a file
        self._listings: dict[str, int] = {}
        self._reads: dict[str, int] = {}

    def _new_id(self, prefix: str) -> str:
        return str(uuid.uuid4()) if self.quirks.opaque_ids else f"{prefix}{next(self._ids):06d}"

    def _not_found(self) -> web.HTTPNotFound:
        return web.HTTPNotFound(text=json.dumps(NOT_FOUND), content_type="application/json")

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}", self._file)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        return app

    # ------------------------------------------------------------------ files
    def _new_file(self, content: bytes, purpose: str, filename: str) -> dict:
        file_id = self._new_id("file-")
        self.files[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "_content": content,
        }
        return self._public(self.files[file_id])

    @staticmethod
    def _public(record: dict) -> dict:
        return {k: v for k, v in record.items() if not k.startswith("_")}

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        content = upload.file.read() if hasattr(upload, "file") else str(upload).encode()
        filename = getattr(upload, "filename", "upload.jsonl")
        with self._lock:
            return web.json_response(self._new_file(content, str(form.get("purpose", "")), filename))

    def _found(self, table: dict, request: web.Request) -> dict:
        found = table.get(request.match_info["id"])
        if found is None:
            raise self._not_found()
        return found

    async def _file(self, request: web.Request) -> web.Response:
        return web.json_response(self._public(self._found(self.files, request)))

    async def _content(self, request: web.Request) -> web.Response:
        file = self._found(self.files, request)
        if file["purpose"] == "batch_output":
            with self._lock:
                reads = self._reads[file["id"]] = self._reads.get(file["id"], 0) + 1
            if reads <= self.quirks.file_not_found:
                raise self._not_found()
        return web.Response(body=file["_content"], content_type="application/octet-stream")

    def _public_batch(self, batch: dict) -> dict:
        public = self._public(batch)
        return {k: v for k, v in public.items() if v is not None} if self.quirks.sparse else public

    # ------------------------------------------------------------------ batches
    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            source = self.files.get(body.get("input_file_id"))
            if source is None:
                message = f"input file {body.get('input_file_id')} not found"
                return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=400)
            batch_id = self._new_id("batch_")
            lines = [json.loads(line) for line in source["_content"].decode().splitlines() if line.strip()]
            end = self.ends[len(self.created)] if len(self.created) < len(self.ends) else "completed"
            now = int(time.time())
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint"),
                "errors": None,
                "input_file_id": source["id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": now,
                "in_progress_at": None,
                "expires_at": now + 86400,
                "finalizing_at": None,
                "completed_at": None,
                "failed_at": None,
                "expired_at": None,
                "cancelling_at": None,
                "cancelled_at": None,
                "request_counts": None if self.quirks.sparse else {"total": len(lines), "completed": 0, "failed": 0},
                "metadata": body.get("metadata"),
                "_end": end,
                "_waited": 0,
            }
            self._lines[batch_id] = lines
            self._auth[batch_id] = request.headers.get("Authorization")
            self.created.append(batch_id)
            return web.json_response(self._public_batch(self.batches[batch_id]))

    async def _list(self, request: web.Request) -> web.Response:
        limit = int(request.query.get("limit", 20))
        limit = min(limit, self.quirks.page_size) if self.quirks.page_size else limit
        after = request.query.get("after")
        with self._lock:
            ids = [
                i for i in (self.created if self.quirks.oldest_first else reversed(self.created)) if i in self.batches
            ]
            for i in ids:
                self._listings[i] = self._listings.get(i, 0) + 1
            ids = [i for i in ids if self._listings[i] > self.quirks.unlisted]
        if after in ids:
            ids = ids[ids.index(after) + 1 :]
        page = [self._public_batch(self.batches[i]) for i in ids[:limit]]
        return web.json_response(
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(ids) > limit,
            }
        )

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self._found(self.batches, request)
        with self._lock:
            looks = self._looks[batch["id"]] = self._looks.get(batch["id"], 0) + 1
            if looks <= self.quirks.not_found:
                raise self._not_found()
            self._step(batch)
            return web.json_response(self._public_batch(batch))

    def _step(self, batch: dict) -> None:
        """Move a batch one step towards its planned end (called under the lock)."""
        now, status, end = int(time.time()), batch["status"], batch["_end"]
        if status in ("completed", "failed", "expired", "cancelled"):
            return
        if status in ("validating", "finalizing", "cancelling") and batch["_waited"] < self.quirks.slow:
            batch["_waited"] += 1  # a slower provider: more looks in this status
            return
        batch["_waited"] = 0
        if status == "validating":
            if end == "failed":
                batch.update(
                    status="failed",
                    failed_at=now,
                    errors={
                        "object": "list",
                        "data": [
                            {"code": "invalid_request", "message": "the model does not support batches", "line": None}
                        ],
                    },
                )
            else:
                batch.update(status="in_progress", in_progress_at=now)
                if batch["request_counts"] is None:
                    batch["request_counts"] = {"total": len(self._lines[batch["id"]]), "completed": 0, "failed": 0}
        elif status == "in_progress" and not self.hold:
            if end in ("expired", "cancelled"):
                self._run(batch, keep=self.keep)
                stamp = "expired_at" if end == "expired" else "cancelled_at"
                batch.update({"status": end if end == "expired" else "cancelling", stamp: now})
            else:
                self._run(batch, keep=1.0)
                batch.update(status="finalizing", finalizing_at=now)
        elif status == "cancelling":
            batch.update(status="cancelled", cancelled_at=now)
        elif status == "finalizing":
            batch.update(status="completed", completed_at=now)

    def _reached(self, index: int, custom_id: str, lines: list, keep: float) -> bool:
        """Whether a batch that stops early answered this line: the first ``keep`` share of them,
        or (:attr:`Quirks.random_partial`) a share chosen by a hash of the custom_id."""
        if keep >= 1.0:
            return True
        if self.quirks.random_partial:
            return in_share("reached:" + custom_id, keep)
        return index < round(len(lines) * keep)

    def _run(self, batch: dict, *, keep: float) -> None:
        """Answer the first ``keep`` share of a batch's lines; write its output and error files."""
        lines = self._lines[batch["id"]]
        output, errors = [], []
        batch["_ran"] = []
        for index, line in enumerate(lines):
            custom_id, body = line["custom_id"], line["body"]
            request_id = f"req_{batch['id']}_{index}"
            if self._reached(index, custom_id, lines, keep):
                batch["_ran"].append(custom_id)
            else:  # not reached before it stopped
                if self.quirks.unrun_absent:
                    continue
                code = "batch_expired" if batch["_end"] == "expired" else "batch_cancelled"
                errors.append(
                    {
                        "id": request_id,
                        "custom_id": custom_id,
                        "response": None,
                        "error": {"code": code, "message": "not run before the batch stopped"},
                    }
                )
                continue
            _, sha, outcome = self.outcome_for(body)
            if outcome == "ok" and in_share(custom_id, self.batch_error_share):
                outcome = "batch-500"
            self.log.append(LogEntry(sha, outcome, time.time(), self._auth[batch["id"]], custom_id))
            if outcome == "batch-500":
                status, payload = 500, {"error": {"message": BATCH_ERROR, "type": "server_error"}}
            else:  # a timeout inside a batch is the provider's business: answered after its wait
                status, payload = self.reply(body, "ok" if outcome == "timeout" else outcome, self._auth[batch["id"]])
            entry = {
                "id": request_id,
                "custom_id": custom_id,
                "error": None,
                "response": {"status_code": status, "request_id": request_id, "body": payload},
            }
            if status != 200 and self.quirks.errors_inline:
                if in_share("inline:" + custom_id, 0.5):  # in the output file, a non-200 response
                    output.append(entry)
                else:  # in the error file, no response at all
                    errors.append(
                        {**entry, "response": None, "error": {"code": "server_error", "message": BATCH_ERROR}}
                    )
                continue
            (output if status == 200 else errors).append(entry)
        counts = batch["request_counts"]
        counts.update(
            completed=sum(bool(e["response"]) and e["response"]["status_code"] == 200 for e in output),
            failed=sum(not e["response"] or e["response"]["status_code"] != 200 for e in output + errors),
        )
        for name, entries in (("output_file_id", output), ("error_file_id", errors)):
            if entries:
                content = self._jsonl(batch["id"] + name, entries)
                batch[name] = self._new_file(content, "batch_output", f"{batch['id']}_{name}.jsonl")["id"]

    def _jsonl(self, seed: str, entries: list[dict]) -> bytes:
        """A file of entries: one JSON a line, each line ended by a newline; with quirks, in a
        random order, with blank lines, CRLF ends and no newline after the last."""
        if self.quirks.shuffle:
            entries = entries[:]
            random.Random(seed).shuffle(entries)
        if not self.quirks.ragged_jsonl:
            return "".join(json.dumps(e) + "\n" for e in entries).encode()
        ends = itertools.cycle(["\n", "\r\n\r\n", "\n\n\n"])
        return ("\n" + "".join(json.dumps(e) + next(ends) for e in entries).rstrip("\r\n")).encode()

    def ran(self, batch_id: str) -> list[str]:
        """The custom_ids a batch ran (answered, or failed in it), in input order."""
        with self._lock:
            return list(self.batches[batch_id].get("_ran", []))

    def drain(self) -> None:
        """Run every batch to its end, as a provider does whether or not anyone looks at it (a test
        then counts the answers paid for by a batch the client let go)."""
        with self._lock:
            hold, self.hold = self.hold, False
            for batch_id in self.created:
                batch = self.batches.get(batch_id)
                while batch is not None and batch["status"] not in ("completed", "failed", "expired", "cancelled"):
                    self._step(batch)
            self.hold = hold

    def stats(self) -> dict:
        """Batches created, and answered lines per custom_id (what a client paid for)."""
        with self._lock:
            per_custom_id: dict[str, int] = {}
            for entry in self.log:
                if entry.custom_id is not None and entry.outcome in ("ok", "malformed"):
                    per_custom_id[entry.custom_id] = per_custom_id.get(entry.custom_id, 0) + 1
            return {"created": len(self.created), "answered": per_custom_id}
