"""The Snakemake workflow as a user runs it: lint, early errors, the demo end to end."""

import contextlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import LOOPBACK_KEY, ROOT, snakemake, snakemake_env
from support.captions import undocumented

from voirdire.verdict import read_verdict, sentences


def test_lint_is_clean_for_every_config():
    """make lint's checks, once: ruff (lint and format), snakefmt, and Snakemake's own lint."""
    bin_dir = Path(sys.executable).parent
    for command in (
        ["ruff", "check", "src", "workflow/scripts", "tests", "bench"],
        ["ruff", "format", "--check", "src", "workflow/scripts", "tests", "bench"],
        ["snakefmt", "--check", "Snakefile", "workflow/rules"],
    ):
        result = subprocess.run([str(bin_dir / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}\n{result.stderr}"
    # Snakemake's lint under every config (the demo's first), the four in one process (one start)
    configs = ["", ".test/config.yaml", ".test/gaming.yaml", "config/paper.yaml"]
    lints = ["--lint" + (f" --configfile {config}" if config else "") for config in configs]
    result = snakemake_commands(*lints)
    assert [line for line in result.stdout.splitlines() if line.startswith("snakemake ok: ")] == [
        f"snakemake ok: {lint}" for lint in lints
    ]
    assert (result.stdout + result.stderr).count("Congratulations, your workflow is in a good condition") == 4


def snakemake_commands(*commands: str) -> subprocess.CompletedProcess:
    """Snakemake command lines run one after the other in one process (tests/support/snakemake_commands.py),
    as ``snakemake`` runs each; fails the test with the output if one failed."""
    script = ROOT / "tests" / "support" / "snakemake_commands.py"
    result = subprocess.run(
        [sys.executable, str(script), *commands], cwd=ROOT, capture_output=True, text=True, env=snakemake_env()
    )
    assert result.returncode == 0, f"{commands} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_reading_the_workflow_writes_nothing_and_a_dry_run_writes_the_manifest(tmp_path):
    """--lint and --list-rules only read the rules: no manifest, no preflight marker, no results
    folder. A dry run plans jobs, so it writes the manifest the aggregate rules read."""
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    done = snakemake_commands(*(f"{mode} --configfile {path}" for mode in ("--lint", "--list-rules")))  # one start
    assert "Congratulations" in done.stdout + done.stderr and "\nverdict\n" in done.stdout  # each ran
    assert not (tmp_path / "results").exists()
    snakemake("-n", "--cores", "1", "--configfile", str(path))
    assert (tmp_path / "results/manifest.json").is_file()


DEMO_PROMPT_TOKENS = 31_000
"""The demo's SmolLM2 prompt tokens at most (27.9k in 139 distinct calls measured with its BM25
pool of depth 10 on 7 queries; 44.5k in 223 at depth 100, 79.5k in 394 on all 14 queries; and
10% of room). On an AVX2-only core SmolLM2 reads about 200 prompt tokens a second, so 10k more
cost the demo about 25 s on two cores: grow it only on purpose (docs/measured.md)."""


def bad_config(tmp_path, mutate):
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    for section in ("assistants", "rewriting", "probes", "gaming", "variants"):  # these have tests of their own
        config.pop(section)
    mutate(config, tmp_path)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def copy_qrels_with(tmp_path, extra_line):
    path = tmp_path / "qrels.txt"
    text = (ROOT / "resources/demo/qrels.txt").read_text()
    path.write_text(text + extra_line)
    return str(path), len(text.splitlines()) + 1


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda c, t: c["systems"].append("Swap[0]"), ["config key 'systems[Swap[0]]'", "positions start at 1"]),
        (lambda c, t: c["systems"].append("Swap[1,1]"), ["config key 'systems[Swap[1,1]]'", "distinct"]),
        # schema errors: one line in the same key notation (list items by name)
        (
            lambda c, t: c["datasets"]["demo"].update(source="msmarco"),
            ["config key 'datasets.demo.source'", "'msmarco'"],
        ),
        (lambda c, t: c["judges"].append({"name": "x", "kind": "gpt"}), ["config key 'judges[x].kind'"]),
        (
            lambda c, t: c["datasets"]["demo"].update(corpus="missing.jsonl"),
            ["config key 'datasets.demo.corpus'", "file not found: missing.jsonl"],
        ),
    ],
)
def test_bad_config_fails_before_any_job(tmp_path, mutate, expected):
    path = bad_config(tmp_path, mutate)
    result = snakemake("--cores", "1", "--configfile", str(path), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for text in expected:
        assert text in output
    assert not (tmp_path / "results").exists()  # nothing ran


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("q01 0 d0101\n", "has 3 fields, expected 4"),
        ("q01 0 d0101 two\n", "is not an integer"),
        ("q01 0 d0101 7\n", "outside the declared scale 0..3"),
    ],
)
def test_bad_qrels_line_fails_before_any_job_naming_file_and_line(tmp_path, line, message):
    def mutate(config, tmp):
        config["datasets"]["demo"]["qrels"], number = copy_qrels_with(tmp, line)
        mutate.number = number

    path = bad_config(tmp_path, mutate)
    result = snakemake("--cores", "1", "--configfile", str(path), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{tmp_path / 'qrels.txt'}:{mutate.number}" in output
    assert message in output
    assert not (tmp_path / "results").exists()


def test_empty_corpus_fails_before_any_job_and_says_why(tmp_path):
    topics = tmp_path / "results/demo/data/topics.tsv"
    snakemake(str(topics), "--cores", "1", "--configfile", str(bad_config(tmp_path, lambda c, t: None)))
    before = topics.stat().st_mtime_ns  # computed before the failure

    def mutate(config, tmp):
        (tmp / "empty.jsonl").write_text("\n")
        config["datasets"]["demo"]["corpus"] = str(tmp / "empty.jsonl")

    path = bad_config(tmp_path, mutate)
    result = snakemake("--cores", "1", "--configfile", str(path), check=False)
    assert result.returncode != 0
    assert f"{tmp_path / 'empty.jsonl'}: corpus is empty" in result.stdout + result.stderr
    # what was computed before the failure is kept, untouched
    assert topics.is_file() and topics.stat().st_mtime_ns == before


@pytest.mark.workflow
@pytest.mark.slow
def test_demo_end_to_end_then_nothing_to_do(tmp_path):
    out = tmp_path / "results"
    first = snakemake("--cores", "2", "--config", f"results={out}").stdout
    table1 = pd.read_csv(out / "tables/original/table1.csv")
    judges = ["human", "human@pool", "smollm2", "minilm", "assessor-b", "length", "overlap", "panel"]
    # the run ends with the verdict, a sentence per judge, as voirdire verdict words it
    said = first[first.index("voirdire: the verdict") :].splitlines()
    assert [line.split(" on demo:")[0].strip() for line in said[1:-1]] == judges[2:]
    assert said[1:-1] == [f"  {line}" for line in sentences(read_verdict(out / "verdict.csv"))]
    bounds = [f"{judge}_{side}" for judge in judges for side in ("ci_low", "ci_high")]
    assert list(table1.columns) == ["dataset", "system", "measure", *judges, *bounds]
    for judge in judges:  # every mean inside its interval over queries
        assert (table1[f"{judge}_ci_low"] <= table1[judge] + 1e-12).all()
        assert (table1[judge] <= table1[f"{judge}_ci_high"] + 1e-12).all()
    assert list(table1["system"]) == [
        "BM25",
        "Perfect",
        "Swap[3]",
        "Swap[2]",
        "Swap[1]",
        "Swap[2,3]",
        "Swap[1,2]",
        "rg-smollm2",
        "prp-smollm2",
        "dense-minilm",
    ]
    # the demo's circularity case: the MiniLM judge scores the MiniLM ranker above Perfect, humans do not
    scores = table1.set_index("system")
    assert scores.loc["dense-minilm", "minilm"] > scores.loc["Perfect", "minilm"]
    assert scores.loc["dense-minilm", "human"] < scores.loc["Perfect", "human"]
    bias = (out / "tables/original/position_bias.csv").read_text().splitlines()
    assert bias[0].startswith(
        "dataset,ranker,variant,model,pairs,prompts,answered,unparsed,answered_both,surviving,"
        "order_dependent,first_position_wins,position_consistency,first_position_win_rate,tie_rate"
    )
    assert bias[1].startswith("demo,prp-smollm2,sliding,local/smollm2-135m,")
    assert (out / "figures/original/figure3.png").stat().st_size > 10_000
    audit = pd.read_csv(out / "audits/original/label_test.csv")
    assert list(audit["judge"]) == ["smollm2", "minilm", "assessor-b", "length", "overlap", "panel"]
    length = pd.read_csv(out / "audits/original/length.csv").set_index("judge")
    assert length.loc["length", "length_biased"] and not length.loc["assessor-b", "length_biased"]
    fingerprint = json.loads((out / "tables/original/fingerprint.json").read_text())
    assert set(fingerprint["inputs"]) == {
        "datasets.demo.topics",
        "datasets.demo.qrels",
        "datasets.demo.corpus",
        "judges[smollm2].prompt_file",
        "judges[assessor-b].qrels",
        "judges[assessor-b].reruns[0]",
        "probes.swap.prompt_file",
        "probes.swap.lists.prompt_file",
        "probes.personas.pool",
    }
    # every probe's table and figure, offline: SmolLM2 and the deterministic padding
    swap = pd.read_csv(out / "audits/original/swap.csv")
    assert sorted(zip(swap["judge"], swap["probe"])) == [("smollm2", "lists"), ("smollm2", "swap")]
    assert (swap["pairs"] > 0).all()
    pad = pd.read_csv(out / "audits/original/pad.csv", dtype={"human": str})
    assert set(pad["padding"]) == {"repeat", "smollm2"} and set(pad["human"]) == {"all", "0", "1", "2", "3"}
    injection = pd.read_csv(out / "audits/original/injection.csv", dtype={"human": str})
    assert set(injection["template"]) == {"claim", "terms"} and (injection["pairs"] == 3).all()
    # personas: every condition on the same human-judged pairs (those parsed under all six); the
    # table says what was left out, never a silent score
    personas = pd.read_csv(out / "audits/original/persona_agreement.csv")
    drawn = personas[["left_out_unjudged", "left_out_unparsed", "pairs_common"]].sum(axis=1)
    assert (personas["pairs_drawn"] == drawn).all() and (personas["pairs_drawn"] > 0).all()
    assert (personas["pairs_common"] > 0).all() and (personas["pairs"] == personas["pairs_common"]).all()
    # drift: the second assessor's simulated second pass, compared on the needed pairs
    drift = pd.read_csv(out / "audits/original/drift.csv").set_index("judge")
    needed = pd.read_csv(out / "demo/pairs/original.tsv", sep="\t", dtype=str)[["query_id", "doc_id"]]
    passes = [
        pd.read_csv(
            ROOT / "resources/demo" / name, sep=" ", names=["query_id", "it", "doc_id", "grade"], dtype=str
        ).merge(needed)
        for name in ("qrels.assessor-b.txt", "qrels.assessor-b.rerun.txt")
    ]
    both = passes[0].merge(passes[1], on=["query_id", "doc_id"])
    assert drift.loc["assessor-b", "pairs"] == len(both) == len(needed)
    assert drift.loc["assessor-b", "flips"] == (both["grade_x"] != both["grade_y"]).sum() > 0
    variants = pd.read_csv(out / "audits/original/prompt_sensitivity_sensitivity.csv")
    assert set(variants["group"]) == {"assessors"}
    for figure in ("swap", "pad", "injection", "persona_heatmap", "persona_chart", "prompt_sensitivity_chart"):
        assert (out / f"audits/original/{figure}.png").stat().st_size > 5_000
    assert undocumented(out) == {}  # every column of every table the demo writes is in its caption
    # the cost ledger: SmolLM2 as judge, assistant and padder, each a row, $0 (local), in the verdict's notes
    ledger = pd.read_csv(out / "tables/ledger.csv").set_index(["role", "caller"])
    assert set(ledger.index) == {("judge", "smollm2"), ("assistant", "smollm2"), ("padder", "smollm2")}
    assert (ledger["price"] == "local ($0)").all() and (ledger["spent_cost_usd"] == 0).all()
    assert (ledger["spent_calls"] > 0).all() and (ledger["planned_calls"] > 0).all()
    notes = (out / "verdict.md").read_text()
    assert "Cost ledger, judge smollm2 on demo: 0 calls paid, $0 (the local model local/smollm2-135m)" in notes
    assert f"Every caller's calls, tokens and dollars: {out / 'tables/ledger.csv'}." in notes
    # the judge in the loop (docs/judge-in-the-loop.md, docs/juries.md): content, not n/a
    reranked = pd.read_csv(out / "audits/original/reranked.csv")
    everyone = reranked[reranked["system"] == "all"].set_index("judge")
    assert set(everyone.index) == set(judges[2:])  # every judge but the humans reranks your systems
    assert everyone["over_rating"].notna().all() and everyone["p"].between(0, 1).all()
    ranked = reranked[reranked["system"] != "all"]
    assert not ranked["system"].isin(["Perfect", "Swap[3]"]).any() and ranked["variant"].str.contains(">").all()
    jury = pd.read_csv(next((out / "demo/judgments").rglob("panel.jury.csv")))
    assert len(jury) > 0
    table2 = pd.read_csv(out / "tables/original/table2.csv").set_index("judge")
    assert table2.loc["panel", ["alpha_binary", "kappa_binary"]].notna().all()  # it votes binary labels
    verdict = read_verdict(out / "verdict.csv")
    assert "reranking" in set(verdict["question"]) and "panel" in set(verdict["judge"])
    # the demo's SmolLM2 budget: the prompt tokens of every distinct call its stores hold
    # (judging, the sample, probes, paddings, rewrites, the gamed system; a call copied from
    # another job's store counts once; the rankers keep no store)
    tokens = {}
    for store in out.rglob("*.sqlite"):
        with contextlib.closing(sqlite3.connect(store)) as db:
            query = "SELECT key, prompt_tokens FROM calls WHERE model = 'local/smollm2-135m'"
            tokens.update({key: count or 0 for key, count in db.execute(query)})
    assert 15_000 < sum(tokens.values()) <= DEMO_PROMPT_TOKENS, (len(tokens), sum(tokens.values()))
    plan = snakemake("plan", "--cores", "2", "--config", f"results={out}").stdout
    assert all(purpose in plan for purpose in ("probe grades", "probe pairwise", "| pad "))
    # the gamed system's calls, planned after the run: every one answered by the judge's store
    gaming = json.loads((out / "demo/gaming/judge-smollm2.summary.json").read_text())
    row = next(line for line in plan.splitlines() if line.startswith("| demo ") and "| gaming " in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:5] == ["demo", "gaming", "claim", "smollm2", "local/smollm2-135m"], cells
    assert cells[5:8] == [str(gaming["pairs"])] * 2 + ["0"]  # tasks, cached, calls to make
    again = snakemake("--cores", "2", "--config", f"results={out}")
    assert "Nothing to be done" in again.stdout + again.stderr
    assert "voirdire: the verdict" not in again.stdout  # a run that did not remake it says nothing
    report = tmp_path / "report.html"
    snakemake("--config", f"results={out}", "--report", str(report))
    assert report.stat().st_size > 100_000
    shutil.rmtree(out)


@pytest.mark.workflow
@pytest.mark.slow
def test_llm_judge_in_the_workflow_plans_caches_and_keeps_the_key_secret(tmp_path, monkeypatch):
    from support.loopback import LoopbackServer

    secret = "sk-planted-e2e-4b1d-must-not-leak"
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", secret)
    out = tmp_path / "results"
    with LoopbackServer() as server:

        def mutate(config, tmp):
            config["systems"] = [s for s in config["systems"] if s not in config["rankers"]]
            config["judges"] = [
                {
                    "name": "api-judge",
                    "kind": "llm",
                    "model": "openai/loopback",
                    "api_base": server.url,
                    "api_key_env": "VOIRDIRE_TEST_KEY",
                    "concurrency": 16,
                }
            ]

        path = bad_config(tmp_path, mutate)
        snakemake("plan", "--cores", "2", "--configfile", str(path))
        pairs = len((out / "demo/pairs/original.tsv").read_text().splitlines()) - 1
        plan_md = (out / "plan/original.md").read_text()
        row = next(line for line in plan_md.splitlines() if "api-judge" in line)
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[:3] == ["demo", "api-judge", "openai/loopback"]
        assert str(pairs) in cells  # unique pairs = calls to make, nothing cached yet
        assert server.log == []  # planning makes no call
        # the judging job and what reads its labels into Table 2 (the demo test runs everything)
        target = str(out / "tables/original/table2.csv")
        snakemake(target, "--cores", "2", "--configfile", str(path))
        assert len(server.log) == pairs  # one call per unique needed pair
        table2 = (out / "tables/original/table2.csv").read_text().splitlines()
        header = table2[0].split(",")
        row = dict(zip(header, table2[1].split(","), strict=True))
        assert row["unparsed_pairs"] == "0"
        assert row["cost_usd"] == ""  # litellm's cost map does not price the loopback model: no made-up 0
        # a plain rerun has nothing to do; a forced rerun of the judging job is answered by the store
        again = snakemake(target, "--cores", "2", "--configfile", str(path))
        assert "Nothing to be done" in again.stdout + again.stderr
        judged = out / "demo/judgments/original/api-judge.summary.json"  # the judging job alone
        snakemake(str(judged), "--cores", "2", "--configfile", str(path), "--forcerun", "llm_judge")
        assert len(server.log) == pairs
        summary = json.loads(judged.read_text())
        assert summary["cached"] == pairs and summary["calls_this_run"] == 0
        job_log = (out / "logs/demo/original/judge-api-judge.log").read_text()
        assert "LiteLLM" not in job_log  # litellm's per-call INFO lines stay out (WARNING level)
        assert all(entry.authorization == f"Bearer {secret}" for entry in server.log)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in files)
    for file in files:
        assert secret.encode() not in file.read_bytes(), file
    for file in (ROOT / ".snakemake").rglob("*"):  # shared with other runs: a file may come and go
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            if file.stat().st_size < 50_000_000:
                assert secret.encode() not in file.read_bytes(), file


