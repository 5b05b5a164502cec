"""The workflow's input functions (voirdire.inputs.Inputs), without Snakemake: on the demo's plan,
each names the Layout's paths for the wildcards it is given (plain attribute objects)."""

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from voirdire.config import check, validate_schema
from voirdire.inputs import Inputs, caller_threads, llm_slots, named_inputs, one_of
from voirdire.layout import Layout
from voirdire.verdict import NO_SYSTEMS

ROOT = Path(__file__).resolve().parents[3]


def demo_config() -> dict:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def inputs_of(config: dict) -> Inputs:
    config = validate_schema(copy.deepcopy(config))
    return Inputs(check(config), Layout(config["results"]), config)


@pytest.fixture(scope="module")
def demo(request):
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # the demo's files are named from the repository root
        yield inputs_of(demo_config())


def wildcards(**values) -> SimpleNamespace:
    return SimpleNamespace(**values)


def test_judge_qrels_names_every_judge_of_the_dataset(demo):
    plan, L = demo.plan, demo.layout
    d = plan.datasets[0]
    found = demo.judge_qrels(wildcards(dataset=d, provenance="original"))
    assert list(found) == plan.judge_names(d) and "human" in found
    assert found == {j: L.qrels(d, "original", j) for j in plan.judge_names(d)}


def test_every_consumer_of_scores_reads_the_one_table_per_dataset_and_provenance(demo):
    plan, L = demo.plan, demo.layout
    d, p = plan.datasets[0], plan.provenances[-1]
    assert demo.dataset_scores(wildcards(dataset=d, provenance=p)) == [L.scores(d, p)]
    assert demo.all_scores(wildcards(provenance=p)) == [L.scores(x, p) for x in plan.datasets]
    assert demo.original_scores() == {x: L.scores(x, "original") for x in plan.datasets}
    assistants = demo.assistant_inputs(wildcards(provenance=p))
    assert {k: v for k, v in assistants.items() if k.startswith("scores/")} == {
        f"scores/{x}/{prov}": L.scores(x, prov) for x in plan.datasets for prov in ("original", p)
    }


def test_system_runs_lists_each_systems_runs_in_the_provenance(demo):
    plan, L = demo.plan, demo.layout
    d, p = plan.datasets[0], plan.provenances[-1]
    found = demo.system_runs(wildcards(dataset=d, provenance=p))
    assert list(found) == [str(s) for s in plan.systems]
    for system in plan.systems:
        assert found[str(system)] == [L.run(d, p, name) for name in plan.run_names(system)]
    assert found == demo.audit_runs(wildcards(provenance=p))[d]


def test_texts_add_the_rewrites_in_a_rewritten_provenance_and_the_sample_passages(demo):
    L, d = demo.layout, demo.plan.datasets[0]
    assert demo.texts_inputs(wildcards(dataset=d, provenance="original")) == {"passages": [L.passages(d)]}
    rewritten = demo.plan.provenances[1]
    sample = demo.sample_texts_inputs(wildcards(dataset=d, provenance=rewritten))
    assert sample == {
        "passages": [L.passages(d), L.sample_passages(d)],
        "rewrites": L.rewrites(d, rewritten),
    }


def test_judge_seeds_copy_from_the_original_store_only_when_rewritten(demo):
    L, d = demo.layout, demo.plan.datasets[0]
    judge = next(j.name for j in demo.plan.judges[d] if j.kind == "llm")
    assert demo.judge_seeds(wildcards(dataset=d, provenance="original", judge=judge)) == {}
    rewritten = demo.plan.provenances[1]
    seeds = demo.judge_seeds(wildcards(dataset=d, provenance=rewritten, judge=judge))
    assert seeds == {L.store(d, "original", judge): L.qrels(d, "original", judge)}


