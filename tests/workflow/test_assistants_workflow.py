"""The assistants experiment through the call path and the workflow: a planted bias is found,
a clean judge is not flagged, and bad input is one clear error that loses nothing."""

import difflib
import json

import pandas as pd
import pytest
import yaml
from conftest import LOOPBACK_KEY, ROOT, snakemake
from support.loopback import MARKER, REJECT, SILENT, LoopbackServer

from voirdire.assistants.declarations import LLMAssistant
from voirdire.assistants.job import CHECK_OPTIONS, run_rewrite_job
from voirdire.assistants.sample import balanced_sample
from voirdire.formats import read_corpus, read_qrels, read_run
from voirdire.llm import Endpoint, Store
from voirdire.llm.calls import CallsIncomplete

DEMO = ROOT / "resources" / "demo"
OPTIONS = {"min_length_ratio": 0.5, "max_length_ratio": 2.0, "copy_similarity": 0.95}
assert set(OPTIONS) == set(CHECK_OPTIONS)


def demo_without_probes() -> dict:
    """The demo config without the judge probes and the gamed system (they have tests of their own)."""
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    for section in ("probes", "gaming", "variants"):
        config.pop(section)
    config["datasets"]["demo"].pop("queries")  # the planted sizes were set for all 14 query clusters
    return config


