"""The plan: what the LLM calls will cost, before any call. :func:`render` is the one text that
``voirdire plan`` prints and the workflow's ``plan`` rule writes.

Per judge and dataset: unique pairs, calls (pairs x samples), how many the store already
has (answers stored by voirdire 0.1 under their old keys count as stored), calls to make,
estimated prompt and completion tokens, and estimated cost from litellm's cost map. Prompt
tokens are counted by the model's tokenizer (:func:`voirdire.llm.count_tokens`) on the
rendered prompts; completions are assumed to use ``max_tokens`` (an upper bound). Also the
naive count the paper's design avoids: queries x systems x depth. Then the API rankers' calls
at most, the assistants experiment's calls and the judge probes' calls (the persona probe's
placebo, the null its roles are tested against, on a row of its own: ``probe placebo``).

Every row prices its calls twice: directly (``est_cost_usd_max``) and through the provider's batch
API (``est_cost_usd_max_batch``, what a judge with ``batch:`` pays: litellm's batch prices where
its cost map has them, else half the direct price, said in ``batch_price``). The judges' rows say
which judges batch (``batch``).

:func:`ledger_rows` is the cost ledger (docs/batch.md): per caller and dataset, every call the
plan lists for it (cached or not, each request once) priced as it is paid, beside what its stores
say was spent (:mod:`voirdire.llm.ledger`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import pandas as pd

from .assistants.declarations import LLMAssistant
from .assistants.job import rewrite_calls
from .config import Plan
from .formats import read_pairs, read_passages, read_run, read_topics
from .judges import LLMJudge, with_texts
from .layout import Layout
from .llm import Store, answered, count_tokens, estimated_cost, price_known
from .llm.batch import estimated_batch_cost
from .llm.ledger import LEDGER_COLUMNS, LOCAL, UNKNOWN, Spent, spent_by_caller
from .llm.local.provider import is_local
from .llm_judge.job import load_inputs
from .llm_judge.tasks import judge_calls
from .probes.gaming import texts_by_pair, to_label
from .probes.job import is_placebo, pad_calls, padded_texts, probe_calls
from .texts import provenance_texts


def _cached(calls, stores) -> set[str]:
    """Keys the given stores already answer (under an older key too: :func:`voirdire.llm.answered`)."""
    cached: set[str] = set()
    for store_path in stores:
        if Path(store_path).is_file():
            with Store(store_path) as store:
                cached |= answered(store, calls)
    return cached


_COLLECTED: ContextVar[dict | None] = ContextVar("voirdire_plan_collected", default=None)
"""While :func:`_collecting` runs: (dataset, role, caller) -> (model, max_tokens, {key: call}) of every row."""


@contextmanager
def _collecting() -> Iterator[dict]:
    """Collect the calls of every plan row made inside (for :func:`ledger_rows`)."""
    collected: dict = {}
    token = _COLLECTED.set(collected)
    try:
        yield collected
    finally:
        _COLLECTED.reset(token)


def _max_tokens(call, default: int) -> int:
    """The completion tokens a call may take: its request's ``max_tokens`` (a probe's own setting),
    else the caller's."""
    return int(dict(call.request.params).get("max_tokens") or default)


def _row(caller, model, max_tokens, calls, stores, *, role="judge", **ids) -> dict:
    if (collected := _COLLECTED.get()) is not None:  # the ledger's: the calls only (no store opened, no token counted)
        found = collected.setdefault((ids.get("dataset"), role, caller), (model, max_tokens, {}))
        found[2].update({c.key: c for c in calls})
        return {**ids, "caller": caller, "model": model}
    cached = _cached(calls, stores)
    todo = list({c.key: c for c in calls if c.key not in cached}.values())  # one call per unique request
    prompt = sum(count_tokens(model, c.request.chat_messages()) for c in todo)
    completion = sum(_max_tokens(c, max_tokens) for c in todo)
    cost = estimated_cost(model, prompt, completion)
    row = {
        **ids,
        "caller": caller,
        "model": model,
        "tasks": len(calls),
        "cached": len({c.key for c in calls} & cached),
        "calls": len(todo),
        "est_prompt_tokens": prompt,
        "est_completion_tokens_max": completion,
        # "n/a", not blank, nan or 0: litellm's cost map has no price for this model (local, self-hosted)
        "est_cost_usd_max": "n/a" if cost is None else cost,
    }
    # the same calls through the provider's batch API (what a judge with batch: pays)
    batch_cost, assumed = estimated_batch_cost(model, prompt, completion)
    row["est_cost_usd_max_batch"] = "n/a" if batch_cost is None else batch_cost
    row["batch_price"] = _batch_price(batch_cost, assumed)
    return row