def test_verdict_inputs_with_systems_and_probes(demo):
    L = demo.layout
    tables = demo.verdict_inputs(wildcards())
    assert tables["table1"] == L.table("original", "table1", "csv")
    assert tables["label_test"] == L.audit("original", "label_test", "csv")
    assert tables["figure3"] == L.figure("original", "figure3", "png")
    for probe in ("swap", "pad", "injection"):
        assert (probe in tables) == (probe in demo.probes and bool(demo.plan.probe_judges))
    assert set(tables.values()) >= set(demo.probe_final_outputs()) - {
        L.audit("original", "prompt_sensitivity_sensitivity", "csv")
    }
    assert demo.unavailable(demo.plan.datasets[0]) == {}


def test_every_table_a_verdict_question_reads_is_an_input_of_the_verdict(demo):
    """The demo configures every audit and probe: each question's tables (its own and those it
    reads beside it) reach the verdict job, the label audits' ones from their declarations."""
    from voirdire.audits import declared
    from voirdire.verdict import QUESTIONS

    tables = demo.verdict_inputs(wildcards())
    for question in QUESTIONS.values():
        for name in question.reads:
            assert name in tables, f"question {question.name} reads {name}, not given to the verdict"
    asked = {name for q in QUESTIONS.values() for name in q.reads}
    for name in set(declared.tables()) & asked:
        assert tables[name] == demo.layout.audit("original", name, "csv")


def test_audit_declarations_have_their_report_captions_and_distinct_keys():
    from voirdire.audits import declared

    keys = [key for output in declared.outputs() for key in output.keys().values()]
    assert len(keys) == len(set(keys)), "two audit outputs share a name in the audits job"
    files = {(o.name, ext) for o in declared.outputs() for ext in o.extensions}
    assert len(files) == 2 * len(declared.outputs()), "two declarations write one file"
    for output in declared.outputs():
        assert (ROOT / "workflow" / "report" / f"audit_{output.caption}.rst").is_file(), output


def test_verdict_inputs_without_systems_have_no_figure_and_say_why():
    config = demo_config()
    for key in ("systems", "runs", "oracles", "rankers", "assistants", "rewriting", "variants"):
        config.pop(key, None)
    config.pop("probes", None)
    config.pop("gaming", None)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        bare = inputs_of(config)
    assert not bare.plan.has_systems
    d = bare.plan.datasets[0]
    tables = bare.verdict_inputs(wildcards())
    assert "figure3" not in tables and "swap" not in tables and "gaming" not in tables
    assert bare.dataset_scores(wildcards(dataset=d, provenance="original")) == []
    assert bare.all_scores(wildcards(provenance="original")) == []
    assert bare.unavailable(d)["runs"] == NO_SYSTEMS


def test_probe_outputs_follow_the_configured_probes(demo):
    plan, L = demo.plan, demo.layout
    expected = [L.audit("original", n, "csv") for n in ("swap", "pad", "injection") if n in demo.probes]
    if "personas" in demo.probes:
        expected.append(L.audit("original", "persona_sensitivity", "csv"))
    if demo.config.get("variants"):
        expected.append(L.audit("original", "prompt_sensitivity_sensitivity", "csv"))
    assert demo.probe_final_outputs() == expected
    assert demo.probe_answer_tree() == {d: {j: L.probe_answers(d, j) for j in plan.probe_judges} for d in plan.datasets}
    assert sorted(demo.probe_answer_files(None)) == sorted(
        L.probe_answers(d, j) for d in plan.datasets for j in plan.probe_judges
    )


def test_all_datasets_fills_dataset_and_provenance(demo):
    L, p = demo.layout, demo.plan.provenances[-1]
    function = demo.all_datasets(L.agreement("{dataset}", "{provenance}", "agreement"))
    assert function(wildcards(provenance=p)) == [L.agreement(d, p, "agreement") for d in demo.plan.datasets]


def test_named_inputs_declare_each_file_once(demo):
    d = demo.plan.datasets[0]
    function = named_inputs(qrels=demo.judge_qrels)
    found = function(wildcards(dataset=d, provenance="original"))
    assert sorted(found.values()) == sorted(demo.judge_qrels(wildcards(dataset=d, provenance="original")).values())


def test_wildcard_regexes_and_slots(demo):
    assert one_of([]) == "(?!)" and one_of(["a.b", "c"]) == r"a\.b|c"
    llm = sorted({j.name for js in demo.plan.judges.values() for j in js if j.kind == "llm"})
    assert demo.judges_of_kind("llm") == one_of(llm)
    assert llm_slots(None) == 0