def loopback_assistant(server, name="loop"):
    endpoint = Endpoint(model="openai/loopback-assistant", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
    return LLMAssistant(name=name, endpoint=endpoint)


def rewrite(assistant, originals, tmp_path, **options):
    return run_rewrite_job(
        assistant,
        originals,
        store_path=tmp_path / "rewrites.sqlite",
        out=tmp_path / "rewrites.parquet",
        summary_out=tmp_path / "rewrites.json",
        options=OPTIONS,
        progress=False,
        **options,
    )


def test_rewrites_go_through_the_call_path_and_an_empty_answer_is_flagged_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    corpus = dict(read_corpus(DEMO / "corpus.jsonl"))
    originals = {d: corpus[d] for d in list(corpus)[:5]}
    silent = list(originals)[2]
    originals[silent] = f"{originals[silent]} {SILENT}"
    with LoopbackServer() as server:
        summary = rewrite(loopback_assistant(server), originals, tmp_path)
        assert len(server.log) == 5  # one call per passage
        table = pd.read_parquet(tmp_path / "rewrites.parquet").set_index("doc_id")
        assert table.loc[silent, "empty"] and not table.loc[silent, "used"]
        others = table.drop(index=silent)
        assert all(t == f"{originals[d]} {MARKER}" for d, t in others["text"].items())

        # the loopback assistant only appends a mark: on a long passage that is a near-copy, which
        # the checks flag; flagged rewrites are kept by default and left out with drop_flagged
        def similarity(a, b):
            return difflib.SequenceMatcher(
                None, " ".join(a.lower().split()), " ".join(b.lower().split()), autojunk=False
            ).ratio()

        copies = {d for d, t in others["text"].items() if similarity(originals[d], t) >= OPTIONS["copy_similarity"]}
        assert copies  # the demo passages are long enough for some
        assert set(others.index[others["flagged"]]) == set(others.index[others["copy"]]) == copies
        assert others["used"].all()
        assert summary["used"] == 4 and summary["checks"]["empty"] == 1 and summary["calls_this_run"] == 5
        assert summary["model_versions"] == [server.model_version]
        again = rewrite(loopback_assistant(server), originals, tmp_path, drop_flagged=True)  # from the store
        assert len(server.log) == 5 and again["calls_this_run"] == 0
        assert again["used"] == 4 - len(copies)


def test_a_failing_rewrite_is_one_error_and_the_others_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    corpus = dict(read_corpus(DEMO / "corpus.jsonl"))
    originals = {d: corpus[d] for d in list(corpus)[:4]}
    bad = list(originals)[1]
    with LoopbackServer() as server:
        with pytest.raises(CallsIncomplete, match="1 of 4 calls"):
            rewrite(loopback_assistant(server), {**originals, bad: f"{originals[bad]} {REJECT}"}, tmp_path)
        with Store(tmp_path / "rewrites.sqlite") as store:
            kept = store._db.execute("SELECT COUNT(*) FROM calls WHERE purpose = 'rewrite'").fetchone()[0]
        assert kept == 3  # the three good rewrites are stored
        asked = len(server.log)
        rewrite(loopback_assistant(server), originals, tmp_path)  # the fixed input: only the one is asked
        assert len(server.log) == asked + 1


def experiment_config(tmp_path, server, **rewriting):
    config = demo_without_probes()
    config["results"] = str(tmp_path / "results")
    config["systems"] = ["BM25", "Perfect", "Swap[1]"]
    config["rankers"] = {}
    llm = {"kind": "llm", "api_base": server.url, "api_key_env": "VOIRDIRE_TEST_KEY", "concurrency": 16}
    config["judges"] = [
        # +1 to a passage the assistant (its own family) marked
        {"name": "inflating", "model": "openai/inflating", "family": "loopback", **llm},
        # the same grade with or without the mark
        {"name": "neutral", "model": "openai/neutral", "family": "other", **llm},
        {"name": "length", "kind": "baseline", "method": "length"},
    ]
    config["assistants"] = {
        "loop": {
            "model": "openai/loopback-assistant",
            "api_base": server.url,
            "api_key_env": "VOIRDIRE_TEST_KEY",
            "family": "loopback",
        }
    }
    config["rewriting"] = {"per_grade": 10, "seed": 7, "rankers": [], **rewriting}
    return config


def write_config(tmp_path, config, name="config.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.workflow
@pytest.mark.slow
def test_an_inflating_judge_is_found_and_a_neutral_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    qrels = read_qrels(DEMO / "qrels.txt")
    sample, _ = balanced_sample(qrels, 10, 7)  # the workflow draws this same sample
    corpus = dict(read_corpus(DEMO / "corpus.jsonl"))
    # a recorded assistant: precomputed rewrites of every sampled passage but one
    sampled = sorted(set(sample["doc_id"]))
    absent = sampled[0]
    recorded = tmp_path / "rewrites.tsv"
    recorded.write_text("".join(f"{d}\t{corpus[d]} {MARKER}\n" for d in sampled if d != absent))
    out = tmp_path / "results"
    with LoopbackServer() as server:
        config = experiment_config(tmp_path, server)
        config["assistants"]["rec"] = {"kind": "recorded", "rewrites": str(recorded)}
        path = write_config(tmp_path, config)
        snakemake("plan", "--cores", "2", "--configfile", str(path))
        assert server.log == []  # planning makes no call, and lists the rewrites first
        plan = (out / "plan/original.md").read_text()
        row = next(line for line in plan.splitlines() if line.startswith("| rewrite") and "| loop " in line)
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[cells.index("openai/loopback-assistant") + 1 :][:3] == [str(len(sampled)), "0", str(len(sampled))]
        # the two rewritten collections' tables and what they need (the demo test runs everything);
        # the fingerprint (the tables job's, with its agreement job) only of the one it is read of
        targets = [str(out / f"tables/rewritten-{a}/label_shift.csv") for a in ("loop", "rec")]
        targets.append(str(out / "tables/rewritten-loop/fingerprint.json"))
        snakemake(*targets, "--cores", "2", "--configfile", str(path))
        calls = len(server.log)
        assert snakemake(*targets, "--cores", "2", "--configfile", str(path)).stderr.count("Nothing to be done") == 1
        assert len(server.log) == calls  # a second run makes no call

    drawn = pd.read_csv(out / "sample/demo.tsv", sep="\t", dtype={"query_id": str, "doc_id": str})
    assert sorted(zip(drawn["query_id"], drawn["doc_id"])) == sorted(zip(sample["query_id"], sample["doc_id"]))
    original = read_qrels(out / "demo/sample/original/inflating.txt").set_index(["query_id", "doc_id"])["relevance"]
    shift = pd.read_csv(out / "tables/rewritten-loop/label_shift.csv").set_index(["judge", "stratum"])
    planted = shift.loc[("inflating", "all")]
    assert planted["significant"] and planted["direction"] == "up"
    assert planted["n"] == len(sample) == 40
    assert planted["up"] == (original < 3).sum()  # every grade below 3 rose
    assert planted["down"] == 0
    clean = shift.loc[("neutral", "all")]
    assert not clean["significant"] and clean["direction"] == "none" and clean["mean_shift"] == 0
    assert clean["same_share"] == 1 and clean["shift_p"] == 1

    # label-level self-preference: the inflating judge shares the assistant's family
    preference = pd.read_csv(out / "tables/rewritten-loop/rewrite_self_preference.csv").set_index("judge")
    assert preference.loc["inflating", "self_preferring"] and preference.loc["inflating", "excess_ci_low"] > 0
    assert not preference.loc["neutral", "self_preferring"] and "length" not in preference.index

    # the recorded assistant: the passage without a rewrite is listed and left out, with its pairs
    checks = pd.read_csv(out / "tables/rewritten-rec/rewrite_checks.csv", dtype={"doc_id": str})
    assert list(checks.loc[checks["missing"], "doc_id"]) == [absent]
    rec = pd.read_csv(out / "tables/rewritten-rec/label_shift.csv").set_index(["judge", "stratum"])
    assert rec.loc[("inflating", "all"), "n"] == (sample["doc_id"] != absent).sum()
    assert rec.loc[("inflating", "all"), "direction"] == "up" and rec.loc[("neutral", "all"), "mean_shift"] == 0

    # experiment 2: the pools hold this many rewritten passages; under the humans nothing moves
    pool = read_run(out / "demo/runs/original/bm25.run")
    substitution = pd.read_csv(out / "tables/rewritten-loop/substitution.csv")
    assert (substitution["in_pool_passages"] == pool["doc_id"].drop_duplicates().isin(sampled).sum()).all()
    human = substitution[substitution["judge"] == "human"]
    assert (human["delta"] == 0).all()
    perfect = substitution.set_index(["judge", "system"]).loc[("inflating", "Perfect")]
    assert perfect["ndcg_rewritten"] != perfect["ndcg_original"]  # inflated labels move the score

    fingerprint = json.loads((out / "tables/rewritten-loop/fingerprint.json").read_text())
    assert fingerprint["assistant"]["demo"]["model"] == "openai/loopback-assistant"
    assert fingerprint["assistant"]["demo"]["model_versions"] == [server.model_version]
    assert (out / "figures/rewritten-loop/figure4.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.workflow
def test_a_rewrite_file_with_unknown_ids_is_one_line_naming_file_and_id(tmp_path):
    recorded = tmp_path / "rewrites.jsonl"
    recorded.write_text(
        json.dumps({"_id": "d0101", "text": "x"}) + "\n" + json.dumps({"_id": "nope", "text": "y"}) + "\n"
    )
    config = demo_without_probes()
    config.update(
        results=str(tmp_path / "results"),
        systems=["BM25", "Perfect"],
        rankers={},
        judges=[{"name": "length", "kind": "baseline", "method": "length"}],
        assistants={"rec": {"kind": "recorded", "rewrites": str(recorded)}},
        rewriting={"per_grade": 2},
    )
    path = write_config(tmp_path, config)
    result = snakemake("--cores", "1", "--configfile", str(path), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if line.startswith("voirdire: ")]
    assert len(lines) == 1 and str(recorded) in lines[0] and "'nope'" in lines[0], output
    assert (tmp_path / "results/sample/demo.tsv").is_file()  # what was computed before is kept


def test_an_assistant_whose_key_is_unset_fails_before_any_job(tmp_path, monkeypatch):
    monkeypatch.delenv("VOIRDIRE_UNSET_KEY", raising=False)
    config = demo_without_probes()
    config["results"] = str(tmp_path / "results")
    config["assistants"] = {"api": {"model": "openai/gpt-4o-mini", "api_key_env": "VOIRDIRE_UNSET_KEY"}}
    result = snakemake("-n", "--cores", "1", "--configfile", str(write_config(tmp_path, config)), check=False)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("voirdire: ")]
    assert result.returncode != 0 and len(lines) == 1
    assert "assistants.api" in lines[0] and "VOIRDIRE_UNSET_KEY" in lines[0]
    assert not (tmp_path / "results" / "demo").exists()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"rewriting": {"rankers": ["nope"]}}, "rewriting.rankers[0]"),
        ({"rewriting": {"rankers": ["prp-smollm2"]}}, "needs a pointwise one"),
        ({"assistants": {"bad": {"model": "local/smollm2-135m", "prompt_file": "SLOTLESS"}}}, "no {passage} slot"),
        ({"assistants": {"bad": {"kind": "recorded"}}}, "assistants.bad.rewrites"),
    ],
)
def test_bad_assistant_config_is_one_line_naming_the_key(tmp_path, change, expected):
    config = demo_without_probes()
    config["results"] = str(tmp_path / "results")
    (tmp_path / "slotless.txt").write_text("Please rewrite the following text.\n")
    config.update(json.loads(json.dumps(change).replace("SLOTLESS", str(tmp_path / "slotless.txt"))))
    result = snakemake("-n", "--cores", "1", "--configfile", str(write_config(tmp_path, config)), check=False)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("voirdire: ")]
    assert result.returncode != 0 and len(lines) == 1 and expected in lines[0], result.stderr


def test_only_queries_whose_reranked_head_holds_a_rewrite_are_reranked_again():
    from voirdire.rankers.rerank import unchanged_queries

    pools = {"q1": ["a", "b", "c", "d"], "q2": ["c", "a", "x", "y"], "q3": ["y", "z"]}
    assert unchanged_queries(pools, 2, {"c"}) == {"q1", "q3"}  # c is third in q1: below the head
    assert unchanged_queries(pools, 3, {"c"}) == {"q3"}
    assert unchanged_queries(pools, 2, set()) == set(pools)
    assert unchanged_queries(pools, 4, {"y", "a"}) == set()
