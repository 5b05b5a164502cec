"""Inject -> recover through the persona probe's own calls: its prompts, as
:func:`voirdire.probes.job.probe_calls` renders them (the plain prompt, the five roles and the
placebo persona), are answered by a judge that is a function of its prompt, the systems are scored
under each condition's labels as Table 2 scores them, and :func:`voirdire.probes.sensitivity.sensitivity`
gives the persona_sensitivity rows (once the probe tables' own way,
:func:`voirdire.probes.tables.persona_results`).

* A judge that answers by a hash of its prompt (no relevance signal, no bias: any change of the
  prompt, a role or the placebo alike, only draws a fresh answer) has ``excess_p`` >= alpha on the
  ``all`` row the verdict reads in all but about alpha of the draws (a salt varies the hash). A
  plain rerun of the plain prompt would be no null for it: the identical request gets the same
  answer, so every role's move would count as the role's effect.
* A planted persona effect (under one role, the passages of one system's top 10 graded one
  higher) is flagged on that role's row and on the ``all`` row.
"""

import hashlib
import math

import numpy as np
import pandas as pd
import pytest

from voirdire.evaluation import evaluate_prepared, prepare_runs
from voirdire.judges import HUMAN, LLMJudge
from voirdire.llm import Endpoint
from voirdire.probes.items import draw_probes
from voirdire.probes.job import is_placebo, probe_calls
from voirdire.probes.personas import FIXED_ROLES, PLACEBO_PERSONA, POOL_ROLES, ROLES, persona_prefix
from voirdire.probes.sensitivity import ALL, RERUN, THE_NULL, displacement, sensitivity
from voirdire.probes.tables import persona_results

ALPHA = 0.05
QUERIES, PASSAGES, SYSTEMS, DEPTH = 48, 24, 6, 10
OPTIONS = {"seed": 5, "personas": {"queries": None, "depth": DEPTH, "roles": list(ROLES)}}
POOL = ("A nurse.", "A chef.", "A sailor.", "A tax lawyer.", "A beekeeper.", "A violinist.", "A geologist.")
JUDGES = {"d": {"j": {"binary_threshold": 2}, HUMAN: {"binary_threshold": 2}}}
BASELINES = {"j": "baseline"}


def run(ranking: dict[str, list[str]]) -> pd.DataFrame:
    """A system's run: every query's passages in its order."""
    rows = [(q, d, r + 1, PASSAGES - r) for q, docs in ranking.items() for r, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])