def _batch_price(cost: float | None, assumed: bool) -> str:
    """Where a batch price comes from, in the plan's words."""
    if cost is None:
        return "n/a"
    return "half the direct (assumed)" if assumed else "cost map"


def plan_rows(plan: Plan, provenance: str = "original") -> pd.DataFrame:
    """Judging calls of one provenance's pool (the judges' plan, as before the assistants)."""
    layout = Layout(plan.config["results"])
    rows, batching = [], []
    for dataset in plan.datasets:
        if plan.labels_only(dataset):  # no texts, so no live judge: nothing to plan
            continue
        pairs, texts, topics = _pool_inputs(layout, dataset)
        naive = len(topics) * len(plan.systems) * plan.depth
        # pairs only a recorded run retrieved (outside the BM25 pool), and pairs with no text,
        # which a judge that reads texts cannot label (uncovered, counted in Table 2)
        outside = int((pairs["in_pool"].astype(str) != "True").sum()) if "in_pool" in pairs else 0
        readable = with_texts(pairs, texts, judge="plan")
        for judge in plan.judges[dataset]:
            if not isinstance(judge, LLMJudge):
                continue
            calls = judge_calls(judge, readable, topics, texts, provenance=provenance)
            row = _row(
                judge.name,
                judge.model,
                judge.max_tokens,
                calls,
                [layout.store(dataset, provenance, judge.name)],
                dataset=dataset,
            )
            rows.append(
                {
                    "dataset": row.pop("dataset"),
                    "judge": row.pop("caller"),
                    "model": row.pop("model"),
                    "provenance": provenance,
                    "unique_pairs": len(pairs),
                    "pairs_outside_pool": outside,
                    "pairs_without_text": len(pairs) - len(readable),
                    "naive_pairs": naive,
                    **row,
                }
            )
            batching.append(judge.batch is not None)
    frame = pd.DataFrame(rows)
    if len(frame):  # whether the judge judges through the provider's batch API (and pays est_cost_usd_max_batch)
        frame.insert(frame.columns.get_loc("model") + 1, "batch", batching)
    return frame


def _pool_inputs(layout: Layout, dataset: str):
    """The needed pairs (the same in every provenance), the pool's texts and the topics."""
    pairs_tsv = layout.pairs(dataset, "original")
    if not Path(pairs_tsv).is_file():
        raise FileNotFoundError(
            f"{pairs_tsv} does not exist yet: run `snakemake --cores N plan` (it builds the "
            "BM25 pools first) rather than the bare command"
        )
    return load_inputs(pairs_tsv, layout.passages(dataset), layout.topics(dataset))


