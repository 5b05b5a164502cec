"""The probes' LLM jobs: a live judge asked again with something changed, and the pad test's
LLM padders.

For one (dataset, judge) the probe job asks, through the shared call path (cached, concurrent,
resumable, costed):

* ``swap`` and ``lists``: the judge's pairwise template (passages, or two result lists) for
  each sampled pair in both orders (purpose ``probe``, acceptance ``choice:AB``);
* ``pad``: a grade for each sampled passage as written and for each padding of it, and the
  pairwise question (original vs padded) in both orders;
* ``injection``: a grade for each non-relevant passage as written and with each template;
* ``persona``: a grade for each pair under the plain prompt (``baseline``), under each
  role's "You are acting as {persona}." prefix, and under the placebo persona's
  (:data:`voirdire.probes.personas.PLACEBO_PERSONA`, condition
  :data:`voirdire.probes.sensitivity.RERUN`): the null the roles are tested against, one more
  call per pair (and sample) that :mod:`voirdire.plan` lists on a row of its own
  (:func:`is_placebo`).

Grades use the judge's own template, so a plain prompt is the very request its pool job made
and is copied from that job's finished store at cost 0 (``seeds``). The job writes one row per
call: ``probe``, ``condition``, ``query_id``, ``doc_id`` (pointwise) or ``first``/``second``
and ``order`` (pairwise), ``sample``, ``label`` or ``choice`` (None when unparsed), status and
raw answer.

A sample row that needs a passage the texts lack (a sample drawn without knowing the texts:
:func:`voirdire.probes.items.draw_probes` leaves such pairs out when it is given them) is not
asked: :func:`without_text` counts them per probe, and the job's summary carries the counts
(``left_out_without_text``).

An LLM padder is an assistant with the pad prompt (:data:`voirdire.probes.items.PAD_PROMPT`):
:func:`run_pad_job` asks it through the assistants' caller
(:func:`voirdire.assistants.job.run_passage_job`) as the pad probe (purpose ``probe``,
provenance ``pad-{name}``), and checks its answers as rewrites.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..assistants.declarations import LLMAssistant
from ..assistants.job import passage_calls, run_passage_job
from ..formats import atomic_write
from ..judges import LLMJudge
from ..llm import Answer, Call, Request, Store, Verdict, call_all, price_known
from ..llm_judge.tasks import GradeAccept, grade_calls
from ..llm_judge.templates import Template
from .items import LISTS_PROMPT, PAIRWISE_PROMPT, inject, pad, render_list
from .personas import PLACEBO_PERSONA, persona_prefix
from .sensitivity import RERUN

CHOICE = "choice:AB"
_STRICT = re.compile(r"^\W*([AB])\W*$", re.IGNORECASE)
_LEAD = re.compile(r"^\W*(?:passage|ranking|list|option|answer)\W*([AB])\b", re.IGNORECASE)
_NAMED = re.compile(r"\b(?:passage|ranking)\s+([AB])\b", re.IGNORECASE)


def parse_choice(text: str | None) -> tuple[str | None, str]:
    """``"A"``/``"B"`` and the rule that read it: the whole answer is the letter (``strict``), it
    leads with "Passage A"/"Ranking B" (``lead``), or names exactly one of them (``named``);
    otherwise, or when it names both, ``(None, "unparsed")``: never a default letter."""
    text = (text or "").strip()
    if found := _STRICT.match(text):
        return found.group(1).upper(), "strict"
    named = {m.upper() for m in _NAMED.findall(text)}
    if len(named) > 1:
        return None, "unparsed"
    if found := _LEAD.match(text):
        return found.group(1).upper(), "lead"
    if named:
        return named.pop(), "named"
    return None, "unparsed"


def accept_choice(answer: Answer) -> Verdict:
    choice, rule = parse_choice(answer.text)
    return Verdict(choice is not None, choice, rule)


class PairTemplate(Template):
    """A pairwise template: ``{query}``, ``{a}`` and ``{b}`` slots."""

    def render_pair(self, query: str, a: str, b: str) -> list[dict[str, str]]:
        content = self.text.replace("{query}", query).replace("{a}", a).replace("{b}", b)
        return [{"role": "user", "content": content}]


def _pair_calls(
    judge: LLMJudge, template: PairTemplate, query: str, a: str, b: str, items: dict, max_tokens: int | None
) -> list[Call]:
    """The pair asked in both orders (``order`` ab: ``first`` shown as A; ba: ``second`` as A)."""
    calls = []
    for order, (x, y) in (("ab", (a, b)), ("ba", (b, a))):
        request = Request.chat(
            "probe",
            judge.model,
            template.render_pair(query, x, y),
            template_sha256=template.sha256,
            accept=CHOICE,
            temperature=judge.temperature,
            top_p=judge.top_p,
            max_tokens=max_tokens or judge.max_tokens,
            seed=judge.seed,
        )
        calls.append(Call(request, judge.name, {**items, "order": order}))
    return calls


def _pairwise_prompt(options: Mapping) -> Path:
    """The swap test's template, which the pad test's pairwise question uses too."""
    return Path((options.get("swap") or {}).get("prompt_file") or PAIRWISE_PROMPT)


PAD_CHECKS = {"min_length_ratio": 1.2, "max_length_ratio": 4.0, "copy_similarity": 0.95}
"""The checks of a padding: it is meant to be about twice as long, so only what is not longer,
or far longer, is flagged (the ``rewriting`` keys of :data:`voirdire.assistants.job.CHECK_OPTIONS`)."""


def pad_calls(padder: LLMAssistant, originals: Mapping[str, str]) -> list[Call]:
    """An LLM padder's padding of every pad-test passage (purpose ``probe``)."""
    return passage_calls(padder, originals, purpose="probe", provenance=f"pad-{padder.name}")


