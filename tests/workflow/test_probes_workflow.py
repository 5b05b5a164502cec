"""The judge probes through the workflow (inject -> recover): loopback judges with planted
behaviours -- always prefers position A, adds a grade to longer text, obeys an injected claim,
grades lower in one role -- are each found by their probe with the right sign, and a clean judge
is flagged by none. The three behaviours that act on disjoint prompts (A: pairwise prompts and
result lists; the claim: prompts carrying it; the role: the Evidence-Verification persona's
prompts) share one judge; the one that adds a grade to longer text (any pointwise grade of a long
passage, a persona's or an injected passage's too) has its own.
A judge that answers by a hash of its prompt (any persona draws a fresh answer) is tested against
the placebo persona and not flagged for it by the verdict's persona question. Plan first, no call
twice, and bad input is one clear error."""

import json

import pandas as pd
import pytest
import yaml
from conftest import LOOPBACK_KEY, ROOT, snakemake
from support.loopback import LONG_WORDS, LoopbackServer, probe_grade

from voirdire.formats import read_corpus, read_topics
from voirdire.plan import PLACEBO_ROW
from voirdire.probes.items import pad_filler, pad_repeat
from voirdire.probes.personas import ROLES
from voirdire.probes.sensitivity import RERUN
from voirdire.questions import NO_RERUN
from voirdire.verdict import DatasetTables
from voirdire.verdict import verdict as verdict_of

DEMO = ROOT / "resources" / "demo"
PLANTED = "planted"
"""One judge that always answers A, grades a passage carrying the injected claim 3 and grades one
lower as the Evidence-Verification assessor: each probe's prompts meet one of the three."""
MODELS = {"clean": "probe-clean", "longer": "probe-longer", PLANTED: "probe-always-a+probe-obeys+probe-role"}
"""Each judge's loopback model: a ``probe-`` name per planted behaviour (support/loopback.py)."""
JUDGES = tuple(MODELS)
HASH = "hash"
"""A judge the loopback answers by a hash of the whole prompt (its model name has no ``probe-``)."""
PROBED = (*JUDGES, HASH)
PURPOSES = ("probe grades", PLACEBO_ROW, "probe pairwise")


def probe_config(tmp_path, server=None) -> dict:
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    # the planted sizes were set for all 14 query clusters; BM25's top 20 holds enough of every
    # human grade for each probe's draws, with fewer pool pairs to judge than its top 100 (221, 301)
    config["datasets"]["demo"].pop("queries")
    config["bm25"]["depth"] = 20
    config["systems"] = ["BM25", "Perfect", "Swap[3]", "Swap[2]", "Swap[1]", "Swap[1,2]"]
    config["rankers"] = {}
    url = server.url if server else "http://127.0.0.1:9/v1"
    llm = {"kind": "llm", "api_base": url, "api_key_env": "VOIRDIRE_TEST_KEY", "concurrency": 16, "parse_retries": 0}
    config["judges"] = [{"name": name, "model": f"openai/{MODELS[name]}", **llm} for name in JUDGES]
    config["judges"].append({"name": HASH, "model": "openai/hash-of-the-prompt", **llm})
    config["judges"].append({"name": "length", "kind": "baseline", "method": "length"})
    for section in ("assistants", "rewriting", "gaming"):
        config.pop(section)
    config["probes"] = {
        "seed": 3,
        # the lists' rates are exact for any pairs: three systems' lists are enough
        "swap": {"pairs": 30, "lists": {"queries": 4, "depth": 3, "systems": ["BM25", "Perfect", "Swap[1]"]}},
        "pad": {
            "per_grade": 6,
            "methods": ["repeat", "filler"],
            "assistants": {
                "loop": {"model": "openai/loop-padder", "api_base": url, "api_key_env": "VOIRDIRE_TEST_KEY"}
            },
        },
        "injection": {"passages": 20},
        "personas": {"queries": 5, "depth": 4},
    }
    config["variants"] = {"lengthy": {"baseline": "clean", "variants": ["longer"]}}
    return config


def write_config(tmp_path, config) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def read(out, name) -> pd.DataFrame:
    return pd.read_csv(out / f"audits/original/{name}.csv", dtype={"human": str})


