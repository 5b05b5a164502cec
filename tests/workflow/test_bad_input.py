"""No silent wrong numbers: input that cannot be used as written is one clear line (file:line or
config key) before any job where possible, and leaves what was computed untouched; input that
can be used but loses something is counted in the results and said in the log."""

import copy
import fcntl
import json
import socket

import pandas as pd
import pytest
import yaml
from conftest import LOOPBACK_KEY, ROOT, keep_judges, snakemake
from support.loopback import Faults, LoopbackServer

from voirdire import bm25
from voirdire.cli import main as voirdire_cli
from voirdire.errors import InputError
from voirdire.formats import read_corpus, read_qrels, read_rankgpt, read_topics
from voirdire.llm import Call, Endpoint, Request, Store, call_all
from voirdire.llm.calls import EndpointDown
from voirdire.llm.env import import_litellm

DEMO = ROOT / "resources" / "demo"
BOM = "\ufeff"


def demo_config(tmp_path, **changes):
    """The demo config without its model-based judges and rankers (fast), writing under tmp_path."""
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["systems"] = [s for s in config["systems"] if s not in config["rankers"]]
    config["rankers"] = {}
    keep_judges(config, lambda judge: judge["kind"] not in ("llm", "embedding"))
    for section in ("assistants", "rewriting", "probes", "gaming", "variants"):  # these have tests of their own
        config.pop(section)
    for key, value in changes.items():
        config[key] = value
    return config