def run_pad_job(
    padder: LLMAssistant,
    originals: Mapping[str, str],
    *,
    store_path: str | Path,
    out: str | Path,
    summary_out: str | Path,
    options: Mapping | None = None,
    max_in_flight: int | None = None,
    progress: bool = True,
) -> dict:
    """Pad every pad-test passage through the store; returns the job's summary."""
    return run_passage_job(
        padder,
        pad_calls(padder, originals),
        originals,
        store_path=store_path,
        out=out,
        summary_out=summary_out,
        options=dict(PAD_CHECKS if options is None else options),
        desc=f"probe: {padder.name}",
        config_key=f"probes.pad.assistants.{padder.name}",
        max_in_flight=max_in_flight,
        progress=progress,
    )


def padded_texts(path: str | Path) -> dict[str, str | None]:
    """An LLM padder's texts by passage (None where its answer is not used: empty)."""
    table = pd.read_parquet(path, columns=["doc_id", "text", "used"])
    return dict(zip(table["doc_id"], table["text"].where(table["used"], None), strict=True))


def _with_prefix(messages: list[dict], prefix: str) -> list[dict]:
    return [{**messages[0], "content": f"{prefix}\n\n{messages[0]['content']}"}, *messages[1:]]


def _readable(sample: Mapping, texts: Mapping[str, str]) -> dict[str, list]:
    """Each probe's sample rows whose passages all have a text (personas: its pairs)."""

    def docs(probe: str, row: Mapping) -> list[str]:
        if probe == "swap":
            return [row["doc_a"], row["doc_b"]]
        if probe == "lists":
            return [*row["docs_a"], *row["docs_b"]]
        return [row["doc_id"]]

    rows = {p: sample.get(p) or [] for p in ("swap", "lists", "pad", "injection")}
    rows["personas"] = (sample.get("personas") or {}).get("pairs", [])
    return {p: [r for r in found if all(d in texts for d in docs(p, r))] for p, found in rows.items()}


def without_text(sample: Mapping, texts: Mapping[str, str]) -> dict[str, int]:
    """Per probe (swap, lists, pad, injection, personas), how many of the sample's rows need a
    passage that has no text in ``texts``: the probe job does not ask them."""
    readable = _readable(sample, texts)
    every = {p: len(sample.get(p) or []) for p in ("swap", "lists", "pad", "injection")}
    every["personas"] = len((sample.get("personas") or {}).get("pairs", []))
    return {p: every[p] - len(readable[p]) for p in every}