class World:
    """Queries of human-graded passages; system i ranks them by the human grade times a quality
    falling from 1 to 0.4, plus noise; the persona sample is every system's top 10 (all of it
    human-graded), each pool role a pool persona per query."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.queries = [f"q{q:02d}" for q in range(QUERIES)]
        self.topics = {q: f"what is topic {q} about" for q in self.queries}
        grades = rng.integers(0, 4, size=(QUERIES, PASSAGES))
        self.docs = [[f"{q}-d{p:02d}" for p in range(PASSAGES)] for q in self.queries]
        self.texts = {d: f"Passage {d} says something about its topic." for row in self.docs for d in row}
        self.human = pd.DataFrame(
            [
                (q, d, int(g))
                for q, row, gs in zip(self.queries, self.docs, grades, strict=True)
                for d, g in zip(row, gs, strict=True)
            ],
            columns=["query_id", "doc_id", "relevance"],
        )
        self.grade = dict(zip(self.human["doc_id"], self.human["relevance"], strict=True))
        quality = np.linspace(1.0, 0.4, SYSTEMS)
        scores = grades[None] * quality[:, None, None] + rng.normal(0, 1.0, (SYSTEMS, QUERIES, PASSAGES))
        order = np.argsort(-scores, axis=2)
        self.rankings = {
            f"s{s}": {q: [self.docs[i][p] for p in order[s, i]] for i, q in enumerate(self.queries)}
            for s in range(SYSTEMS)
        }
        self.runs = {"d": {name: [run(ranking)] for name, ranking in self.rankings.items()}}
        self.prepared = prepare_runs(self.runs["d"], self.queries)  # cut and coded once for every judge
        self.sample = draw_probes(OPTIONS, pairs=self.human, human=self.human, rankings=self.rankings, list_systems=[])
        self.personas = pd.DataFrame(
            [
                (q, role, POOL[(i + k) % len(POOL)] if role in POOL_ROLES else FIXED_ROLES[role])
                for i, q in enumerate(self.queries)
                for k, role in enumerate(ROLES)
            ],
            columns=["query_id", "role", "persona"],
        )
        judge = LLMJudge(name="j", endpoint=Endpoint("openai/none", api_base="http://127.0.0.1:9", api_key_env="NONE"))
        self.calls, _ = probe_calls(
            judge, self.sample, self.topics, self.texts, options=OPTIONS, personas=self.personas
        )
        self.prompts = ["\n".join(m["content"] for m in c.request.chat_messages()) for c in self.calls]

    def answers(self, answer) -> pd.DataFrame:
        """The probe job's answer rows (one per call), each label ``answer(prompt, call)``."""
        keys = ("probe", "condition", "query_id", "doc_id")
        rows = [
            {
                "dataset": "d",
                "judge": "j",
                **{k: c.items[k] for k in keys},
                "sample": c.request.sample,
                "label": float(answer(prompt, c)),
            }
            for c, prompt in zip(self.calls, self.prompts, strict=True)
        ]
        return pd.DataFrame(rows)

    def by_condition(self, answer, **keywords) -> pd.DataFrame:
        """The persona_sensitivity rows of one judge's answers, by condition: the systems scored
        under each condition's labels as Table 2 scores them (one call per pair and condition: the
        judge has one sample), then :func:`sensitivity` with fewer resamples and permutations.
        (:func:`test_the_probe_tables_test_every_role_against_the_placebo` takes the tables' own
        way, once: it is slower.)"""
        labels = {}
        for call, prompt in zip(self.calls, self.prompts, strict=True):
            rows = labels.setdefault(call.items["condition"], [])
            rows.append((call.items["query_id"], call.items["doc_id"], int(answer(prompt, call))))
        qrels = {c: pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]) for c, rows in labels.items()}
        scored = evaluate_prepared(self.prepared, qrels, dict.fromkeys(qrels, 2))
        per_query = pd.concat(
            [frame.assign(dataset="d", group="j", condition=c) for c, frame in scored.items()], ignore_index=True
        )
        moved = displacement(per_query, BASELINES)
        return sensitivity(moved, per_query=per_query, baselines=BASELINES, **keywords)[1].set_index("condition")


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=21)


def digest(salt: int, prompt: str) -> int:
    return int(hashlib.sha256(f"{salt}|{prompt}".encode()).hexdigest(), 16)


def hash_judge(salt: int):
    """Answers by a hash of its prompt (no relevance signal, no bias), on the 0..3 scale."""
    return lambda prompt, call: digest(salt, prompt) % 4


def noisy_judge(salt: int, grades: dict[str, int], favoured: set = frozenset(), role: str | None = None):
    """The human grade (``grades``), one up or down for 20% of the prompts (by a hash of the
    prompt: fresh noise under every prompt, the same answer to the same prompt); under the persona
    line ``role`` the ``favoured`` (query, passage) pairs are graded one higher (the planted effect)."""

    def answer(prompt: str, call) -> int:
        h = digest(salt, prompt) % 10
        grade = grades[call.items["doc_id"]] + (-1 if h == 0 else 1 if h == 9 else 0)
        if role is not None and prompt.startswith(role):
            grade += (call.items["query_id"], call.items["doc_id"]) in favoured
        return min(max(grade, 0), 3)

    return answer


def bound(draws: int) -> float:
    """alpha plus two Monte Carlo standard errors."""
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / draws)


def test_the_persona_probe_asks_every_pair_under_the_placebo_persona(world):
    """One placebo call per persona pair (and sample), its prompt the plain one under the neutral
    persona line: the same frame as a role's, so only a role's own text differs from it."""
    pairs = {(r["query_id"], r["doc_id"]) for r in world.sample["personas"]["pairs"]}
    placebo = [(c, p) for c, p in zip(world.calls, world.prompts, strict=True) if is_placebo(c)]
    assert {(c.items["query_id"], c.items["doc_id"]) for c, _ in placebo} == pairs and len(placebo) == len(pairs)
    plain = {
        (c.items["query_id"], c.items["doc_id"]): p
        for c, p in zip(world.calls, world.prompts, strict=True)
        if c.items["condition"] == "baseline"
    }
    for call, prompt in placebo:
        assert call.items["condition"] == RERUN
        assert prompt == f"{persona_prefix(PLACEBO_PERSONA)}\n\n{plain[call.items['query_id'], call.items['doc_id']]}"
    conditions = {c.items["condition"] for c in world.calls}
    assert conditions == {"baseline", RERUN, *ROLES}


