"""End to end on real TREC DL 2019 data (../shared/data): the paper's reference values.

The workflow runs on .test/config.yaml (RankGPT JSON candidates = BM25 top-100, NIST qrels,
two recorded judges). Agreement figures are recomputed here independently from the raw
files with pytrec_eval, scikit-learn and scipy.
"""

import json
from collections import defaultdict

import pandas as pd
import pytest
import pytrec_eval
from conftest import read_trec_qrels
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from voirdire import machine

ORACLES = ["Perfect", "Swap[3]", "Swap[2]", "Swap[1]", "Swap[2,3]", "Swap[1,2]"]
JUDGES = ["monot5-3b", "rank1-7b"]


@pytest.fixture(scope="module")
def results(dl19_results):
    return dl19_results


read_qrels = read_trec_qrels


def raw(dl19):
    pools = {}
    for entry in json.load(open(dl19 / "bm25-top100.rankgpt.json")):
        hits = entry["hits"]
        pools[str(hits[0]["qid"])] = [(str(h["docid"]), h["score"]) for h in hits]
    return pools, read_qrels(dl19 / "qrels.nist.txt")


def independent_runs(pools, nist):
    """BM25 and the oracles written out directly from their definitions (docs/definitions.md)."""
    runs = {"BM25": {q: {d: float(100 - i) for i, (d, _) in enumerate(p)} for q, p in pools.items()}}
    for name, swaps in [
        ("Perfect", []),
        ("Swap[3]", [3]),
        ("Swap[2]", [2]),
        ("Swap[1]", [1]),
        ("Swap[2,3]", [2, 3]),
        ("Swap[1,2]", [1, 2]),
    ]:
        runs[name] = {}
        for q, pool in pools.items():
            docs = [d for d, _ in pool]
            order = sorted(docs, key=lambda d: -nist[q].get(d, 0))  # stable: BM25 order on ties
            for p in swaps:
                order[p - 1], order[len(order) - p] = order[len(order) - p], order[p - 1]
            runs[name][q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return runs


def judged_only_ndcg10(run, qrels):
    judged = {q: {d: s for d, s in docs.items() if d in qrels.get(q, {})} for q, docs in run.items()}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(judged)
    return sum(scores[q]["ndcg_cut_10"] for q in qrels) / len(qrels)


def test_reference_values(results):
    table = pd.read_csv(results / "tables/original/table1.csv").set_index("system")
    assert round(table.loc["BM25", "human"], 4) == 0.5058
    assert round(table.loc["Perfect", "human"], 3) == 0.892
    human = [table.loc[o, "human"] for o in ORACLES]
    assert human == sorted(human, reverse=True) and len(set(human)) == len(human)


def test_pipeline_equals_independent_computation(results, dl19):
    pools, nist = raw(dl19)
    runs = independent_runs(pools, nist)
    table = pd.read_csv(results / "tables/original/table1.csv").set_index("system")
    agreement = pd.read_csv(results / "tables/original/table2.csv").set_index("judge")
    pairs = [(q, d) for q, pool in pools.items() for d, _ in pool if d in nist[q]]
    for name in runs:
        assert table.loc[name, "human"] == pytest.approx(judged_only_ndcg10(runs[name], nist), abs=1e-9)
    for judge in JUDGES:
        labels = read_qrels(dl19 / f"qrels.{judge}.txt")
        judge_qrels = defaultdict(dict)
        for q, d in pairs:
            judge_qrels[q][d] = labels[q][d]
        means = {name: judged_only_ndcg10(run, judge_qrels) for name, run in runs.items()}
        for name, value in means.items():
            assert table.loc[name, judge] == pytest.approx(value, abs=1e-9)
        kappa = cohen_kappa_score([int(nist[q][d] >= 2) for q, d in pairs], [labels[q][d] for q, d in pairs])
        assert agreement.loc[judge, "kappa_binary"] == pytest.approx(kappa, abs=1e-9)
        systems = list(runs)
        tau_all = kendalltau([table.loc[s, "human"] for s in systems], [means[s] for s in systems]).statistic
        tau_oracles = kendalltau([table.loc[s, "human"] for s in ORACLES], [means[s] for s in ORACLES]).statistic
        assert agreement.loc[judge, "tau_all"] == pytest.approx(tau_all, abs=1e-9)
        assert agreement.loc[judge, "tau_oracles"] == pytest.approx(tau_oracles, abs=1e-9)
        assert agreement.loc[judge, "pairs_needed"] == len(pairs)
        assert pd.isna(agreement.loc[judge, "kappa_graded"])  # binary judge vs 0-3 assessors


def test_outputs_for_a_reader(results):
    for name in ["table1", "table2", "significance"]:
        assert (results / f"tables/original/{name}.md").read_text().startswith("# ")
    assert (results / "figures/original/figure3.png").read_bytes()[:4] == b"\x89PNG"
    assert (results / "figures/original/figure3.pdf").read_bytes()[:4] == b"%PDF"
    fingerprint = json.loads((results / "tables/original/fingerprint.json").read_text())
    assert fingerprint["packages"]["pyserini"] and len(fingerprint["config_sha256"]) == 64
    assert all("sha256:" in v for v in fingerprint["inputs"].values())
    here = machine.cpu()  # the CPU the tables came from (the cores a job had may differ)
    assert {k: fingerprint["cpu"][k] for k in ("model", "isa")} == {k: here[k] for k in ("model", "isa")}
    significance = pd.read_csv(results / "tables/original/significance.csv")
    assert len(significance) == 4 * 21  # four judges x (7 choose 2) system pairs


def test_ir_datasets_loader_reads_local_files(dl19, tmp_path, monkeypatch):
    """The real ir_datasets loader on local files under IR_DATASETS_HOME (no network)."""
    import subprocess
    import sys

    home = tmp_path / "irds" / "msmarco-passage" / "trec-dl-2019"
    home.mkdir(parents=True)
    (home / "queries.tsv").write_text((dl19 / "topics.tsv").read_text())
    (home / "qrels").write_text((dl19 / "qrels.nist.txt").read_text())
    code = (
        "from voirdire.data import load_dataset;"
        "d = load_dataset({'source': 'ir_datasets', 'id': 'msmarco-passage/trec-dl-2019/judged'});"
        "print(len(d.topics), len(d.qrels), d.topics['156493'])"
    )
    env = {"IR_DATASETS_HOME": str(tmp_path / "irds"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["43", "9260", "do", "goldfish", "grow"]


def test_the_label_audit_reproduces_table2_and_counts_leniency_independently(results, dl19):
    """The label test on DL19 gives the binary kappa of Table 2 (0.482, 0.519), and its missed
    failures and false alarms equal a count made here from the raw files."""
    pools, nist = raw(dl19)
    pairs = [(q, d) for q, pool in pools.items() for d, _ in pool if d in nist[q]]
    audit = pd.read_csv(results / "audits/original/label_test.csv").set_index("judge")
    agreement = pd.read_csv(results / "tables/original/table2.csv").set_index("judge")
    assert round(audit.loc["monot5-3b", "kappa_binary"], 3) == 0.482
    assert round(audit.loc["rank1-7b", "kappa_binary"], 3) == 0.519
    for judge in JUDGES:
        labels = read_qrels(dl19 / f"qrels.{judge}.txt")
        assert audit.loc[judge, "kappa_binary"] == pytest.approx(agreement.loc[judge, "kappa_binary"], abs=1e-12)
        missed = sum(nist[q][d] < 2 and labels[q][d] >= 1 for q, d in pairs)
        alarms = sum(nist[q][d] >= 2 and labels[q][d] < 1 for q, d in pairs)
        assert (audit.loc[judge, "missed_failures"], audit.loc[judge, "false_alarms"]) == (missed, alarms)
    for name in ("lojo", "self_preference", "length"):
        assert (results / f"audits/original/{name}.csv").stat().st_size > 0
    for name in ("confusion", "lojo", "length"):
        assert (results / f"audits/original/{name}.png").stat().st_size > 10_000