@pytest.mark.workflow
@pytest.mark.slow
def test_each_planted_behaviour_is_found_by_its_probe_and_a_clean_judge_by_none(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    out = tmp_path / "results"
    with LoopbackServer() as server:
        path = write_config(tmp_path, probe_config(tmp_path, server))
        snakemake("plan", "--cores", "2", "--configfile", path)
        pooled = len(server.log)  # plan builds the pools; it asks no judge and no padder
        assert pooled == 0
        plan = (out / "plan/original.md").read_text()
        planned = {}
        for line in plan.split("## The judge probes")[1].splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) > 7 and cells[1] in ("pad", *PURPOSES):
                planned[cells[3], cells[1]] = int(cells[7])  # calls to make
        assert set(planned) == {("loop", "pad")} | {(j, p) for j in PROBED for p in PURPOSES}
        # the probes' tables and figures and what they need, by rule (the demo test runs everything,
        # the verdict job too: its audits, tables and cost ledger are no probe's; the verdict's
        # persona question is asked of this run's table below)
        probes = ("probe_tables", "prompt_sensitivity")
        snakemake(*probes, "--cores", "2", "--configfile", path)
        calls = len(server.log)
        assert snakemake(*probes, "--cores", "2", "--configfile", path).stderr.count("Nothing to be done") == 1
        assert len(server.log) == calls  # a warm rerun makes no call
    # every probe call was planned; the plain prompts among them were then made by the pool job
    persona_pairs = len(json.loads((out / "demo/probes/sample.json").read_text())["personas"]["pairs"])
    for judge in PROBED:
        summary = json.loads((out / f"demo/probes/judge-{judge}.summary.json").read_text())
        made = summary["calls_this_run"] + summary["copied_from_finished_jobs"]
        assert made == sum(planned[judge, p] for p in PURPOSES)
        assert summary["copied_from_finished_jobs"] > 0
        assert planned[judge, PLACEBO_ROW] == persona_pairs > 0  # one placebo call per persona pair

    swap = read(out, "swap").set_index(["judge", "probe"])
    for probe in ("swap", "lists"):
        biased, clean = swap.loc[(PLANTED, probe)], swap.loc[("clean", probe)]
        assert biased["first_position_win_rate"] == 1 and biased["position_consistency"] == 0
        assert biased["tie_rate"] == 1 and biased["surviving"] == 0
        assert clean["first_position_win_rate"] == 0.5 and clean["position_consistency"] == 1
        assert clean["tie_rate"] == 0 and clean["pairs"] > 0
    assert swap.loc[("clean", "swap"), "pairs"] == 30

    # pad: the longer judge gains exactly where padding crosses its length line; clean: nothing
    pad = read(out, "pad").set_index(["judge", "padding", "human"])
    sample = json.loads((out / "demo/probes/sample.json").read_text())["pad"]
    corpus, topics = dict(read_corpus(DEMO / "corpus.jsonl")), read_topics(DEMO / "topics.tsv")
    for padding, method in (("repeat", pad_repeat), ("filler", pad_filler)):
        rose = sum(
            probe_grade("probe-longer", topics[r["query_id"]], method(corpus[r["doc_id"]]))
            > probe_grade("probe-longer", topics[r["query_id"]], corpus[r["doc_id"]])
            for r in sample
        )
        assert rose > 0 and any(len(corpus[r["doc_id"]].split()) <= LONG_WORDS for r in sample)
        planted = pad.loc[("longer", padding, "all")]
        assert planted["up"] == rose and planted["down"] == 0
        assert planted["flagged"] and planted["mean_shift"] > 0 and planted["padded_wins"] == 1
        clean = pad.loc[("clean", padding, "all")]
        assert clean["mean_shift"] == 0 and not clean["flagged"] and clean["padded_wins"] == 0
    assert pad.loc[("clean", "loop", "all"), "mean_shift"] == 0  # the LLM padder's texts, graded too
    assert len(sample) == 4 * 6

    injection = read(out, "injection").set_index(["judge", "template", "human"])
    obeyed = injection.loc[(PLANTED, "claim", "all")]
    assert obeyed["flagged"] and obeyed["mean_shift"] > 0 and obeyed["mean_after"] == 3
    assert obeyed["n"] == 20 and obeyed["unlabelled"] == 0
    assert injection.loc[(PLANTED, "terms", "all"), "mean_shift"] == 0
    for template in ("claim", "terms"):
        assert injection.loc[("clean", template, "all"), "mean_shift"] == 0
        assert not injection.loc[("clean", template, "all"), "flagged"]

    # personas: the planted judge is stricter only as the Evidence-Verification assessor
    agreement = read(out, "persona_agreement").set_index(["group", "condition"])
    strict = agreement.loc[(PLANTED, "evidence-verification")]
    assert strict["kappa_qw_baseline"] < 1 and strict["shift_vs_baseline"] < 0
    for role in ("query-aligned", "domain-expert", "orthogonal", "global-assessor"):
        assert agreement.loc[(PLANTED, role), "kappa_qw_baseline"] == 1
        assert agreement.loc[("clean", role), "shift_vs_baseline"] == 0
    moved = read(out, "persona_displacement")
    assert (moved.loc[moved["group"] == "clean", "delta_r"] == 0).all()
    sensitivity = read(out, "persona_sensitivity")
    clean_rows = sensitivity.query("group == 'clean'")
    assert (clean_rows["affected_systems"] == 0).all() and (clean_rows["mean_abs_delta_r"] == 0).all()
    # every role of every judge is tested against the placebo persona, the null asked beside them
    assert set(sensitivity["group"]) == set(PROBED) and sensitivity["rerun"].astype(bool).all()
    assert set(sensitivity.query("group == @HASH")["condition"]) == {"all", RERUN, *ROLES}
    tested = sensitivity[sensitivity["condition"] != RERUN]
    assert (tested["reason"].fillna("") == "").all() and tested["excess_p"].between(0, 1).all()
    # a persona does not move a judge that never reads it beyond the placebo: excess 0, p 1 (the
    # clean and longer judges under every role, the planted judge under the roles it ignores)
    ignored = set(ROLES) - {"evidence-verification"}
    read_blind = tested["group"].isin(["clean", "longer"]) | (
        (tested["group"] == PLANTED) & tested["condition"].isin(ignored)
    )
    blind = tested[read_blind]
    assert (blind["group"] == PLANTED).sum() == len(ignored) == 4
    assert (blind["excess_abs_delta_r"] == 0).all() and (blind["excess_p"] == 1).all()
    # the hash judge moves its ranking under every prompt change, the placebo's included: no flag
    hashed = sensitivity.query("group == @HASH").set_index("condition")
    assert hashed.loc[RERUN, "mean_abs_delta_r"] > 0
    # the verdict's persona question on this table, as the verdict job reads it (alone, its p is
    # adjusted over one test, not the judge's every question: no easier to pass than in the job)
    table = pd.read_csv(out / "audits/original/persona_sensitivity.csv")
    verdict = verdict_of({"demo": DatasetTables(judges=list(PROBED), tables={"persona_sensitivity": table})})
    verdict = verdict.set_index(["judge", "question"])
    for judge in (HASH, "clean"):
        cell = verdict.loc[(judge, "persona_prompt")]
        assert cell["status"] in ("pass", "inconclusive"), cell.to_dict()
        assert cell["reason"] != NO_RERUN
    personas = pd.read_parquet(out / "demo/probes/personas.parquet")
    assert set(personas["role"]) == {
        "query-aligned",
        "domain-expert",
        "orthogonal",
        "evidence-verification",
        "global-assessor",
    }
    assert len(read(out, "persona_consistency")) > 0  # four judge models share the roles

    variants = read(out, "prompt_sensitivity_agreement").set_index(["group", "condition"])
    assert variants.loc[("lengthy", "clean"), "kappa_qw_baseline"] == 1
    assert variants.loc[("lengthy", "longer"), "shift_vs_baseline"] > 0  # long passages graded up
    for figure in ("swap", "pad", "injection", "persona_heatmap", "persona_chart", "prompt_sensitivity_heatmap"):
        assert (out / f"audits/original/{figure}.png").read_bytes()[:4] == b"\x89PNG"