def probe_calls(
    judge: LLMJudge,
    sample: Mapping,
    topics: Mapping[str, str],
    texts: Mapping[str, str],
    *,
    options: Mapping,
    padded: Mapping[str, Mapping[str, str]] | None = None,
    personas: pd.DataFrame | None = None,
) -> tuple[list[Call], list[Call]]:
    """(grade calls, pairwise calls) of every probe in ``sample`` (see the module docstring).

    ``padded`` holds LLM padders' texts by padder and passage; ``personas`` has (query_id, role,
    persona) rows; ``options`` is the config's ``probes`` section. A row whose passage has no
    text in ``texts`` is not asked (:func:`without_text` counts them)."""
    template = Template.from_file(judge.prompt_file)
    readable = _readable(sample, texts)
    sample = {**sample, **{p: readable[p] for p in ("swap", "lists", "pad", "injection") if p in sample}}
    if sample.get("personas"):
        sample["personas"] = {**sample["personas"], "pairs": readable["personas"]}
    grades: list[Call] = []
    pairs: list[Call] = []
    answer_tokens = (options.get("swap") or {}).get("max_tokens")

    def grade(probe: str, condition: str, qid: str, doc: str, text: str, prefix: str | None = None) -> None:
        messages = template.render(topics[qid], text)
        if prefix is not None:
            messages = _with_prefix(messages, prefix)
        items = {"probe": probe, "condition": condition, "query_id": qid, "doc_id": doc}
        grades.extend(grade_calls(judge, template, messages, items))

    if sample.get("swap"):
        pairwise = PairTemplate.from_file(_pairwise_prompt(options))
        for row in sample["swap"]:
            q = row["query_id"]
            items = {
                "probe": "swap",
                "condition": "passages",
                "query_id": q,
                "first": row["doc_a"],
                "second": row["doc_b"],
            }
            pairs += _pair_calls(
                judge, pairwise, topics[q], texts[row["doc_a"]], texts[row["doc_b"]], items, answer_tokens
            )
    if sample.get("lists"):
        lists = PairTemplate.from_file(options["swap"]["lists"].get("prompt_file") or LISTS_PROMPT)
        chars = options["swap"]["lists"]["chars"]
        for row in sample["lists"]:
            q = row["query_id"]
            a, b = render_list(row["docs_a"], texts, chars), render_list(row["docs_b"], texts, chars)
            items = {
                "probe": "lists",
                "condition": "lists",
                "query_id": q,
                "first": row["system_a"],
                "second": row["system_b"],
            }
            pairs += _pair_calls(judge, lists, topics[q], a, b, items, answer_tokens)
    if sample.get("pad"):
        pairwise = PairTemplate.from_file(_pairwise_prompt(options)) if options["pad"]["pairwise"] else None
        padders = {
            m: {d["doc_id"]: pad(m, texts[d["doc_id"]]) for d in sample["pad"]} for m in options["pad"]["methods"]
        }
        padders.update(padded or {})
        for row in sample["pad"]:
            q, doc = row["query_id"], row["doc_id"]
            grade("pad", "original", q, doc, texts[doc])
            for name, by_doc in padders.items():
                if by_doc.get(doc) is None:  # an LLM padder's empty or missing answer: listed, not judged
                    continue
                grade("pad", name, q, doc, by_doc[doc])
                if pairwise is not None:
                    items = {
                        "probe": "pad-pairwise",
                        "condition": name,
                        "query_id": q,
                        "doc_id": doc,
                        "first": "original",
                        "second": name,
                    }
                    pairs += _pair_calls(judge, pairwise, topics[q], texts[doc], by_doc[doc], items, answer_tokens)
    if sample.get("injection"):
        for row in sample["injection"]:
            q, doc = row["query_id"], row["doc_id"]
            grade("injection", "original", q, doc, texts[doc])
            for name, text in options["injection"]["templates"].items():
                grade("injection", name, q, doc, inject(text, texts[doc], topics[q]))
    if sample.get("personas") and personas is not None:
        roles = personas.set_index(["query_id", "role"])["persona"]
        for row in sample["personas"]["pairs"]:
            q, doc = row["query_id"], row["doc_id"]
            grade("persona", "baseline", q, doc, texts[doc])
            for role in options["personas"]["roles"]:
                grade("persona", role, q, doc, texts[doc], persona_prefix(roles[q, role]))
            grade("persona", RERUN, q, doc, texts[doc], persona_prefix(PLACEBO_PERSONA))
    return grades, pairs


