"""The calls a live judge needs: one per (needed pair, sample), each once.

Every system reranks the same pool, so a pair retrieved by 14 systems is judged once. A call's
request is the rendered template with the judge's sampling parameters, purpose ``judge``, the
template's hash, the sample index and the acceptance rule ``grade:LOW..HIGH`` (the answer's
grade parses on the judge's scale). Its ids are the query, the passage and the provenance.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..judges import LLMJudge, Scale
from ..llm import legacy
from ..llm.calls import Answer, Call, Verdict
from ..llm.request import Request
from .parsing import parse_grade
from .templates import Template


class GradeAccept:
    """Acceptance rule of a judge: the answer's grade parses on ``scale`` (see :mod:`.parsing`)."""

    def __init__(self, scale: Scale) -> None:
        self.scale = scale

    @property
    def name(self) -> str:
        return f"grade:{self.scale.low}..{self.scale.high}"

    def __call__(self, answer: Answer) -> Verdict:
        parsed = parse_grade(answer.text, self.scale.low, self.scale.high)
        return Verdict(parsed.ok, parsed.label, parsed.rule if parsed.ok else parsed.reason)


def grade_calls(
    judge: LLMJudge, template: Template, messages: list[dict], items: dict[str, str], *, v0_1: bool = False
) -> list[Call]:
    """The calls for one rendered grading prompt: one per sample; ``v0_1`` adds the key voirdire
    0.1 gave it as an alias (:func:`voirdire.llm.legacy.judge_key`)."""
    calls = []
    for sample in range(judge.samples):
        request = Request.chat(
            "judge",
            judge.model,
            messages,
            template_sha256=template.sha256,
            sample=sample,
            accept=GradeAccept(judge.scale).name,
            temperature=judge.temperature,
            top_p=judge.top_p,
            max_tokens=judge.max_tokens,
            seed=judge.seed,
        )
        aliases = (legacy.judge_key(judge, messages, sample, template.sha256),) if v0_1 else ()
        calls.append(Call(request, judge.name, items, aliases=aliases))
    return calls


def passage_text(texts: Mapping, query_id: str, doc_id: str) -> str:
    """A pair's passage text: by (query, passage) where a text belongs to one query (a gamed
    system's passage stuffed with that query's terms), else by passage."""
    found = texts.get((query_id, doc_id))
    return texts[doc_id] if found is None else found


def judge_calls(
    judge: LLMJudge,
    pairs: pd.DataFrame,
    topics: dict[str, str],
    texts: Mapping,
    *,
    provenance: str,
) -> list[Call]:
    """One call per (unique pair, sample), in pair order (texts by passage, or by (query,
    passage): :func:`passage_text`)."""
    template = Template.from_file(judge.prompt_file)
    calls = []
    for row in pairs[["query_id", "doc_id"]].drop_duplicates().itertuples(index=False):
        messages = template.render(topics[row.query_id], passage_text(texts, row.query_id, row.doc_id))
        items = {"query_id": row.query_id, "doc_id": row.doc_id, "provenance": provenance}
        calls.extend(grade_calls(judge, template, messages, items, v0_1=True))
    return calls
