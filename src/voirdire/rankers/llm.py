"""RG and PRP: LLM rerankers of the BM25 pool (Balog, Metzler & Qin, SIGIR 2025, §4.2.2).

* **RG** (relevance generation, Liang et al. 2022): pointwise; the score of a passage is
  P(Yes) from the next-token log-probabilities of "Yes" and "No", softmaxed over the two.
* **PRP** (pairwise ranking prompting, Qin et al., NAACL 2024): "which of the two passages
  is more relevant?", asked for each pair in both orders. A preference that survives the
  swap gives the winner 1 point; an order-dependent one gives each 0.5 (all-pairs), or is
  treated as a tie (sliding window, heap). Variants: ``allpairs`` (n(n-1) prompts),
  ``sliding`` (k bubble passes from the bottom: about 2kn prompts) and ``heap`` (heap sort
  for the top k: about 2n log n prompts).

A *backend* answers batches of prompts: :class:`LogitsBackend` compares next-token
log-probabilities of a local transformers model ("Yes"/"No", "A"/"B"), batched;
:class:`~voirdire.rankers.api.LiteLLMBackend` reaches API models or a served vLLM through
litellm. Every PRP answer is recorded, so position bias comes for free: the share of pairs
whose answer depends on the order, and how often the first-shown passage wins (the swap test; see docs/probes.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..swaps import FIRST, SECOND, swap_counts, swap_outcome

RG_PROMPT = "Passage: {passage}\nQuery: {query}\nDoes the passage answer the query? Answer 'Yes' or 'No'."
PRP_PROMPT = (
    'Given a query "{query}", which of the following two passages is more relevant to the '
    'query?\n\nPassage A: "{a}"\n\nPassage B: "{b}"\n\n'
    "Output Passage A or Passage B. Answer with the letter A or B only."
)
PRP_VARIANTS = ("allpairs", "sliding", "heap")


def rg_messages(query: str, passage: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": RG_PROMPT.format(query=query, passage=passage)}]


def prp_messages(query: str, a: str, b: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": PRP_PROMPT.format(query=query, a=a, b=b)}]


def p_yes(yes_logprob: float, no_logprob: float) -> float:
    """softmax over the two answers: exp(y) / (exp(y) + exp(n)), computed stably."""
    top = max(yes_logprob, no_logprob)
    if top == -math.inf:
        return 0.5
    y, n = math.exp(yes_logprob - top), math.exp(no_logprob - top)
    return y / (y + n)


Items = Sequence[Mapping[str, str]] | None
"""The ids behind each prompt (query, passage or passage pair), for backends that store calls."""


class Backend(Protocol):
    def yes_probabilities(self, conversations: Sequence[list[dict]], items: Items = None) -> list[float]: ...

    def preferences(self, conversations: Sequence[list[dict]], items: Items = None) -> list[str | None]:
        """'A' or 'B' per conversation (None: an API answer that names neither)."""
        ...


@dataclass
class LogitsBackend:
    """A local transformers model; answers from next-token log-probabilities (batched)."""

    model: str
    batch_size: int = 8
    dtype: str = "auto"

    def _logprobs(self, conversations, candidates):
        from .causal import candidate_logprobs

        return candidate_logprobs(self.model, conversations, candidates, batch_size=self.batch_size, dtype=self.dtype)

    def yes_probabilities(self, conversations, items: Items = None):
        return [p_yes(lp["Yes"], lp["No"]) for lp in self._logprobs(conversations, ["Yes", "No"])]

    def preferences(self, conversations, items: Items = None):
        return ["A" if lp["A"] >= lp["B"] else "B" for lp in self._logprobs(conversations, ["A", "B"])]


# ----------------------------------------------------------------------------- RG


def rg_scores(
    backend: Backend, query: str, passages: Sequence[str], ids: Sequence[str] | None = None, query_id: str = ""
) -> list[float]:
    items = None if ids is None else [{"query_id": query_id, "doc_id": d} for d in ids]
    return backend.yes_probabilities([rg_messages(query, p) for p in passages], items)


# ----------------------------------------------------------------------------- PRP


@dataclass
class PairwiseLedger:
    """Every PRP answer of one query: (first shown, second shown) -> 'A' | 'B' | None."""

    answers: dict[tuple[int, int], str | None] = field(default_factory=dict)

    def outcome(self, i: int, j: int) -> float:
        """1 if i beats j in both orders, 0 if j does, 0.5 if the answer depends on the order
        (the swap test's one definition, :func:`voirdire.swaps.swap_outcome`)."""
        return {FIRST: 1.0, SECOND: 0.0}.get(swap_outcome(self.answers[i, j], self.answers[j, i]), 0.5)

    def bias(self) -> dict[str, int]:
        """Position-bias counts of the pairs asked in both orders (:func:`~voirdire.swaps.swap_counts`)."""
        unordered = sorted({(min(i, j), max(i, j)) for i, j in self.answers if (j, i) in self.answers})
        counts = swap_counts((self.answers[i, j], self.answers[j, i]) for i, j in unordered)
        counts["prompts"] = len(self.answers)
        return counts


Compare = Callable[[Sequence[tuple[int, int]]], None]


def _asker(
    backend: Backend,
    query: str,
    passages: Sequence[str],
    ledger: PairwiseLedger,
    ids: Sequence[str] | None,
    query_id: str,
) -> Compare:
    """Ask every not-yet-asked ordered pair in one batch, recording answers in the ledger."""

    def ask(pairs: Sequence[tuple[int, int]]) -> None:
        todo = [p for p in dict.fromkeys(pairs) if p not in ledger.answers]
        if not todo:
            return
        items = None
        if ids is not None:
            items = [{"query_id": query_id, "doc_a": ids[i], "doc_b": ids[j]} for i, j in todo]
        answers = backend.preferences([prp_messages(query, passages[i], passages[j]) for i, j in todo], items)
        ledger.answers.update(zip(todo, answers, strict=True))

    return ask


def prp_allpairs(points_of: PairwiseLedger, n: int) -> list[int]:
    """Order by points (1 per consistent win, 0.5 per order-dependent pair); ties keep input order."""
    points = [0.0] * n
    for i in range(n):
        for j in range(i + 1, n):
            won = points_of.outcome(i, j)
            points[i] += won
            points[j] += 1 - won
    return sorted(range(n), key=lambda i: (-points[i], i))


def prp_rank(
    backend: Backend,
    query: str,
    passages: Sequence[str],
    *,
    variant: str,
    k: int = 10,
    ids: Sequence[str] | None = None,
    query_id: str = "",
) -> tuple[list[int], PairwiseLedger]:
    """Reorder ``passages`` (given in BM25 order) with PRP; returns indices best first.

    ``ids`` (passage ids) and ``query_id`` only label the stored calls of an API backend.
    """
    n = len(passages)
    ledger = PairwiseLedger()
    ask = _asker(backend, query, passages, ledger, ids, query_id)
    if variant == "allpairs":
        ask([(i, j) for i in range(n) for j in range(n) if i != j])
        return prp_allpairs(ledger, n), ledger
    if variant == "sliding":
        order = list(range(n))
        for done in range(min(k, n - 1)):
            for pos in range(n - 2, done - 1, -1):
                a, b = order[pos], order[pos + 1]
                ask([(a, b), (b, a)])
                if ledger.outcome(b, a) == 1.0:  # the lower one wins in both orders
                    order[pos], order[pos + 1] = b, a
        return order, ledger
    if variant == "heap":
        return _heap_top_k(ask, ledger, n, k), ledger
    raise ValueError(f"unknown PRP variant {variant!r}; expected one of {PRP_VARIANTS}")


def _heap_top_k(ask: Compare, ledger: PairwiseLedger, n: int, k: int) -> list[int]:
    """Heap sort with 'beats in both orders' as the comparison; top k first, rest as given."""

    def greater(a: int, b: int) -> bool:
        ask([(a, b), (b, a)])
        return ledger.outcome(a, b) == 1.0

    heap = list(range(n))

    def sift(start: int, end: int) -> None:
        root = start
        while (child := 2 * root + 1) < end:
            if child + 1 < end and greater(heap[child + 1], heap[child]):
                child += 1
            if greater(heap[child], heap[root]):
                heap[root], heap[child] = heap[child], heap[root]
                root = child
            else:
                return

    for start in range(n // 2 - 1, -1, -1):
        sift(start, n)
    top: list[int] = []
    end = n
    while end > 0 and len(top) < k:
        top.append(heap[0])
        end -= 1
        heap[0] = heap[end]
        sift(0, end)
    rest = sorted(set(range(n)) - set(top))
    return top + rest