def write_config(tmp_path, config, name="config.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def fails_before_any_job(tmp_path, config, *expected):
    """Run the workflow on ``config``: it must fail with one line that says ``expected``."""
    result = snakemake("--cores", "1", "--configfile", str(write_config(tmp_path, config, "bad.yaml")), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if line.startswith("voirdire: ")]
    assert len(lines) == 1, output  # one line ...
    for text in expected:
        assert text in lines[0], lines[0]
    assert "Traceback" not in output and 'File "' not in output  # ... and no Python traceback
    return lines[0]


def snapshot(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and ".preflight" not in p.parts}


# ----------------------------------------------------------------------------- text encodings


def test_a_byte_order_mark_loses_nothing_in_any_text_input(write):
    qrels = read_qrels(write("q.txt", BOM + "q01 0 d1 2\nq01 0 d2 0\n"))
    assert list(qrels["query_id"]) == ["q01", "q01"]  # not "\ufeffq01"
    assert read_topics(write("t.tsv", BOM + "q01\tbones\n")) == {"q01": "bones"}
    assert list(read_corpus(write("c.jsonl", BOM + '{"id": "d1", "contents": "x"}\n'))) == [("d1", "x")]
    candidates = [{"query": "bones", "hits": [{"qid": "q01", "docid": "d1", "score": 1.0, "content": "x"}]}]
    topics, run, _ = read_rankgpt(write("r.json", BOM + json.dumps(candidates)))
    assert topics == {"q01": "bones"} and list(run["query_id"]) == ["q01"]


def test_text_that_is_not_utf8_names_the_byte_and_line(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_bytes("q01\tbones\nq02\tcaf\u00e9 au lait\n".encode("latin-1"))
    with pytest.raises(InputError) as info:
        read_topics(path)
    assert str(info.value) == f"{path}:2: not UTF-8 at byte 17 (line 2); save the file as UTF-8"


def test_latin1_topics_fail_before_any_job_with_one_line(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_bytes((DEMO / "topics.tsv").read_text().replace("bones", "b\u00f3nes").encode("latin-1"))
    config = demo_config(tmp_path)
    config["datasets"]["demo"]["topics"] = str(topics)
    fails_before_any_job(tmp_path, config, f"{topics}:1", "not UTF-8 at byte")
    assert not (tmp_path / "results" / "demo").exists()


# ----------------------------------------------------------------------------- ids that do not fit


def test_qrels_of_unknown_queries_are_an_error_or_a_counted_drop(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text((DEMO / "qrels.txt").read_text() + "q99 0 d0101 3\nq99 0 d0102 1\n")
    config = demo_config(tmp_path)
    config["datasets"]["demo"]["qrels"] = str(qrels)
    fails_before_any_job(tmp_path, config, "config key 'datasets.demo.unknown_qrels'", "first: q99")
    config["datasets"]["demo"]["unknown_qrels"] = "drop"
    path = write_config(tmp_path, config)
    summary = tmp_path / "results/demo/data/summary.json"
    snakemake(str(summary), "--cores", "1", "--configfile", str(path))
    found = json.loads(summary.read_text())
    # the demo runs on the queries its config lists; the other topics are set aside and counted
    listed = config["datasets"]["demo"]["queries"]
    assert found["unknown_qrels_dropped"] == 2 and found["topics"] == len(listed) < 14
    assert found["queries_set_aside"] == 14 - len(listed) == len(found["set_aside"])
    assert not set(found["set_aside"]) & set(listed)
    log = (tmp_path / "results/logs/demo/dataset.log").read_text()
    assert "unknown_qrels: dropped 2" in log


def rankgpt_files(tmp_path, covered):
    """A RankGPT candidates file covering ``covered`` of the demo's first three queries."""
    topics = dict(line.split("\t") for line in (DEMO / "topics.tsv").read_text().splitlines()[:3])
    texts = {
        json.loads(line)["id"]: json.loads(line)["contents"]
        for line in (DEMO / "corpus.jsonl").read_text().splitlines()
    }
    qrels = [line for line in (DEMO / "qrels.txt").read_text().splitlines() if line.split()[0] in topics]
    entries = [
        {
            "query": topics[q],
            "hits": [
                {"qid": q, "docid": d, "score": 10.0 - i, "rank": i + 1, "content": texts[d]}
                for i, d in enumerate(sorted(t for t in texts if t.startswith("d" + q[1:])))
            ],
        }
        for q in covered
    ]
    (tmp_path / "cands.json").write_text(json.dumps(entries))
    (tmp_path / "topics3.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    (tmp_path / "qrels3.txt").write_text("\n".join(qrels) + "\n")
    return {
        "source": "rankgpt",
        "candidates": str(tmp_path / "cands.json"),
        "topics": str(tmp_path / "topics3.tsv"),
        "qrels": str(tmp_path / "qrels3.txt"),
    }


def test_candidates_that_miss_topics_are_an_error_or_a_counted_drop(tmp_path):
    config = demo_config(tmp_path, datasets={"small": rankgpt_files(tmp_path, ["q01", "q02"])})
    config["judges"] = []
    fails_before_any_job(
        tmp_path, config, "config key 'datasets.small.uncovered_topics'", "first: q03", str(tmp_path / "cands.json")
    )
    config["datasets"]["small"]["uncovered_topics"] = "drop"
    path = write_config(tmp_path, config)
    datasets_table = tmp_path / "results/tables/original/datasets.csv"  # the tables job: per_query beside it
    snakemake(str(datasets_table), "--cores", "2", "--configfile", str(path))
    datasets = pd.read_csv(datasets_table)
    assert datasets.loc[0, "uncovered_topics_dropped"] == 1 and datasets.loc[0, "topics"] == 2
    per_query = pd.read_parquet(tmp_path / "results/tables/original/per_query.parquet")
    assert set(per_query["query_id"]) == {"q01", "q02"}  # q03 is not scored 0 by every system


# ----------------------------------------------------------------------------- recorded judges


def test_a_recorded_judge_of_another_dataset_fails_before_any_job(tmp_path):
    other = tmp_path / "dl20.txt"
    other.write_text("1030303 0 8726436 3\n1030303 0 8726437 0\n")
    config = demo_config(tmp_path)
    config["judges"].append({"name": "from-dl20", "kind": "recorded", "qrels": str(other)})
    fails_before_any_job(tmp_path, config, str(other), "'from-dl20'", "no label for any query")


@pytest.mark.workflow
@pytest.mark.slow
def test_coverage_and_outside_pool_labels_reach_table2_and_a_new_judge_reaches_the_tables(tmp_path):
    """Also: tables follow the config on --rerun-triggers mtime (the manifest), and a failure
    inside a job (a judge labelling no needed pair) is one line and changes no result."""
    half = tmp_path / "half.txt"
    lines = (DEMO / "qrels.assessor-b.txt").read_text().splitlines()
    half.write_text("\n".join(lines[::2]) + "\n")
    extra = tmp_path / "extra.txt"
    extra.write_text((DEMO / "qrels.assessor-b.txt").read_text() + "q01 0 d9999 3\nq02 0 d9998 1\n")
    rerun = tmp_path / "rerun.txt"  # assessor-b asked again: every 10th label one grade off
    rerun.write_text(
        "".join(
            f"{q} 0 {d} {(int(g) + 1) % 4 if i % 10 == 0 else g}\n"
            for i, (q, _, d, g) in enumerate(line.split() for line in lines)
        )
    )
    config = demo_config(tmp_path)
    # the recorded judges alone (no assertion reads the baselines or the jury: three jobs fewer),
    # three systems, Table 2's intervals on the fewest resamples (no assertion reads an interval)
    keep_judges(config, lambda judge: judge["kind"] == "recorded")
    config["systems"] = ["BM25", "Perfect", "Swap[1]"]
    config["evaluation"]["resamples"] = 100
    config["judges"] += [
        {"name": "half", "kind": "recorded", "qrels": str(half)},
        {"name": "extra", "kind": "recorded", "qrels": str(extra)},
        {"name": "b-again", "kind": "recorded", "qrels": str(DEMO / "qrels.assessor-b.txt"), "reruns": [str(rerun)]},
    ]
    path = write_config(tmp_path, config)
    out = tmp_path / "results"
    # the tables (Table 2, the fingerprint) and the audits (drift) this test reads, not the whole workflow
    targets = [str(out / "tables/original/table2.csv"), str(out / "audits/original/drift.csv")]
    snakemake(*targets, "--cores", "2", "--configfile", str(path))
    needed = {tuple(line.split()[:2]) for line in (out / "demo/pairs/original.tsv").read_text().splitlines()[1:]}
    planted = sum(i % 10 == 0 and (q, d) in needed for i, (q, _, d, _) in enumerate(line.split() for line in lines))
    drifted = pd.read_csv(out / "audits/original/drift.csv").set_index("judge")
    assert drifted.loc["b-again", "flips"] == planted > 0  # the drift audit finds every planted flip
    assert drifted.loc["b-again", "flip_rate"] == pytest.approx(planted / len(needed))
    table2 = pd.read_csv(out / "tables/original/table2.csv").set_index("judge")
    assert bool(table2.loc["half", "low_coverage"]) and table2.loc["half", "coverage"] < 0.9
    assert not table2.loc["assessor-b", "low_coverage"]
    pool = {tuple(line.split()[:2]) for line in (out / "demo/pairs/original.tsv").read_text().splitlines()[1:]}
    in_queries = [line.split() for line in extra.read_text().splitlines()]
    kept = set(config["datasets"]["demo"]["queries"])  # labels of the queries set aside are other queries
    outside = sum((q, d) not in pool for q, _, d, _ in in_queries if q in kept)
    assert table2.loc["extra", "labels_outside_pool"] == outside >= 2
    other = sum(q not in kept for q, *_ in in_queries)
    assert f"'labels_other_queries': {other}," in (out / "logs/demo/original/recorded_judges.log").read_text()
    assert other > 0
    assert "under min_coverage" in (out / "logs/demo/original/agreement.log").read_text()
    manifest = json.loads((out / "manifest.json").read_text())["judges"]
    assert [j["name"] for j in manifest][-3:] == ["half", "extra", "b-again"]
    assert (out / "tables/original/fingerprint.json").read_text().count("manifest_sha256") == 1

    # a new judge in the config reaches the tables even with --rerun-triggers mtime
    config["judges"].append({"name": "late", "kind": "baseline", "method": "length"})
    path = write_config(tmp_path, config)
    snakemake(
        str(out / "tables/original/table1.csv"), "--cores", "2", "--configfile", str(path), "--rerun-triggers", "mtime"
    )
    assert "late" in pd.read_csv(out / "tables/original/table1.csv").columns

    # judges whose labels share queries but no needed pair fail the dataset's recorded judges'
    # job, in one line each. Snakemake removes that job's outputs (every recorded judge's labels
    # of the dataset, rebuilt by the next run); nothing else computed is touched.
    before = snapshot(out)
    recorded = ["assessor-b", "half", "extra", "b-again"]
    job_files = {
        out / "logs/demo/original/recorded_judges.log",
        out / "logs/benchmarks/demo/original/recorded_judges.tsv",
        *(out / f"demo/qrels/original/{name}.txt" for name in recorded),
        *(out / f"demo/judgments/original/{name}.summary.json" for name in recorded),
    }
    assert job_files <= set(before)
    good = copy.deepcopy(config)
    strays = [tmp_path / "stray.txt", tmp_path / "stray2.txt"]
    for index, stray in enumerate(strays):
        stray.write_text(f"{config['datasets']['demo']['queries'][index]} 0 d9999 3\n")
        config["judges"].append({"name": stray.stem, "kind": "recorded", "qrels": str(stray)})
    result = snakemake(*targets, "--cores", "2", "--configfile", str(write_config(tmp_path, config)), check=False)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("voirdire: ")]
    assert lines == [
        f"voirdire: {stray}: recorded judge '{stray.stem}' labels none of the "
        f"{len(pool)} pairs to judge (1 of its 1 labels are for this dataset's queries); "
        "is it the qrels of another dataset?"
        for stray in strays
    ]
    assert "Traceback" in (out / "logs/demo/original/recorded_judges.log").read_text()  # kept in the log
    after = snapshot(out)

    # the manifest is the new config's: written as the run plans its jobs, before the judges' job fails
    # (the cost ledger, which `all` remakes from it, is not among these targets)
    computed = {p: b for p, b in before.items() if p.name != "manifest.json" and p not in job_files}
    assert {p: b for p, b in after.items() if p in computed} == computed  # nothing else computed was touched
    # the next run (here asked for the recorded judges' files alone) writes the same labels again
    outputs = sorted(p for p in job_files if "logs" not in p.parts)
    snakemake(*map(str, outputs), "--cores", "2", "--configfile", str(write_config(tmp_path, good)))
    assert {p: p.read_bytes() for p in outputs} == {p: before[p] for p in outputs}


# ----------------------------------------------------------------------------- config and environment


def test_an_unset_api_key_fails_before_any_job(tmp_path, monkeypatch):
    monkeypatch.delenv("VOIRDIRE_UNSET_KEY", raising=False)
    config = demo_config(tmp_path)
    config["judges"].append(
        {"name": "api", "kind": "llm", "model": "openai/gpt-4o", "api_key_env": "VOIRDIRE_UNSET_KEY"}
    )
    fails_before_any_job(tmp_path, config, "config key 'judges[api].api_key_env'", "VOIRDIRE_UNSET_KEY", "not set")
    assert not (tmp_path / "results" / "demo").exists()  # nothing ran
    dry = snakemake("-n", "--cores", "1", "--configfile", str(tmp_path / "bad.yaml"), check=False)
    assert dry.returncode != 0 and "VOIRDIRE_UNSET_KEY" in dry.stderr  # a dry run says so too
    lint = snakemake("--lint", "--configfile", str(tmp_path / "bad.yaml"), check=False)
    assert "Congratulations" in lint.stdout + lint.stderr  # linting needs no key


def test_a_bad_corpus_line_fails_before_any_job_and_keeps_what_was_computed(tmp_path):
    config = demo_config(tmp_path)
    path = write_config(tmp_path, config)
    topics = tmp_path / "results/demo/data/topics.tsv"
    snakemake(str(topics), "--cores", "1", "--configfile", str(path))
    before = snapshot(tmp_path / "results")
    corpus = tmp_path / "corpus.jsonl"
    lines = (DEMO / "corpus.jsonl").read_text().splitlines()
    lines[4] = lines[4][:-1]  # a truncated record
    corpus.write_text("\n".join(lines) + "\n")
    config["datasets"]["demo"]["corpus"] = str(corpus)
    fails_before_any_job(tmp_path, config, f"{corpus}:5", "not valid JSON at column")
    assert snapshot(tmp_path / "results") == before


def test_a_results_path_below_a_file_fails_with_one_line(tmp_path):
    (tmp_path / "afile").write_text("x")
    config = demo_config(tmp_path, results=str(tmp_path / "afile" / "results"))
    fails_before_any_job(tmp_path, config, "config key 'results'", "is a file")


def test_voirdire_check_names_yaml_errors_and_missing_files_in_one_line(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text("results: r\ndatasets:\n  demo: {source: local, topics: t.tsv\n")
    assert voirdire_cli(["check", "--configfile", str(broken)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"voirdire: {broken}:4: not valid YAML at column 1: expected ',' or '}}', but got '<stream end>'"
    )
    assert voirdire_cli(["check", "--configfile", str(tmp_path / "none.yaml")]) == 2
    assert capsys.readouterr().err.strip() == f"voirdire: {tmp_path / 'none.yaml'}: config file not found"
    assert voirdire_cli(["check", "--configfile", str(write_config(tmp_path, demo_config(tmp_path)))]) == 0
    assert capsys.readouterr().out.startswith("ok: 1 dataset(s)")


# ----------------------------------------------------------------------------- endpoints


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probe_calls(n, tag=""):
    return [Call(Request.chat("probe", "openai/x", [{"role": "user", "content": f"{tag}{i}"}]), "p") for i in range(n)]


def test_a_dead_endpoint_trips_the_breaker_and_keeps_what_is_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    calls = probe_calls(120)
    with LoopbackServer() as server, Store(tmp_path / "s.sqlite") as store:
        live = Endpoint("openai/x", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
        call_all(live, calls[:30], store, progress=False)
    dead = Endpoint(
        "openai/x",
        api_base=f"http://127.0.0.1:{closed_port()}/v1",
        api_key_env="VOIRDIRE_TEST_KEY",
        concurrency=8,
        max_connection_failures=12,
    )
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(EndpointDown) as info:
        call_all(dead, calls, store, progress=False, desc="judging dead")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"judging dead: endpoint {dead} is not answering: ")
    assert "connection failures in a row" in message and "Connection error" in message
    with Store(tmp_path / "s.sqlite") as store:
        assert len(store.existing(c.key for c in calls)) == 30  # what was stored stays stored


def test_a_hanging_endpoint_trips_the_breaker_after_a_bounded_number_of_requests(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    with LoopbackServer(faults=Faults(rate_timeout=1.0, timeout_s=5)) as server:
        endpoint = Endpoint(
            "openai/x",
            api_base=server.url,
            api_key_env="VOIRDIRE_TEST_KEY",
            concurrency=8,
            timeout_s=0.5,
            max_connection_failures=20,
        )
        with Store(tmp_path / "s.sqlite") as store, pytest.raises(EndpointDown, match="is not answering"):
            call_all(endpoint, probe_calls(300), store, progress=False)
        asked = len(server.log)
    # without the breaker: 300 calls x 4 attempts (no resend below the call path's); with it, the
    # 20 failures in a row that trip it and at most the 8 then in flight
    assert 20 <= asked <= 20 + 8


def test_litellm_stays_at_warning_unless_asked(monkeypatch):
    import logging

    monkeypatch.delenv("LITELLM_LOG", raising=False)
    import_litellm()
    assert logging.getLogger("LiteLLM").getEffectiveLevel() == logging.WARNING
    monkeypatch.setenv("LITELLM_LOG", "DEBUG")
    import_litellm()
    assert logging.getLogger("LiteLLM").getEffectiveLevel() == logging.DEBUG
    monkeypatch.delenv("LITELLM_LOG")
    import_litellm()


# ----------------------------------------------------------------------------- the index


def test_a_second_run_writing_the_same_index_fails_clearly_and_deletes_nothing(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "d1", "contents": "zebra"}\n{"id": "d2", "contents": "lion"}\n')
    index = tmp_path / "results/demo/index"
    assert bm25.build_index(corpus, index) == 2
    built = {p.name: p.read_bytes() for p in index.iterdir()}
    with (index.parent / ".index.lock").open("w") as other_run:
        fcntl.flock(other_run, fcntl.LOCK_EX)
        with pytest.raises(InputError, match=f"another run is writing {index}"):
            bm25.build_index(corpus, index)
    assert {p.name: p.read_bytes() for p in index.iterdir()} == built
    assert not [p for p in index.parent.iterdir() if ".tmp-" in p.name]  # no temporary left behind


def test_an_emptied_index_is_named_and_rebuilt(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "d1", "contents": "zebra"}\n')
    index = tmp_path / "index"
    index.mkdir()
    (index / "_0.partial").write_text("")  # what a killed build leaves
    with pytest.raises(InputError, match="incomplete one"):
        bm25.pyserini_searcher(str(index), prebuilt=False, k1=0.9, b=0.4)
    assert bm25.build_index(corpus, index) == 1 and bm25.index_complete(index)
    assert not (index / "_0.partial").exists()  # the partial folder was replaced, not reused
    searcher = bm25.pyserini_searcher(str(index), prebuilt=False, k1=0.9, b=0.4)
    assert bm25.passage_texts(searcher, ["d1"]) == {"d1": "zebra"}