def assistant_rows(plan: Plan) -> pd.DataFrame:
    """The assistants experiment's calls, before any: rewrites, then the judges' labels of the
    sample (original texts) and of each rewritten collection (pool pairs of rewritten passages
    and the sample). Before an assistant has rewritten, its collection's rows are estimates from
    the original texts, counting every call that a rewrite would change (``estimated``)."""
    layout = Layout(plan.config["results"])
    rows = []
    for dataset in plan.datasets:
        if not plan.assistants:
            break
        pairs, texts, topics = _pool_inputs(layout, dataset)
        sample = read_pairs(layout.sample(dataset))
        texts = {**texts, **read_passages(layout.sample_passages(dataset))}
        originals = {d: texts[d] for d in sorted(set(sample["doc_id"]))}
        ids = {"dataset": dataset, "estimated": False}
        for assistant in plan.assistants:
            if isinstance(assistant, LLMAssistant):
                calls = rewrite_calls(assistant, originals)
                store = layout.rewrites(dataset, assistant.provenance, "sqlite")
                rows.append(
                    _row(
                        assistant.name,
                        assistant.model,
                        assistant.max_tokens,
                        calls,
                        [store],
                        role="assistant",
                        purpose="rewrite",
                        provenance=assistant.provenance,
                        pairs="sample",
                        **ids,
                    )
                )
        for judge in plan.judges[dataset]:
            if not isinstance(judge, LLMJudge):
                continue
            calls = judge_calls(judge, sample, topics, texts, provenance="original")
            stores = [
                layout.sample_labels(dataset, "original", judge.name, "sqlite"),
                layout.store(dataset, "original", judge.name),
            ]
            rows.append(
                _row(
                    judge.name,
                    judge.model,
                    judge.max_tokens,
                    calls,
                    stores,
                    purpose="judge",
                    provenance="original",
                    pairs="sample",
                    **ids,
                )
            )
            for assistant in plan.assistants:
                prov = assistant.provenance
                rewrites = layout.rewrites(dataset, prov)
                made = Path(rewrites).is_file()
                changed = set(originals)
                if made:
                    prov_texts, changed = provenance_texts(
                        [layout.passages(dataset), layout.sample_passages(dataset)], rewrites
                    )
                else:
                    prov_texts = texts
                pool_store = layout.store(dataset, prov, judge.name)
                # the pool's job asks the sample's pairs ahead, into its own store
                for name, subset, own in (
                    ("pool", pairs, [pool_store]),
                    ("sample", sample, [layout.sample_labels(dataset, prov, judge.name, "sqlite"), pool_store]),
                ):
                    subset = subset[subset["doc_id"].isin(changed)]
                    calls = judge_calls(judge, subset, topics, prov_texts, provenance=prov)
                    rows.append(
                        _row(
                            judge.name,
                            judge.model,
                            judge.max_tokens,
                            calls,
                            own if made else [],
                            purpose="judge",
                            provenance=prov,
                            pairs=name,
                            dataset=dataset,
                            estimated=not made,
                        )
                    )
    return pd.DataFrame(rows)


PLACEBO_ROW = "probe placebo"
"""The purpose of the plan's row of the persona probe's placebo calls (:func:`probe_rows`)."""


def probe_rows(plan: Plan) -> pd.DataFrame:
    """The judge probes' calls, before any: the LLM padders' paddings, then
    each probed judge's grades (plain prompts count as stored when its pool job has them), the
    persona probe's grades under its placebo persona (the null its roles are tested against: one
    call per persona pair and sample, on a row of its own, ``probe placebo``) and pairwise
    questions. Before a padder has run, the calls on its paddings are estimated (``estimated``)
    with a stand-in of twice the original length."""
    probes = plan.config.get("probes")
    if probes is None or not plan.probe_judges:
        return pd.DataFrame()
    layout = Layout(plan.config["results"])
    rows = []
    for dataset in plan.datasets:
        _, texts, topics = _pool_inputs(layout, dataset)
        sample = json.loads(Path(layout.probe_sample(dataset)).read_text(encoding="utf-8"))
        originals = {row["doc_id"]: texts[row["doc_id"]] for row in sample.get("pad", [])}
        padded, estimated = {}, False
        for padder in plan.padders:
            calls = pad_calls(padder, originals)
            store = layout.padded(dataset, padder.name, "sqlite")
            rows.append(
                _row(
                    padder.name,
                    padder.model,
                    padder.max_tokens,
                    calls,
                    [store],
                    role="padder",
                    dataset=dataset,
                    purpose="pad",
                    estimated=False,
                )
            )
            made = Path(layout.padded(dataset, padder.name)).is_file()
            # before it has run, a stand-in of twice the length: one distinct text per passage
            stand_in = {doc: f"{text}\n\n{text}" for doc, text in originals.items()}
            padded[padder.name] = padded_texts(layout.padded(dataset, padder.name)) if made else stand_in
            estimated |= not made
        personas_file = Path(layout.personas(dataset))
        personas = pd.read_parquet(personas_file) if personas_file.is_file() else None
        for name in plan.probe_judges:
            judge = plan.judge(dataset, name)
            grades, pairs = probe_calls(judge, sample, topics, texts, options=probes, padded=padded, personas=personas)
            placebo = [c for c in grades if is_placebo(c)]
            grades = [c for c in grades if not is_placebo(c)]
            stores = [layout.probe_answers(dataset, name, "sqlite"), layout.store(dataset, "original", name)]
            for purpose, calls in (("probe grades", grades), (PLACEBO_ROW, placebo), ("probe pairwise", pairs)):
                if purpose == PLACEBO_ROW and not calls:  # no persona probe
                    continue
                rows.append(
                    _row(
                        name,
                        judge.model,
                        judge.max_tokens,
                        calls,
                        stores,
                        dataset=dataset,
                        purpose=purpose,
                        estimated=estimated,
                    )
                )
    return pd.DataFrame(rows)


