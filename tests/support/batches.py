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
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from dataclasses import dataclass, field

from aiohttp import web
from support.loopback import LogEntry, LoopbackServer

BATCH_ERROR = "in-batch server error"
"""The message of a line the batch could not answer (:attr:`BatchLoopback.batch_error_share`)."""


def in_share(custom_id: str, share: float) -> bool:
    """Whether a line falls in the given share of lines (by a hash of its ``custom_id``)."""
    return int(hashlib.sha256(b"share:" + custom_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


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
        file_id = f"file-{next(self._ids):06d}"
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
            raise web.HTTPNotFound(
                text=json.dumps({"error": {"message": "no such object", "type": "invalid_request_error"}}),
                content_type="application/json",
            )
        return found

    async def _file(self, request: web.Request) -> web.Response:
        return web.json_response(self._public(self._found(self.files, request)))

    async def _content(self, request: web.Request) -> web.Response:
        return web.Response(body=self._found(self.files, request)["_content"], content_type="application/octet-stream")

    # ------------------------------------------------------------------ batches
    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            source = self.files.get(body.get("input_file_id"))
            if source is None:
                message = f"input file {body.get('input_file_id')} not found"
                return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=400)
            batch_id = f"batch_{next(self._ids):06d}"
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
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "metadata": body.get("metadata"),
                "_end": end,
            }
            self._lines[batch_id] = lines
            self._auth[batch_id] = request.headers.get("Authorization")
            self.created.append(batch_id)
            return web.json_response(self._public(self.batches[batch_id]))

    async def _list(self, request: web.Request) -> web.Response:
        limit = int(request.query.get("limit", 20))
        after = request.query.get("after")
        with self._lock:
            ids = list(reversed(self.created))
        if after in ids:
            ids = ids[ids.index(after) + 1 :]
        page = [self._public(self.batches[i]) for i in ids[:limit]]
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
            self._step(batch)
            return web.json_response(self._public(batch))

    def _step(self, batch: dict) -> None:
        """Move a batch one step towards its planned end (called under the lock)."""
        now, status, end = int(time.time()), batch["status"], batch["_end"]
        if status in ("completed", "failed", "expired", "cancelled"):
            return
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

    def _run(self, batch: dict, *, keep: float) -> None:
        """Answer the first ``keep`` share of a batch's lines; write its output and error files."""
        lines = self._lines[batch["id"]]
        answered = round(len(lines) * keep)
        output, errors = [], []
        for index, line in enumerate(lines):
            custom_id, body = line["custom_id"], line["body"]
            request_id = f"req_{batch['id']}_{index}"
            if index >= answered:  # not reached before it stopped
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
            (output if status == 200 else errors).append(entry)
        counts = batch["request_counts"]
        counts.update(completed=len(output), failed=len(errors))
        for name, entries in (("output_file_id", output), ("error_file_id", errors)):
            if entries:
                content = "".join(json.dumps(e) + "\n" for e in entries).encode()
                batch[name] = self._new_file(content, "batch_output", f"{batch['id']}_{name}.jsonl")["id"]

    def stats(self) -> dict:
        """Batches created, and answered lines per custom_id (what a client paid for)."""
        with self._lock:
            per_custom_id: dict[str, int] = {}
            for entry in self.log:
                if entry.custom_id is not None and entry.outcome in ("ok", "malformed"):
                    per_custom_id[entry.custom_id] = per_custom_id.get(entry.custom_id, 0) + 1
            return {"created": len(self.created), "answered": per_custom_id}
