"""The assistants' LLM caller: an assistant rewrites the sampled passages of one dataset.

A live assistant's rewrites are :class:`~voirdire.llm.Call` s of purpose ``rewrite`` through the
shared call path (cached in the job's store, concurrent, resumable, costed); a recorded one's are
read from a file. Either way the job writes one table, ``passages/rewritten-{name}.parquet``:
``doc_id``, ``original``, ``text`` (None when there is no rewrite), the checks of
:func:`voirdire.assistants.checks.check_rewrites`, and ``used``: whether the experiments
substitute it. An empty or missing rewrite is never used (there is no text to judge); other
flagged rewrites are used unless ``drop_flagged`` (the default keeps and reports them).

:func:`passage_calls` and :func:`run_passage_job` take who is asking (purpose, provenance,
config key) from the caller and never branch on it: the pad probe's LLM padders, which are
assistants with another prompt, run through them from :mod:`voirdire.probes.job`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path

import pandas as pd

from ..formats import atomic_write
from ..llm import Answer, Call, Request, Store, Verdict, call_all, price_known
from ..llm_judge.templates import Template
from .checks import check_rewrites, summarise_checks
from .declarations import LLMAssistant, RecordedAssistant
from .recorded import match_rewrites, read_recorded_rewrites

CHECK_OPTIONS = {"min_length_ratio": "min_ratio", "max_length_ratio": "max_ratio", "copy_similarity": "copy_similarity"}
"""``rewriting`` config keys -> the keyword of :func:`voirdire.assistants.checks.check_rewrite` they set."""


def accept_text(answer: Answer) -> Verdict:
    """A rewrite is any text; an empty one is stored as such (the checks flag it), never re-asked."""
    return Verdict(True, answer.text or "", "text")


def passage_calls(caller: LLMAssistant, originals: Mapping[str, str], *, purpose: str, provenance: str) -> list[Call]:
    """One call per passage: ``caller``'s template with the passage in its slot."""
    template = Template.from_file(caller.prompt_file)
    calls = []
    for doc_id, text in originals.items():
        request = Request.chat(
            purpose,
            caller.model,
            template.render("", text),
            template_sha256=template.sha256,
            sample=0,
            accept="text",
            temperature=caller.temperature,
            max_tokens=caller.max_tokens,
            seed=caller.seed,
        )
        calls.append(Call(request, caller.name, {"doc_id": doc_id, "provenance": provenance}))
    return calls


def rewrite_calls(assistant: LLMAssistant, originals: Mapping[str, str]) -> list[Call]:
    """The assistant's rewrite of every sampled passage (purpose ``rewrite``)."""
    return passage_calls(assistant, originals, purpose="rewrite", provenance=assistant.provenance)


def _table(originals: Mapping[str, str], rewrites: Mapping[str, str | None], options: dict, drop_flagged: bool):
    frame = pd.DataFrame(
        {"doc_id": list(originals), "original": list(originals.values()), "text": [rewrites.get(d) for d in originals]}
    )
    checks = check_rewrites(frame, **{CHECK_OPTIONS[k]: v for k, v in options.items()})
    table = frame.merge(checks, on="doc_id", how="left")
    missing = table["text"].isna()
    table["missing"] = missing
    table["used"] = ~missing & ~table["empty"] & (~table["flagged"] if drop_flagged else True)
    return table


def _write(table: pd.DataFrame, summary: dict, out: str | Path, summary_out: str | Path) -> dict:
    with atomic_write(out, "wb") as fh:
        table.to_parquet(fh, index=False)
    with atomic_write(summary_out) as fh:
        json.dump(summary, fh, indent=2, default=str)
    return summary


def run_passage_job(
    caller: LLMAssistant,
    calls: list[Call],
    originals: Mapping[str, str],
    *,
    store_path: str | Path,
    out: str | Path,
    summary_out: str | Path,
    options: dict,
    desc: str,
    config_key: str,
    drop_flagged: bool = False,
    max_in_flight: int | None = None,
    progress: bool = True,
) -> dict:
    """Ask ``calls`` (one per passage of ``originals``) through the store, check every answer as a
    rewrite, write the table and the summary; returns the summary."""
    with Store(store_path) as store:
        stats = call_all(
            caller.endpoint,
            calls,
            store,
            accept=accept_text,
            max_in_flight=max_in_flight,
            progress=progress,
            desc=desc,
            config_key=config_key,
        )
        stored = {r.key: r for r in store.get(c.key for c in calls)}
        known = price_known(caller.model, store)  # as the store keeps it: no litellm for a job that asked nothing
    rewrites = {c.items["doc_id"]: stored[c.key].raw or "" for c in calls}
    table = _table(originals, rewrites, options, drop_flagged)
    records = list(stored.values())
    summary = {
        "assistant": caller.name,
        "kind": "llm",
        "model": caller.model,
        "model_versions": sorted({r.model_version for r in records if r.model_version}),
        "passages": len(originals),
        "used": int(table["used"].sum()),
        "drop_flagged": drop_flagged,
        "checks": summarise_checks(table),
        "calls_this_run": stats.calls - stats.cached,
        "cached": stats.cached,
        "cost_this_run_usd": stats.cost,
        "price_known": known,
        "cost_ledger_usd": float(sum(r.cost for r in records)),
        "completion_tokens_ledger": int(sum(r.completion_tokens or 0 for r in records)),
        "wall_s": stats.wall_s,
    }
    return _write(table, summary, out, summary_out)


def run_rewrite_job(
    assistant: LLMAssistant,
    originals: Mapping[str, str],
    *,
    store_path: str | Path,
    out: str | Path,
    summary_out: str | Path,
    options: dict,
    drop_flagged: bool = False,
    max_in_flight: int | None = None,
    progress: bool = True,
) -> dict:
    """Rewrite every sampled passage through the store; returns the job's summary."""
    return run_passage_job(
        assistant,
        rewrite_calls(assistant, originals),
        originals,
        store_path=store_path,
        out=out,
        summary_out=summary_out,
        options=options,
        desc=f"rewrite: {assistant.name}",
        config_key=f"assistants.{assistant.name}",
        drop_flagged=drop_flagged,
        max_in_flight=max_in_flight,
        progress=progress,
    )


def run_recorded_rewrites(
    assistant: RecordedAssistant,
    originals: Mapping[str, str],
    known: Collection[str] | None,
    *,
    out: str | Path,
    summary_out: str | Path,
    options: dict,
    drop_flagged: bool = False,
) -> dict:
    """Precomputed rewrites of the sampled passages; unknown ids are an error, missing ones listed."""
    found, missing = match_rewrites(
        read_recorded_rewrites(assistant.rewrites), originals.keys(), known, str(assistant.rewrites)
    )
    table = _table(originals, found, options, drop_flagged)
    summary = {
        "assistant": assistant.name,
        "kind": "recorded",
        "rewrites": str(assistant.rewrites),
        "passages": len(originals),
        "used": int(table["used"].sum()),
        "drop_flagged": drop_flagged,
        "missing": len(missing),
        "missing_ids": missing,
        "checks": summarise_checks(table[~table["missing"]]),
    }
    return _write(table, summary, out, summary_out)