@pytest.mark.workflow
@pytest.mark.slow
def test_llm_slots_cap_calls_in_flight_across_judging_jobs(tmp_path, monkeypatch):
    """Two judging jobs against one server: `--resources llm_slots=N` keeps the peak at N or under."""
    from support.loopback import LoopbackServer

    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    out = tmp_path / "results"
    with LoopbackServer(latency_s=0.05) as server:

        def mutate(config, tmp):
            config["systems"] = ["BM25", "Perfect"]
            config["rankers"] = {}
            config["judges"] = [
                {
                    "name": name,
                    "kind": "llm",
                    "model": "openai/loopback",
                    "api_base": server.url,
                    "api_key_env": "VOIRDIRE_TEST_KEY",
                    "concurrency": 8,
                    "prompt_file": str(prompt),
                }
                for name, prompt in (
                    ("judge-a", ROOT / "src/voirdire/prompts/umbrela-style.txt"),
                    ("judge-b", tmp / "other.txt"),
                )
            ]
            (tmp / "other.txt").write_text("Grade 0-3.\nQuery: {query}\nPassage: {passage}\n##final score: N\n")

        path = bad_config(tmp_path, mutate)
        judged = [str(out / f"demo/judgments/original/{j}.summary.json") for j in ("judge-a", "judge-b")]
        snakemake(*judged, "--cores", "4", "--configfile", str(path), "--resources", "llm_slots=4")
        pairs = len((out / "demo/pairs/original.tsv").read_text().splitlines()) - 1
        assert len(server.log) == 2 * pairs
        capped = server.peak_in_flight
        assert 1 <= capped <= 4  # each job was granted 4 of its 8, and the two never overlapped
        summaries = [
            json.loads((out / f"demo/judgments/original/{j}.summary.json").read_text()) for j in ("judge-a", "judge-b")
        ]
        assert all(s["max_in_flight"] <= 4 for s in summaries)
        # the same two jobs under the profile's default cap (32): they overlap, and the peak shows it
        for store in (out / "demo/judgments/original").glob("*.sqlite*"):
            store.unlink()
        server.peak_in_flight = 0
        snakemake(*judged, "--cores", "4", "--configfile", str(path), "--forcerun", "llm_judge")
        assert len(server.log) == 4 * pairs
        assert server.peak_in_flight > 4