def is_placebo(call: Call) -> bool:
    """Whether ``call`` is the persona probe's, under its placebo persona (the null condition)."""
    return call.items.get("probe") == "persona" and call.items.get("condition") == RERUN


ANSWER_COLUMNS = [
    "probe",
    "condition",
    "query_id",
    "doc_id",
    "first",
    "second",
    "order",
    "sample",
    "label",
    "choice",
    "status",
    "rule",
    "raw",
    "model_version",
    "cost",
    "key",
]


def answers_table(calls: Sequence[Call], store: Store) -> pd.DataFrame:
    """One row per call (duplicates of one request keep their own ids), with its stored answer."""
    stored = {r.key: r for r in store.get({c.key for c in calls})}
    rows = []
    for call in calls:
        record = stored[call.key]
        ok = record.status == "ok"
        pairwise = call.request.accept == CHOICE
        rows.append(
            {
                **{
                    k: call.items.get(k)
                    for k in ("probe", "condition", "query_id", "doc_id", "first", "second", "order")
                },
                "sample": call.request.sample,
                "label": record.value if ok and not pairwise else None,
                "choice": record.value if ok and pairwise else None,
                "status": record.status,
                "rule": record.rule,
                "raw": record.raw,
                "model_version": record.model_version,
                "cost": record.cost,
                "key": call.key,
            }
        )
    frame = pd.DataFrame(rows, columns=ANSWER_COLUMNS)
    frame["label"] = frame["label"].astype("Float64")
    return frame


def run_probe_job(
    judge: LLMJudge,
    *,
    sample: Mapping,
    topics: Mapping[str, str],
    texts: Mapping[str, str],
    options: Mapping,
    store_path: str | Path,
    out: str | Path,
    summary_out: str | Path,
    padded: Mapping[str, Mapping[str, str]] | None = None,
    personas: pd.DataFrame | None = None,
    seeds: Sequence[str | Path] = (),
    max_in_flight: int | None = None,
    progress: bool = True,
) -> dict:
    """Ask every probe call of ``judge`` through its store; write the answers and a summary."""
    grades, pairs = probe_calls(judge, sample, topics, texts, options=options, padded=padded, personas=personas)
    common = {
        "max_in_flight": max_in_flight,
        "progress": progress,
        "reasks": judge.parse_retries,
        "config_key": f"judges[{judge.name}]",
    }
    with Store(store_path) as store:
        graded = call_all(
            judge.endpoint,
            grades,
            store,
            accept=GradeAccept(judge.scale),
            seeds=seeds,
            desc=f"probes: {judge.name} grades",
            **common,
        )
        chosen = call_all(
            judge.endpoint, pairs, store, accept=accept_choice, desc=f"probes: {judge.name} pairwise", **common
        )
        table = answers_table(grades + pairs, store)
        known = price_known(judge.model, store)  # as the store keeps it: no litellm for a job that asked nothing
    with atomic_write(out, "wb") as fh:
        table.to_parquet(fh, index=False)
    per_probe = table.groupby("probe")["status"].agg(calls="size", unparsed=lambda s: int((s != "ok").sum()))
    summary = {
        "judge": judge.name,
        "model": judge.model,
        "model_versions": sorted({v for v in table["model_version"].dropna()}),
        "probes": {p: {k: int(v) for k, v in row.items()} for p, row in per_probe.iterrows()},
        "calls_this_run": (graded.calls - graded.cached) + (chosen.calls - chosen.cached),
        "cached": graded.cached + chosen.cached,
        "copied_from_finished_jobs": graded.seeded,
        "cost_this_run_usd": graded.cost + chosen.cost,
        "price_known": known,
        "cost_ledger_usd": float(table.drop_duplicates("key")["cost"].sum()),
        "wall_s": graded.wall_s + chosen.wall_s,
        "left_out_without_text": without_text(sample, texts),
    }
    with atomic_write(summary_out) as fh:
        json.dump(summary, fh, indent=2)
    return summary