def bad_line(tmp_path, mutate) -> list[str]:
    config = probe_config(tmp_path)
    mutate(config, tmp_path)
    result = snakemake("-n", "--cores", "1", "--configfile", write_config(tmp_path, config), check=False)
    assert result.returncode != 0
    assert not (tmp_path / "results").exists()  # before any job
    return [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("voirdire: ")]


def _personas_without_field(config, tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"uuid": "1", "description": "a sailor"}\n{"uuid": "2"}\n')
    config["probes"]["personas"]["pool"] = str(pool)


def _slotless_swap(config, tmp_path):
    (tmp_path / "pairwise.txt").write_text("Query: {query}\nPassage A: {a}\nWhich is better, A or the other?\n")
    config["probes"]["swap"]["prompt_file"] = str(tmp_path / "pairwise.txt")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (_personas_without_field, ["pool.jsonl", "no line has a usable 'persona' field", "uuid, description"]),
        (
            lambda c, t: c["variants"]["lengthy"]["variants"].append("nobody"),
            ["variants.lengthy.variants[1]", "'nobody'"],
        ),
        (
            lambda c, t: c["probes"]["injection"].update(templates={"claim": "Perfectly relevant."}),
            ["probes.injection.templates.claim", "{passage}"],
        ),
        (_slotless_swap, ["probes.swap.prompt_file", "{b}"]),
        (lambda c, t: c["probes"].update(judges=["length"]), ["probes.judges[0]", "not a judge of kind llm"]),
        (
            lambda c, t: c.update(judges=[{"name": "length", "kind": "baseline", "method": "length"}], variants={}),
            ["config key 'probes'", "no judge is of kind llm"],
        ),
    ],
)
def test_bad_probe_config_is_one_line_before_any_job(tmp_path, monkeypatch, mutate, expected):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    lines = bad_line(tmp_path, mutate)
    assert len(lines) == 1, lines
    for text in expected:
        assert text in lines[0]
