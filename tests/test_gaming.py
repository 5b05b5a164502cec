"""The gamed system (inject -> recover): a judge that adds a grade to passages holding every query
term is caught climbing with a stuffed system, a judge that ignores the modification does not
move it and is not flagged, and the human labels never move it (Δ = 0 by construction). Then the
probe through the workflow with the real MiniLM embedding judge on the demo collection."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml
from conftest import ROOT, snakemake

from voirdire.config import check, validate_schema
from voirdire.embedding_judge import grades_against
from voirdire.errors import InputError
from voirdire.evaluation import MEASURE, evaluate_systems
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
HUMAN = pd.DataFrame([(q, d, 1 if (d, i % 2) == ("d5", 1) else g) for i, q in enumerate(QUERIES)
                      for d, g in GRADES.items()], columns=["query_id", "doc_id", "relevance"])  # fmt: skip


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
    labels = pd.DataFrame({"query_id": gamed["query_id"], "doc_id": gamed["gamed_id"],
                           "relevance": [judge(TOPICS[q], t, int(grade[q, d])) for q, d, t in
                                         gamed[["query_id", "doc_id", "text"]].itertuples(index=False)]})  # fmt: skip
    scores = wide(HUMAN)  # the judge agrees with the humans on the unmodified passages
    return gaming_rows(dataset="d", judge=judge.__name__, methods=["stuff", "claim"], systems=["Weak"], runs=RUNS,
                       scores=scores, human_scores=scores, judge_qrels=HUMAN, human_qrels=HUMAN, labels=labels, k=3,
                       measure=str(MEASURE), depth=10, binary_threshold=2, human_threshold=2)  # fmt: skip


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
    from loopback import LoopbackServer

    from voirdire.formats import read_qrels
    from voirdire.judges import LLMJudge
    from voirdire.judging.job import run_judging_job
    from voirdire.llm.endpoint import Endpoint

    monkeypatch.setenv("VOIRDIRE_TEST_KEY", "sk-gaming")
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
            run_judging_job(judge, pairs=pairs, texts=texts, topics=topics, store_path=tmp_path / "store.sqlite",
                            provenance="gaming", qrels_out=out["txt"], raw_out=out["parquet"],
                            summary_out=out["json"], progress=False)  # fmt: skip
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
    bad["gaming"] = {"methods": ["stuff", "mine"], "templates": {"mine": "no slot"}, "systems": ["Nope"],
                     "judges": {"assessor-b": ["stuff"], "minilm": ["claim"]}}  # fmt: skip
    with pytest.raises(InputError) as error:
        check(validate_schema(copy.deepcopy(bad)))
    text = str(error.value)
    for key in ("gaming.templates.mine", "gaming.systems[Nope]", "gaming.judges.assessor-b", "gaming.judges.minilm"):
        assert key in text


@pytest.mark.workflow
@pytest.mark.slow
def test_the_gamed_system_through_the_workflow_with_minilm(tmp_path):
    """MiniLM (real, bundled) on the demo collection: every gamed system scored with an interval,
    the human Δ 0, the recorded judge n/a with its reason."""
    config = demo_config()
    config["results"] = str(tmp_path / "results")
    config["rankers"] = {"dense-minilm": config["rankers"]["dense-minilm"]}
    config["systems"] = ["BM25", "Perfect", "Swap[1]", "dense-minilm"]
    config["judges"] = [j for j in config["judges"] if j["name"] in ("minilm", "assessor-b")]
    for section in ("assistants", "rewriting", "probes", "variants"):
        config.pop(section, None)
    config["gaming"] = {"systems": ["BM25", "dense-minilm"], "k": 3, "methods": ["stuff", "claim"]}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(str(tmp_path / "results/audits/original/gaming.csv"), "--cores", "2", "--configfile", str(path))
    table = pd.read_csv(tmp_path / "results/audits/original/gaming.csv")
    asked = table[table["judge"] == "minilm"].set_index("gamed")
    assert set(asked.index) == {"BM25#stuff", "BM25#claim", "dense-minilm#stuff", "dense-minilm#claim"}
    assert asked[["delta", "delta_ci_low", "delta_ci_high"]].notna().all().all()
    assert (asked["delta_ci_low"] <= asked["delta"]).all() and (asked["delta"] <= asked["delta_ci_high"]).all()
    assert (asked["human_delta"] == 0).all() and (asked["unlabelled"] == 0).all()
    assert (asked["modified"] > 0).all()
    # no effect is asserted: on the demo's top passages, already close to their queries, MiniLM's
    # cosine does not rise with the query's terms appended (docs/probes.md)
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
