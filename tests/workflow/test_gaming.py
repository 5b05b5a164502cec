"""The gamed system (inject -> recover): a judge that adds a grade to passages holding every query
term is caught climbing with a stuffed system, a judge that ignores the modification does not
move it and is not flagged, and the human labels never move it (Δ = 0 by construction). Then the
probe through the workflow with the real MiniLM embedding judge on the demo collection."""

from __future__ import annotations

import copy
import functools
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import LOOPBACK_KEY, ROOT, snakemake

from voirdire.config import check, validate_schema
from voirdire.embedding_judge import grades_against
from voirdire.errors import InputError
from voirdire.evaluation import MEASURE, evaluate_systems
from voirdire.formats import read_qrels
from voirdire.judges import Scale
from voirdire.probes.gaming import (
    METHODS,
    combine,
    game,
    gaming_rows,
    items_to_modify,
    modified_texts,
    not_asked,
    stand_in,
    stuff,
)
from voirdire.probes.items import query_terms
from voirdire.verdict import FLAG, NA, PASS, DatasetTables, verdict

QUERIES = [f"q{i}" for i in range(8)]
TOPICS = {q: "alpha beta" for q in QUERIES}
GRADES = {"d1": 3, "d2": 2, "d3": 1, "d4": 1, "d5": 0, "d6": 0}
ORDERS = {  # humans: Top > Good > Weak
    "Top": ["d1", "d2", "d3", "d4", "d5", "d6"],
    "Good": ["d2", "d3", "d1", "d4", "d5", "d6"],
    "Weak": ["d3", "d4", "d2", "d1", "d5", "d6"],
}
TEXTS = {d: f"passage {d} about something else entirely" for d in GRADES}