def test_the_probe_tables_test_every_role_against_the_placebo(world):
    """Through :func:`voirdire.probes.tables.persona_results`, as the workflow computes the table:
    every row of the judge's persona_sensitivity has the null (``rerun`` True), the placebo's own
    row is the null, and every other row is tested."""
    comparison, _ = persona_results(
        world.answers(hash_judge(0)),
        world.human.assign(dataset="d"),
        world.runs,
        judges=JUDGES,
        low=0,
        high=3,
        seed=1,
        rbo_p=0.9,
    )
    rows = comparison.tables["sensitivity"].frame.set_index("condition")
    assert set(rows.index) == {ALL, RERUN, *ROLES}
    assert rows["rerun"].astype(bool).all()
    assert rows.loc[RERUN, "reason"] == THE_NULL
    tested = rows.drop(index=RERUN)
    assert (tested["reason"] == "").all() and tested["excess_p"].between(0, 1).all()


def test_a_judge_that_answers_by_a_hash_of_its_prompt_is_not_flagged_against_the_placebo(world):
    """45 salts of the hash judge over the probe's conditions: the ``all`` row the verdict reads
    has ``excess_p`` < alpha in at most alpha + 2 MC-SE of them, and so has each role's row.
    Had the null been the plain prompt asked again (the identical request: the same answer), it
    would not move the ranking at all and the roles' moves would count as their effect: flagged
    in most of the first 10 salts."""
    draws, flags, rerun_flags = 45, dict.fromkeys((ALL, *ROLES), 0), 0
    placebo_line = f"{persona_prefix(PLACEBO_PERSONA)}\n\n"
    for salt in range(draws):
        rows = world.by_condition(hash_judge(salt), resamples=20, permutations=199)
        for name in flags:
            flags[name] += rows.loc[name, "excess_p"] < ALPHA
        assert rows["rerun"].astype(bool).all()
        if salt < 10:  # the placebo's calls answered as the plain prompt is: a plain rerun
            rerun = world.by_condition(
                lambda prompt, call, salt=salt: digest(salt, prompt.removeprefix(placebo_line)) % 4,
                resamples=20,
                permutations=199,
            )
            assert rerun.loc[RERUN, "mean_abs_delta_r"] == 0
            rerun_flags += rerun.loc[ALL, "excess_p"] < ALPHA
    print(f"hash judge, {draws} salts: flagged {flags}; against a plain rerun, {rerun_flags} of 10")
    assert all(count / draws <= bound(draws) for count in flags.values()), flags
    assert rerun_flags / 10 > 0.5


def test_a_planted_persona_effect_is_flagged_against_the_placebo(world):
    """Planted: under the Evidence-Verification role the passages of the weakest system's top 10
    are graded one higher (it climbs), by a judge with signal and prompt-hash noise. Flagged on
    that role's row and on the ``all`` row in at least 80% of 10 salts; the same judge without
    the planted effect is flagged on the ``all`` row in at most alpha + 2 MC-SE of them."""
    weakest = world.rankings[f"s{SYSTEMS - 1}"]
    favoured = {(q, d) for q, docs in weakest.items() for d in docs[:DEPTH]}
    role = persona_prefix(FIXED_ROLES["evidence-verification"])
    draws, found, clean = 10, {"evidence-verification": 0, ALL: 0}, 0
    for salt in range(draws):
        rows = world.by_condition(noisy_judge(salt, world.grade, favoured, role), resamples=20, permutations=199)
        for name in found:
            found[name] += rows.loc[name, "excess_p"] < ALPHA and rows.loc[name, "excess_abs_delta_r"] > 0
        clean += (
            world.by_condition(noisy_judge(salt, world.grade), resamples=20, permutations=199).loc[ALL, "excess_p"]
            < ALPHA
        )
    print(f"planted effect, {draws} salts: found {found}; the judge without it flagged {clean}")
    assert all(count / draws >= 0.8 for count in found.values()), found
    assert clean / draws <= bound(draws)