def gaming_rows(plan: Plan) -> pd.DataFrame:
    """The gamed system's calls, before any: each LLM judge it is put to, asked about the
    modified passages of its methods (one call per distinct pair and sample), counted against
    the judge's gaming store and its pool's store (the pool's job asks them ahead). Judges that read no texts or ask no model make no call."""
    if not plan.gaming_judges:
        return pd.DataFrame()
    layout = Layout(plan.config["results"])
    rows = []
    for dataset in plan.datasets:
        if plan.labels_only(dataset):
            continue
        gamed = pd.read_parquet(layout.gaming_passages(dataset))
        topics = read_topics(layout.topics(dataset))
        for name, methods in plan.gaming_judges.items():
            judge = plan.judge(dataset, name)
            if not isinstance(judge, LLMJudge):
                continue
            items = to_label(gamed, methods)
            calls = judge_calls(judge, items, topics, texts_by_pair(items), provenance="gaming")
            stores = [layout.gaming_labels(dataset, name, "sqlite"), layout.store(dataset, "original", name)]
            rows.append(
                _row(
                    name,
                    judge.model,
                    judge.max_tokens,
                    calls,
                    stores,
                    dataset=dataset,
                    purpose="gaming",
                    methods=", ".join(methods),
                )
            )
    return pd.DataFrame(rows)


def ranker_rows(plan: Plan) -> pd.DataFrame:
    """The API rankers' calls (backend litellm), at most: each reranks the top ``depth`` of every
    query's pool, pointwise one call a passage, pairwise each ordered pair at most once (all of
    them for ``allpairs``; ``sliding`` asks 2 per adjacent pair per pass, and ``heap`` depends on
    the answers, so at most every ordered pair). The store answers repeats, not counted here."""
    layout = Layout(plan.config["results"])
    rows = []
    for dataset in plan.datasets:
        for ranker in plan.rankers:
            if ranker.backend != "litellm":
                continue
            pool = layout.pool(dataset)
            if not Path(pool).is_file():
                continue
            sizes = read_run(pool).groupby("query_id").size().clip(upper=ranker.depth)
            if ranker.method == "prp":
                calls = [_prp_calls(int(n), ranker.variant, ranker.k) for n in sizes]
            else:
                calls = [int(n) for n in sizes]
            rows.append(
                {
                    "dataset": dataset,
                    "ranker": ranker.name,
                    "model": ranker.model,
                    "method": ranker.method,
                    "variant": ranker.variant if ranker.method == "prp" else "",
                    "queries": len(sizes),
                    "depth": ranker.depth,
                    "calls_max": int(sum(calls)),
                }
            )
    return pd.DataFrame(rows)


def _prp_calls(n: int, variant: str, k: int) -> int:
    """Ordered pairs a PRP ranker asks at most for ``n`` passages."""
    every = n * (n - 1)
    if variant == "sliding":
        return min(every, sum(2 * (n - 1 - done) for done in range(min(k, n - 1))))
    return every


def store_roles(plan: Plan, dataset: str) -> dict[Path, str]:
    """Every call store of ``dataset`` under the results (``*.sqlite``) -> the role of the callers
    that write it: an API ranker's (``ranker``, its pool's and its sample's), an LLM padder's
    (``padder``), an assistant's rewrites (``assistant``), else a judge's (its pools, its sample,
    its probes, the gamed system)."""
    layout = Layout(plan.config["results"])
    roles: dict[str, str] = {}
    for provenance in plan.provenances:
        for ranker in plan.rankers:
            for name in (ranker.name, f"{ranker.name}-sample"):
                roles[layout.ranker_store(dataset, provenance, name)] = "ranker"
    for padder in plan.padders:
        roles[layout.padded(dataset, padder.name, "sqlite")] = "padder"
    for assistant in plan.assistants:
        roles[layout.rewrites(dataset, assistant.provenance, "sqlite")] = "assistant"
    roles = {Path(path).resolve(): role for path, role in roles.items()}
    found = sorted((Path(layout.root) / dataset).rglob("*.sqlite"))
    return {path: roles.get(path.resolve(), "judge") for path in found}