def run(order: list[str]) -> pd.DataFrame:
    rows = [(q, d, float(len(order) - i)) for q in QUERIES for i, d in enumerate(order)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


RUNS = {name: [run(order)] for name, order in ORDERS.items()}
# every other query has one more relevant passage below everyone's top 4, so the queries differ
HUMAN = pd.DataFrame(
    [(q, d, 1 if (d, i % 2) == ("d5", 1) else g) for i, q in enumerate(QUERIES) for d, g in GRADES.items()],
    columns=["query_id", "doc_id", "relevance"],
)


def term_lover(query: str, text: str, grade: int) -> int:
    """A grade higher by one for a passage that holds every query term (Alaofi et al., 2025)."""
    terms = query_terms(query).split()
    return min(3, grade + 1) if all(t in text.lower().split() for t in terms) else grade


def ignorer(query: str, text: str, grade: int) -> int:
    return grade


def wide(qrels: pd.DataFrame) -> pd.DataFrame:
    long = evaluate_systems(RUNS, qrels, QUERIES, depth=10)
    return long.pivot(index="query_id", columns="system", values="ndcg")


def rows_for(judge) -> pd.DataFrame:
    items, _ = items_to_modify(RUNS["Weak"], 3, HUMAN)
    gamed = modified_texts(items, METHODS, TOPICS, TEXTS)
    grade = HUMAN.set_index(["query_id", "doc_id"])["relevance"]
    labels = pd.DataFrame(
        {
            "query_id": gamed["query_id"],
            "doc_id": gamed["gamed_id"],
            "relevance": [
                judge(TOPICS[q], t, int(grade[q, d]))
                for q, d, t in gamed[["query_id", "doc_id", "text"]].itertuples(index=False)
            ],
        }
    )
    scores = wide(HUMAN)  # the judge agrees with the humans on the unmodified passages
    return gaming_rows(
        dataset="d",
        judge=judge.__name__,
        methods=["stuff", "claim"],
        systems=["Weak"],
        runs=RUNS,
        scores=scores,
        human_scores=scores,
        judge_qrels=HUMAN,
        human_qrels=HUMAN,
        labels=labels,
        k=3,
        measure=str(MEASURE),
        depth=10,
        binary_threshold=2,
        human_threshold=2,
    )


def test_a_judge_that_rewards_the_query_terms_is_caught_climbing():
    rows = rows_for(term_lover).set_index("method")
    stuffed = rows.loc["stuff"]
    assert stuffed["gamed"] == "Weak#stuff" and stuffed["modified"] == 3 * len(QUERIES)
    assert stuffed["delta"] > 0 and stuffed["delta_ci_low"] > 0 and stuffed["delta_p"] < 0.05
    assert stuffed["rank"] == 3 and stuffed["rank_gamed"] < 3
    assert "Good" in stuffed["passes"].split(", ") and "Top" not in stuffed["passes"]
    assert stuffed["climbs"]
    assert stuffed["human_delta"] == 0
    # the claim holds no query term: this judge does not move it
    claimed = rows.loc["claim"]
    assert claimed["delta"] == 0 and not claimed["climbs"] and claimed["human_delta"] == 0


def test_a_judge_that_ignores_the_modification_does_not_move_and_is_not_flagged():
    rows = rows_for(ignorer)
    assert (rows["delta"] == 0).all() and (rows["delta_ci_low"] == 0).all() and (rows["delta_ci_high"] == 0).all()
    assert (rows["rank"] == rows["rank_gamed"]).all() and (rows["passes"] == "").all()
    assert not rows["climbs"].any() and (rows["human_delta"] == 0).all()


def test_the_verdict_flags_the_climber_passes_the_ignorer_and_says_why_for_the_rest():
    table = combine([rows_for(term_lover), rows_for(ignorer), not_asked("d", "assessor", "recorded: fixed")])
    table = pd.read_csv(pd.io.common.StringIO(table.to_csv(index=False)))  # as the verdict reads it
    long = verdict(
        {"d": DatasetTables(judges=["term_lover", "ignorer", "assessor", "other"], tables={"gaming": table})}
    )
    cells = long[long["question"] == "gameable"].set_index("judge")
    assert cells.loc["term_lover", "status"] == FLAG and cells.loc["term_lover", "ci_low"] > 0
    assert "Weak#stuff: rank 3 -> " in cells.loc["term_lover", "detail"]
    assert cells.loc["ignorer", "status"] == PASS and cells.loc["ignorer", "effect"] == 0
    assert cells.loc["assessor", "status"] == NA and cells.loc["assessor", "reason"] == "recorded: fixed"
    assert cells.loc["other", "status"] == NA
    nothing = verdict({"d": DatasetTables(judges=["j"], tables={"gaming": table}, unavailable={"texts": "no texts"})})
    assert nothing.set_index("question").loc["gameable", "reason"] == "no texts"


# Null kinds: judges biased in ways a gamed system cannot use. Each labels a modified passage as it
# labels the original (the modification adds no relevance and the judge ignores it), so a gamed
# system must not move under it however far its labels are from the humans'; the same judges with
# a planted reward for the modification must be caught climbing, and a planted penalty must show
# the other sign. Sixteen queries; Weak is 0.05 nDCG@10 below Good under the humans.

NULL_QUERIES = [f"n{i:02d}" for i in range(16)]
NULL_TOPICS = {q: "alpha beta" for q in NULL_QUERIES}
NULL_GRADES = {"d1": 3, "d2": 2, "d3": 2, "d4": 1, "d5": 1, "d6": 0, "d7": 0, "d8": 0}
NULL_ORDERS = {  # humans: Top > Good > Weak
    "Top": ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"],
    "Good": ["d2", "d1", "d4", "d3", "d6", "d5", "d7", "d8"],
    "Weak": ["d3", "d4", "d2", "d1", "d6", "d5", "d7", "d8"],
}
NULL_TEXTS = {d: f"passage {d} about something else entirely" for d in NULL_GRADES}
NULL_RUNS = {
    name: [
        pd.DataFrame(
            [(q, d, float(len(order) - i)) for q in NULL_QUERIES for i, d in enumerate(order)],
            columns=["query_id", "doc_id", "score"],
        )
    ]
    for name, order in NULL_ORDERS.items()
}
# every third query has one more relevant passage, below everyone's top 6, so the queries differ
NULL_HUMAN = pd.DataFrame(
    [
        (q, d, 1 if (d == "d7" and i % 3 == 0) else g)
        for i, q in enumerate(NULL_QUERIES)
        for d, g in NULL_GRADES.items()
    ],
    columns=["query_id", "doc_id", "relevance"],
)
NULL_KINDS = ("strict", "lenient", "noise", "topic")
CONSTANT_DIFFERENCES = pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
"""scipy's t test warns when a gamed system's per-query differences are all alike, as here."""


def null_judge(kind: str, seed: int = 7) -> pd.DataFrame:
    """The judge's labels of every pool pair: ``strict`` every grade -1, ``lenient`` every grade +1,
    ``noise`` each pair +-1 with probability 0.3 (differently in every query), ``topic`` each
    query's labels moved together by its own leniency (-1, 0, +1 or +2); clipped to 0-3."""
    rng = np.random.default_rng(seed)
    grades = NULL_HUMAN["relevance"].to_numpy()
    codes = NULL_HUMAN["query_id"].map({q: i for i, q in enumerate(NULL_QUERIES)}).to_numpy()
    moved = {
        "strict": -1,
        "lenient": 1,
        "noise": (rng.random(len(grades)) < 0.3) * rng.choice([-1, 1], len(grades)),
        "topic": rng.choice([-1, 0, 1, 2], len(NULL_QUERIES))[codes],
    }[kind]
    return NULL_HUMAN.assign(relevance=np.clip(grades + moved, 0, 3))


def plus_one(query: str, text: str, grade: int) -> int:
    """A grade higher by one for any modified passage (the claim obeyed, the terms rewarded)."""
    return min(3, grade + 1)


def minus_one(query: str, text: str, grade: int) -> int:
    """A grade lower by one for any modified passage (a judge that punishes the modification)."""
    return max(0, grade - 1)


def null_wide(qrels: pd.DataFrame) -> pd.DataFrame:
    long = evaluate_systems(NULL_RUNS, qrels, NULL_QUERIES, depth=10)
    return long.pivot(index="query_id", columns="system", values="ndcg")


def null_rows(kind: str, modified, *, as_human: bool = False) -> pd.DataFrame:
    """Weak and Good gamed by both methods (k 3) under the ``kind`` judge, which labels each
    modified passage ``modified(query, text, its grade of the original)``; ``as_human``: the
    modified passages labelled as the humans label their originals instead (what a probe that
    lost the judge's bias would score). Computed once per argument (the verdict test reuses them)."""
    return _null_rows(kind, modified, as_human).copy()


@functools.cache
def _null_rows(kind: str, modified, as_human: bool) -> pd.DataFrame:
    judge = null_judge(kind)
    items, _ = items_to_modify([r for s in ("Weak", "Good") for r in NULL_RUNS[s]], 3, NULL_HUMAN)
    gamed = modified_texts(items, METHODS, NULL_TOPICS, NULL_TEXTS)
    grade = (NULL_HUMAN if as_human else judge).set_index(["query_id", "doc_id"])["relevance"]
    labels = pd.DataFrame(
        {
            "query_id": gamed["query_id"],
            "doc_id": gamed["gamed_id"],
            "relevance": [
                modified(NULL_TOPICS[q], t, int(grade[q, d]))
                for q, d, t in gamed[["query_id", "doc_id", "text"]].itertuples(index=False)
            ],
        }
    )
    return gaming_rows(
        dataset="d",
        judge=f"{kind}+{modified.__name__}",
        methods=["stuff", "claim"],
        systems=["Weak", "Good"],
        runs=NULL_RUNS,
        scores=null_wide(judge),
        human_scores=null_wide(NULL_HUMAN),
        judge_qrels=judge,
        human_qrels=NULL_HUMAN,
        labels=labels,
        k=3,
        measure=str(MEASURE),
        depth=10,
        binary_threshold=2,
        human_threshold=2,
    )


@CONSTANT_DIFFERENCES
@pytest.mark.parametrize("kind", NULL_KINDS)
def test_a_biased_judge_that_ignores_the_modification_is_not_flagged(kind):
    judge = null_judge(kind)
    assert (judge["relevance"] != NULL_HUMAN["relevance"]).mean() > 0.2  # a biased judge, not a copy
    rows = null_rows(kind, ignorer)
    assert len(rows) == 4 and (rows["modified"] == 3 * len(NULL_QUERIES)).all()
    # scored on the judge's own footing: its Table 1 scores, not the humans'
    before = null_wide(judge).mean()
    assert np.allclose(rows["score"], before[rows["system"]].to_numpy())
    assert not np.allclose(rows["score"], null_wide(NULL_HUMAN).mean()[rows["system"]].to_numpy())
    assert (rows["delta"] == 0).all() and (rows["delta_ci_low"] == 0).all() and (rows["delta_ci_high"] == 0).all()
    assert (rows["score_gamed"] == rows["score"]).all() and (rows["rank_gamed"] == rows["rank"]).all()
    assert (rows["passes"] == "").all() and not rows["climbs"].any() and (rows["human_delta"] == 0).all()


@CONSTANT_DIFFERENCES
def test_the_null_tests_would_catch_a_probe_that_forgot_the_judges_bias():
    """Why the null tests can fail: scoring the modified passages with the humans' labels of their
    originals beside a strict judge's labels of everything else makes the strict judge climb."""
    rows = null_rows("strict", ignorer, as_human=True).set_index("gamed")
    assert rows.loc["Weak#stuff", "delta"] > 0 and rows.loc["Weak#stuff", "climbs"]


@CONSTANT_DIFFERENCES
@pytest.mark.parametrize("plant", [plus_one, term_lover], ids=["modified+1", "terms+1"])
@pytest.mark.parametrize("kind", NULL_KINDS)
def test_a_planted_reward_for_the_modification_is_caught_on_top_of_every_bias(kind, plant):
    rows = null_rows(kind, plant).set_index("gamed")
    weak = rows.loc["Weak#stuff"]
    assert weak["delta"] > 0 and weak["delta_ci_low"] > 0 and weak["delta_p"] < 0.05
    assert weak["rank_gamed"] < weak["rank"] and weak["passes"] == "Good" and weak["climbs"]
    assert rows.loc["Good#stuff", "delta"] > 0  # the same sign on the other gamed system
    assert not rows.loc["Good#stuff", "climbs"]  # Top is out of reach
    claimed = rows.loc["Weak#claim"]
    if plant is term_lover:  # the claim holds no query term: this judge does not move it
        assert claimed["delta"] == 0 and not claimed["climbs"]
    else:
        assert claimed["delta_ci_low"] > 0 and claimed["climbs"]
    assert (rows["human_delta"] == 0).all()


@CONSTANT_DIFFERENCES
@pytest.mark.parametrize("kind", NULL_KINDS)
def test_a_planted_penalty_for_the_modification_has_the_other_sign_and_does_not_climb(kind):
    rows = null_rows(kind, minus_one)
    assert (rows["delta"] < 0).all() and (rows["delta_ci_high"] < 0).all()
    assert (rows["rank_gamed"] >= rows["rank"]).all() and (rows["passes"] == "").all()
    assert not rows["climbs"].any() and (rows["human_delta"] == 0).all()


@CONSTANT_DIFFERENCES
def test_the_verdict_passes_every_null_judge_and_flags_every_planted_one():
    frames = [null_rows(kind, plant) for kind in NULL_KINDS for plant in (ignorer, plus_one, minus_one)]
    table = pd.read_csv(pd.io.common.StringIO(combine(frames).to_csv(index=False)))  # as the verdict reads it
    judges = list(table["judge"].unique())
    long = verdict({"d": DatasetTables(judges=judges, tables={"gaming": table})})
    status = long[long["question"] == "gameable"].set_index("judge")["status"]
    assert len(judges) == 12
    for kind in NULL_KINDS:
        assert status[f"{kind}+ignorer"] == PASS and status[f"{kind}+minus_one"] == PASS
        assert status[f"{kind}+plus_one"] == FLAG


def test_stuffing_appends_the_query_terms_up_to_the_share():
    passage = " ".join(["word"] * 40)
    text = stuff(passage, "How many bones are in the adult body", share=0.25)
    added = text.split()[40:]
    assert len(added) == 10 and set(added) == {"many", "bones", "adult", "body"}
    assert stuff("one two", "alpha beta gamma", share=0.25).split()[2:] == ["alpha", "beta", "gamma"]


def test_the_gamed_run_keeps_the_order_and_stands_in_for_the_originals():
    tied = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, 1.0, 0.5]})
    gamed, swap = game(tied, 2, "stuff")
    assert list(gamed["doc_id"]) == ["b#stuff", "a#stuff", "c"]  # trec_eval's order: ties by docid descending
    assert gamed["score"].is_monotonic_decreasing and swap == {("q", "b"): "b#stuff", ("q", "a"): "a#stuff"}
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    human = stand_in(qrels, swap).set_index("doc_id")["relevance"].to_dict()
    assert human == {"c": 2, "b#stuff": 0, "a#stuff": 1}
    judged = stand_in(qrels, swap, {("q", "a#stuff"): 3}).set_index("doc_id")["relevance"].to_dict()
    assert judged == {"c": 2, "a#stuff": 3}  # b#stuff unlabelled: unjudged