def test_a_job_that_only_sends_requests_takes_one_thread_and_a_model_in_the_job_its_own(monkeypatch):
    """Three threads asked of each judge: the in-process models (local SmolLM2, MiniLM) get them,
    the API judge one (its job is one Python thread waiting on sockets) and its slots."""
    monkeypatch.chdir(ROOT)
    config = demo_config()
    for judge in config["judges"]:
        if judge["kind"] in ("llm", "embedding"):
            judge["threads"] = 3
    api = {"name": "api", "kind": "llm", "model": "openai/gpt-4o-mini", "threads": 3, "concurrency": 5}
    config["judges"].append(api)
    judges = {j.name: j for j in inputs_of(config).plan.judges["demo"]}
    assert caller_threads(judges["smollm2"]) == 3 and llm_slots(judges["smollm2"].endpoint) == 0
    assert caller_threads(judges["minilm"]) == 3
    assert caller_threads(judges["api"]) == 1 and llm_slots(judges["api"].endpoint) == 5


def test_recorded_judges_are_one_job_per_dataset_with_params_by_judge(demo):
    L, w = demo.layout, wildcards(dataset="demo", provenance="original")
    assert demo.recorded_judge_sets() == [(("demo",), ("assessor-b",))]
    assert demo.recorded_qrels(w) == {"assessor-b": "resources/demo/qrels.assessor-b.txt"}
    assert demo.recorded_scales(w) == {"assessor-b": {"min": 0, "max": 3, "binary_threshold": 2}}
    assert demo.recorded_invalid_labels(w) == {"assessor-b": "error"}
    assert demo.recorded_outputs(["assessor-b"]) == {
        "qrels/assessor-b": L.qrels("{dataset}", "{provenance}", "assessor-b"),
        "summary/assessor-b": L.judgments("{dataset}", "{provenance}", "assessor-b", "summary.json"),
    }


def test_datasets_with_other_recorded_judges_get_a_rule_of_their_own(monkeypatch):
    monkeypatch.chdir(ROOT)
    config = demo_config()
    config["datasets"]["again"] = dict(config["datasets"]["demo"])
    config["judges"].append({"name": "demo-only", "kind": "recorded", "qrels": {"demo": "resources/demo/qrels.txt"}})
    found = inputs_of(config)
    assert found.recorded_judge_sets() == [(("demo",), ("assessor-b", "demo-only")), (("again",), ("assessor-b",))]
    assert list(found.recorded_scales(wildcards(dataset="again"))) == ["assessor-b"]


def test_the_ledger_waits_for_every_llm_callers_store_and_reads_what_the_plan_reads(demo):
    """The cost ledger reads every call store (voirdire.plan.ledger_rows): each LLM job that writes
    one (its summary beside it) is an input, so the ledger is made after every call."""
    plan, L = demo.plan, demo.layout
    found = demo.ledger_inputs()
    for name, files in demo.plan_inputs().items():
        assert found[name] == files
    every = {path for files in found.values() for path in files}
    d = plan.datasets[0]
    llm = [j.name for j in plan.judges[d] if j.kind == "llm"]
    assert llm and plan.assistants and plan.padders and plan.probe_judges and plan.gaming_judges
    expected = [L.judgments(d, p, j, "summary.json") for p in plan.provenances for j in llm]
    expected += [L.sample_labels(d, p, j, "summary.json") for p in plan.provenances for j in llm]
    expected += [L.probe_answers(d, j, "summary.json") for j in plan.probe_judges]
    expected += [L.gaming_labels(d, j, "summary.json") for j in plan.gaming_judges if j in llm]
    expected += [L.rewrites(d, a.provenance, "summary.json") for a in plan.assistants]
    expected += [L.padded(d, p.name, "summary.json") for p in plan.padders]
    assert set(expected) <= every, set(expected) - every
    # the demo's rankers run SmolLM2 in process (no call store): none of their runs is waited for
    assert not any("/runs/" in path for path in every)