def ledger_rows(plan: Plan) -> pd.DataFrame:
    """The cost ledger (:data:`voirdire.llm.ledger.LEDGER_COLUMNS`): per dataset, role and caller,
    every call the plan lists for it (the judges' pools, the assistants experiment, the probes, the
    gamed system: each request once, stored or not) with its estimated tokens and cost at the price
    it pays (a judge with ``batch:`` pays the batch price; a local model $0; a model litellm has no
    price for: empty, ``price`` unknown), beside what the dataset's stores say it spent
    (:func:`voirdire.llm.ledger.spent_by_caller`, read-only). A caller with answers but no planned
    call (an API ranker) has empty planned columns."""
    with _collecting() as collected:
        for section in (plan_rows, assistant_rows, probe_rows, gaming_rows):
            section(plan)
    rows = []
    for dataset in plan.datasets:
        spent = spent_by_caller(store_roles(plan, dataset))
        planned = {(role, caller): found for (where, role, caller), found in collected.items() if where == dataset}
        for role, caller in [*planned, *sorted(set(spent) - set(planned))]:
            used = spent.get((role, caller)) or Spent()
            model, max_tokens, calls = planned.get((role, caller), (used.model, 0, {}))
            judge = next((j for j in plan.judges[dataset] if j.name == caller), None) if role == "judge" else None
            batch = isinstance(judge, LLMJudge) and judge.batch is not None
            prompt = sum(count_tokens(model, c.request.chat_messages()) for c in calls.values())
            completion = sum(_max_tokens(c, max_tokens) for c in calls.values())
            if is_local(model):
                cost, price = 0.0, LOCAL
            elif batch:
                cost, assumed = estimated_batch_cost(model, prompt, completion)
                price = "batch: " + _batch_price(cost, assumed)
            else:
                cost, price = estimated_cost(model, prompt, completion), "direct"
            known = price_known(model)  # the local model: $0, known
            if not known:
                price = UNKNOWN
            is_planned = (role, caller) in planned
            rows.append(
                {
                    "dataset": dataset,
                    "role": role,
                    "caller": caller,
                    "model": model,
                    "batch": batch,
                    "price": price,
                    "planned_calls": len(calls) if is_planned else None,
                    "planned_prompt_tokens": prompt if is_planned else None,
                    "planned_completion_tokens_max": completion if is_planned else None,
                    "planned_cost_usd_max": cost if is_planned and cost is not None else float("nan"),
                    "spent_calls": used.calls,
                    "spent_requests": used.requests,
                    "spent_via_batch": used.via_batch,
                    "spent_prompt_tokens": used.prompt_tokens,
                    "spent_completion_tokens": used.completion_tokens,
                    # as stored; a model without a price is stored at 0, which is not what it cost
                    "spent_cost_usd": used.cost if known else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=list(LEDGER_COLUMNS))


def render(plan: Plan, provenance: str = "original") -> str:
    """The plan as Markdown: the judges' calls on ``provenance``'s pool, then each section that
    the config has (API rankers, the assistants experiment, the judge probes, the gamed system)."""
    table = plan_rows(plan, provenance)
    text = table.to_markdown(index=False) if len(table) else "no LLM judges configured"
    if len(table):
        text += (
            "\n\nest_cost_usd_max_batch: the same calls through the provider's batch API, what a judge with "
            "`batch:` pays (batch_price: litellm's cost map, or half the direct price, assumed)."
        )
    sections = [
        (ranker_rows, "The API rankers (calls at most: reranking the top depth of every query's pool)"),
        (
            assistant_rows,
            "The assistants experiment (rewrites; the judges' labels of the sample and of the rewritten collections)",
        ),
        (
            probe_rows,
            "The judge probes (LLM paddings; each probed judge's grades, its grades under the placebo "
            "persona, the null the persona roles are tested against, and its pairwise questions)",
        ),
        (gaming_rows, "The gamed system (each judge's labels of the modified passages)"),
    ]
    for rows, heading in sections:
        found = rows(plan)
        if len(found):
            text += f"\n\n## {heading}\n\n" + found.to_markdown(index=False)
    return text