def test_an_embedding_grade_of_a_new_passage_moves_no_pool_label():
    reference = pd.DataFrame({"query_id": ["q"] * 4, "similarity": [0.1, 0.2, 0.3, 0.4], "relevance": [0, 1, 2, 3]})
    items = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["x", "y", "z"]})
    graded = grades_against(reference, items, [0.05, 0.25, 0.9], Scale(0, 3))
    assert list(graded["relevance"]) == [0, 1, 3]
    assert list(grades_against(reference, items, [0.05, 0.25, 0.9], Scale(0, 3), [0.2, 0.5, 0.8])["relevance"]) == [
        0,
        1,
        3,
    ]


def test_an_llm_judge_labels_the_modified_texts_through_its_judging_job(tmp_path, monkeypatch):
    """The one call path: texts by (query, passage), since a stuffed text carries its query's
    terms (one passage in two queries' top k is two texts and two calls); a judge that obeys the
    claim grades every claimed passage 3; a rerun makes no call."""
    from support.loopback import LoopbackServer

    from voirdire.judges import LLMJudge
    from voirdire.llm.endpoint import Endpoint
    from voirdire.llm_judge.job import run_judging_job

    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    topics = {"q1": "alpha beta", "q2": "gamma delta"}
    items = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"]})
    gamed = modified_texts(items, METHODS, topics, {"d1": "a passage about something else"})
    texts = dict(zip(zip(gamed["query_id"], gamed["gamed_id"]), gamed["text"]))
    pairs = gamed[["query_id", "gamed_id"]].rename(columns={"gamed_id": "doc_id"})
    with LoopbackServer(latency_s=0.0) as server:
        endpoint = Endpoint("openai/probe-obeys", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
        judge = LLMJudge(name="obeys", endpoint=endpoint)
        out = {k: tmp_path / f"judge.{k}" for k in ("txt", "parquet", "json")}
        for _ in range(2):
            run_judging_job(
                judge,
                pairs=pairs,
                texts=texts,
                topics=topics,
                store_path=tmp_path / "store.sqlite",
                provenance="gaming",
                qrels_out=out["txt"],
                raw_out=out["parquet"],
                summary_out=out["json"],
                progress=False,
            )
        assert len(server.log) == 4  # two queries x two methods, once
    labels = read_qrels(out["txt"]).set_index(["query_id", "doc_id"])["relevance"]
    assert labels["q1", "d1#claim"] == 3 and labels["q2", "d1#claim"] == 3
    raw = pd.read_parquet(out["parquet"])
    stuffed = gamed[gamed["method"] == "stuff"].set_index("query_id")["text"]
    assert stuffed["q1"].endswith("alpha beta") and stuffed["q2"].endswith("gamma delta")
    assert raw.set_index(["query_id", "doc_id"]).loc[("q1", "d1#stuff"), "passage_chars"] == len(stuffed["q1"])


def demo_config() -> dict:
    return yaml.safe_load((ROOT / "config/config.yaml").read_text())


def test_the_config_fills_defaults_and_names_bad_keys():
    config = demo_config()
    config["gaming"] = {}
    plan = check(validate_schema(config))
    gaming = plan.config["gaming"]
    assert gaming["k"] == 10 and gaming["methods"] == ["stuff", "claim"]
    assert gaming["systems"] == ["BM25", "rg-smollm2", "prp-smollm2", "dense-minilm"]  # no oracle
    assert plan.gaming_judges == {"smollm2": ["stuff", "claim"], "minilm": ["stuff", "claim"]}
    bad = demo_config()
    bad["gaming"] = {
        "methods": ["stuff", "mine"],
        "templates": {"mine": "no slot"},
        "systems": ["Nope"],
        "judges": {"assessor-b": ["stuff"], "minilm": ["claim"]},
    }
    with pytest.raises(InputError) as error:
        check(validate_schema(copy.deepcopy(bad)))
    text = str(error.value)
    for key in ("gaming.templates.mine", "gaming.systems[Nope]", "gaming.judges.assessor-b", "gaming.judges.minilm"):
        assert key in text


@pytest.mark.workflow
@pytest.mark.slow
def test_the_gamed_system_through_the_workflow_with_minilm(tmp_path):
    """MiniLM (real, bundled) on five of the demo's queries: every gamed system (the first stage
    and an oracle, Swap[1]) scored with an interval, the human Δ 0, MiniLM's labels of the
    modified passages, the recorded judge n/a with its reason. Kept to about a minute on two
    cores: Snakemake is asked for the gaming table alone; no reranker; five queries of fourteen;
    the first stage given as RankGPT candidates (each query's passages by query-term overlap), so
    no index is built. What is left is mostly torch's import in the two MiniLM jobs (the judge's
    pool labels and its labels of the modified passages)."""
    demo = ROOT / "resources/demo"
    topics = dict(line.split("\t") for line in (demo / "topics.tsv").read_text().splitlines()[:5])
    texts = {
        json.loads(line)["id"]: json.loads(line)["contents"]
        for line in (demo / "corpus.jsonl").read_text().splitlines()
    }
    entries = []
    for q, text in topics.items():
        terms = query_terms(text).split()
        overlap = {
            d: sum(t.lower().split().count(term) for term in terms)
            for d, t in texts.items()
            if d.startswith("d" + q[1:])
        }
        ranked = sorted(overlap, key=lambda d: (-overlap[d], d))
        hits = [
            {"qid": q, "docid": d, "score": float(overlap[d]), "rank": i + 1, "content": texts[d]}
            for i, d in enumerate(ranked)
        ]
        entries.append({"query": text, "hits": hits})
    (tmp_path / "candidates.json").write_text(json.dumps(entries))
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    qrels = [line for line in (demo / "qrels.txt").read_text().splitlines() if line.split()[0] in topics]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    config = demo_config()
    config["results"] = str(tmp_path / "results")
    config["datasets"] = {
        "demo": {
            "source": "rankgpt",
            "candidates": str(tmp_path / "candidates.json"),
            "topics": str(tmp_path / "topics.tsv"),
            "qrels": str(tmp_path / "qrels.txt"),
        }
    }
    config.pop("rankers")
    config["systems"] = ["BM25", "Perfect", "Swap[1]"]
    config["judges"] = [j for j in config["judges"] if j["name"] in ("minilm", "assessor-b")]
    for section in ("assistants", "rewriting", "probes", "variants"):
        config.pop(section, None)
    config["gaming"] = {"systems": ["BM25", "Swap[1]"], "k": 3, "methods": ["stuff", "claim"]}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(str(tmp_path / "results/audits/original/gaming.csv"), "--cores", "2", "--configfile", str(path))
    table = pd.read_csv(tmp_path / "results/audits/original/gaming.csv")
    asked = table[table["judge"] == "minilm"].set_index("gamed")
    assert set(asked.index) == {"BM25#stuff", "BM25#claim", "Swap[1]#stuff", "Swap[1]#claim"}
    assert (asked["queries"] == len(topics)).all() and (asked["systems"] == 3).all()
    assert asked[["delta", "delta_ci_low", "delta_ci_high"]].notna().all().all()
    assert (asked["delta_ci_low"] <= asked["delta"]).all() and (asked["delta"] <= asked["delta_ci_high"]).all()
    assert (asked["human_delta"] == 0).all() and (asked["unlabelled"] == 0).all()
    assert (asked["modified"] > 0).all() and (asked["modified"] <= 3 * len(topics)).all()
    # MiniLM graded each method's modified passages (those of both gamed systems, once each)
    labels = read_qrels(tmp_path / "results/demo/gaming/judge-minilm.txt")
    per_method = labels["doc_id"].str.split("#").str[1].value_counts().sort_index()
    modified = asked.groupby("method")["modified"]
    assert list(per_method.index) == ["claim", "stuff"] and labels["relevance"].between(0, 3).all()
    assert (per_method >= modified.max()).all() and (per_method <= modified.sum()).all()
    # no effect is asserted: whether MiniLM's cosine rises with the query's terms appended depends
    # on how close the passages already are to their queries (docs/probes.md)
    assert set(asked["climbs"].astype(str)) <= {"True", "False"}
    recorded = table[table["judge"] == "assessor-b"].iloc[0]
    assert pd.isna(recorded["delta"]) and "recorded judge" in recorded["reason"]
    md = (tmp_path / "results/audits/original/gaming.md").read_text()
    assert "BM25#stuff" in md and " [" in md  # Δ with its interval in one cell


def test_the_chart_marks_the_climber_red_and_the_ignorer_grey(tmp_path):
    from matplotlib.colors import to_rgba

    from voirdire.probes.gaming import gaming_chart

    table = pd.concat([rows_for(term_lover), rows_for(ignorer)], ignore_index=True)
    fig = gaming_chart(table, tmp_path / "gaming.png")
    assert (tmp_path / "gaming.png").stat().st_size > 5_000 and (tmp_path / "gaming.pdf").exists()
    (ax,) = fig.axes
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    colours = ax.collections[-1].get_facecolors()
    red = [label for label, colour in zip(labels, colours, strict=True) if tuple(colour) == to_rgba("tab:red")]
    climber = table[table["climbs"].astype(bool)].iloc[0]
    assert red == [f"term_lover: Weak#stuff (rank {climber['rank']} -> {climber['rank_gamed']})"]
    assert len(labels) == len(table)
    gaming_chart(table.iloc[0:0], tmp_path / "empty.png")  # no judge asked: a note, not an error
    assert (tmp_path / "empty.png").exists()
