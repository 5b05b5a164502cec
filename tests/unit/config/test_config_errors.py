"""Every config error is one line, under ``snakemake`` as under ``voirdire check``: the project's own
schema check runs first (not Snakemake's ``validate``), every error is reported at once, keys are
written one way (judges and systems by name), and a relative path that is not found says where
it resolves from."""

from __future__ import annotations

import copy
import os
import pickle

import pytest
import yaml
from conftest import ROOT, keep_judges, snakemake

from voirdire.cli import main as voirdire_cli
from voirdire.config import check, load_plan, validate_schema
from voirdire.errors import ConfigError, ConfigErrors, InputError, item_key, key_of, raise_all

SNAKEMAKE_BANNER = "Using workflow specific profile"  # Snakemake's own line before the Snakefile runs


def small_config(tmp_path) -> dict:
    """config/config.yaml without its model-based judges and rankers, and without the sections
    that need them: ``snakemake -n`` on it takes seconds."""
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["systems"] = [s for s in config["systems"] if s not in config["rankers"]]
    config["rankers"] = {}
    keep_judges(config, lambda judge: judge["kind"] not in ("llm", "embedding"))
    for section in ("assistants", "rewriting", "probes", "gaming", "variants"):
        config.pop(section)
    return config


def dry_run(path) -> tuple[int, list[str], str]:
    """``snakemake -n --configfile path`` from the repository root: exit status, the
    ``voirdire:`` lines, everything it printed."""
    result = snakemake("-n", "--cores", "1", "--configfile", str(path), check=False)
    output = result.stdout + result.stderr
    return result.returncode, [line for line in output.splitlines() if line.startswith("voirdire: ")], output


def one_line_per_mistake(path, *mistakes: tuple[str, ...]) -> list[str]:
    """The dry run fails with exactly one ``voirdire:`` line per mistake (each line holding its
    mistake's texts, in order), prints nothing else of its own, and no traceback."""
    code, lines, output = dry_run(path)
    assert code != 0, output
    assert len(lines) == len(mistakes), output
    for line, texts in zip(lines, mistakes):
        for text in texts:
            assert text in line, line
    assert "Traceback" not in output and 'File "' not in output, output
    assert "jsonschema" not in output and "common.smk" not in output, output  # not Snakemake's validate
    other = [
        line for line in output.splitlines() if line.strip() and not line.startswith(("voirdire: ", SNAKEMAKE_BANNER))
    ]
    assert other == [], output
    assert not (path.parent / "results").exists()  # nothing ran
    return lines


def write(path, config):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- through snakemake


def test_a_small_config_dry_runs(tmp_path):
    code, lines, output = dry_run(write(tmp_path / "good.yaml", small_config(tmp_path)))
    assert code == 0 and lines == [], output


def test_a_typo_in_a_judge_kind_is_one_line_naming_the_judge(tmp_path):
    config = small_config(tmp_path)
    config["judges"][0]["kind"] = "recordd"
    name = config["judges"][0]["name"]
    one_line_per_mistake(
        write(tmp_path / "bad.yaml", config), (f"config key 'judges[{name}].kind'", "'recordd' is not one of")
    )


def test_an_entry_the_schema_rejects_is_one_line_naming_the_unknown_key(tmp_path):
    config = small_config(tmp_path)
    config["judges"][1]["knd"] = "baseline"  # a key the schema does not know
    name = config["judges"][1]["name"]
    one_line_per_mistake(
        write(tmp_path / "bad.yaml", config),
        (f"config key 'judges[{name}].knd'", "unknown key 'knd'", "did you mean 'kind'?"),
    )


def test_three_mistakes_are_three_lines_in_one_round(tmp_path):
    config = small_config(tmp_path)
    config["datasets"]["demo"]["qrels"] = str(tmp_path / "missing-qrels.txt")
    config["systems"].append("Swap[0]")
    config.setdefault("evaluation", {})["measures"] = ["Foo@10"]
    path = write(tmp_path / "bad.yaml", config)
    one_line_per_mistake(
        path,
        ("config key 'datasets.demo.qrels'", "file not found"),
        ("config key 'systems[Swap[0]]'", "positions start at 1"),
        ("config key 'evaluation.measures[0]'", "cannot parse"),
    )
    assert voirdire_cli(["check", "--configfile", str(path)]) == 2  # voirdire check says the same


def test_three_schema_mistakes_are_three_lines(tmp_path):
    config = small_config(tmp_path)
    config["bm25"]["depth"] = 1
    config["judges"][0]["kind"] = "oracle"
    config["colour"] = "red"
    one_line_per_mistake(
        write(tmp_path / "bad.yaml", config),
        ("config key 'bm25.depth'", "minimum of 2"),
        ("config key 'colour'", "unknown key 'colour'"),
        (f"config key 'judges[{config['judges'][0]['name']}].kind'", "'oracle'"),
    )


def test_a_path_relative_to_the_config_file_says_where_paths_resolve_from(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "qrels.txt").write_text((ROOT / "resources/demo/qrels.txt").read_text())
    config = small_config(tmp_path)
    config["datasets"]["demo"]["qrels"] = "qrels.txt"  # written relative to the config file
    path = write(folder / "bad.yaml", config)
    [line] = one_line_per_mistake(path, ("config key 'datasets.demo.qrels'", "file not found: qrels.txt"))
    assert f"relative paths resolve from the working directory, {ROOT}" in line
    assert f"did you mean {folder / 'qrels.txt'} (relative to the config file)?" in line


def test_voirdire_check_prints_every_error_one_per_line(tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "qrels.txt").write_text((ROOT / "resources/demo/qrels.txt").read_text())
    config = small_config(tmp_path)
    config["datasets"]["demo"]["qrels"] = "qrels.txt"
    config["systems"].append("Nope")
    path = write(folder / "bad.yaml", config)
    assert voirdire_cli(["check", "--configfile", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and all(line.startswith("voirdire: config key '") for line in lines), lines
    assert "did you mean" in lines[0] and "relative to the config file" in lines[0]
    assert "config key 'systems[Nope]'" in lines[1] and "unknown system" in lines[1]


# ----------------------------------------------------------------------------- the key notation


CONFIG = {
    "datasets": {"dl19": {"source": "local", "qrels": "q.txt"}},
    "systems": ["BM25", "Swap[1]", 3],
    "judges": [{"name": "monot5-3b", "kind": "recorded", "reruns": ["a", "b"]}, {"kind": "llm"}],
    "evaluation": {"measures": ["AP", "nDCG@10"]},
    "probes": {"swap": {"lists": {"systems": ["BM25", "Perfect"]}}},
}


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (["judges", 0, "kind"], "judges[monot5-3b].kind"),  # a judge by its name
        (["judges", 0], "judges[monot5-3b]"),
        (["judges", 0, "reruns", 1], "judges[monot5-3b].reruns[1]"),  # a bare list item by position
        (["judges", 1, "kind"], "judges[1].kind"),  # no name: by position
        (["systems", 1], "systems[Swap[1]]"),  # a system by its text
        (["systems", 2], "systems[2]"),  # not a name: by position
        (["systems"], "systems"),
        (["datasets", "dl19", "qrels"], "datasets.dl19.qrels"),  # mappings dotted
        (["evaluation", "measures", 1], "evaluation.measures[1]"),
        (["probes", "swap", "lists", "systems", 1], "probes.swap.lists.systems[Perfect]"),
        (["judges", 5], "judges[5]"),  # beyond the list (a key the schema asks for)
        ([], "(top level)"),
    ],
)
def test_keys_are_written_one_way(path, key):
    assert key_of(path, CONFIG) == key


def test_item_key_names_what_has_a_name():
    assert item_key("judges", 3, {"name": "umbrela", "kind": "llm"}) == "judges[umbrela]"
    assert item_key("judges", 3, {"kind": "llm"}) == "judges[3]"
    assert item_key("systems", 0, "Swap[1,2]") == "systems[Swap[1,2]]"
    assert item_key("rewriting.rankers", 0, "rg") == "rewriting.rankers[0]"


@pytest.fixture
def base(tmp_path):
    (tmp_path / "t.tsv").write_text("1\tcats\n2\tdogs\n")
    (tmp_path / "q.txt").write_text("1 0 a 2\n2 0 b 1\n")
    (tmp_path / "c.jsonl").write_text('{"id": "a", "contents": "cats"}\n{"id": "b", "contents": "dogs"}\n')
    (tmp_path / "j.txt").write_text("1 0 a 1\n2 0 b 0\n")
    return {
        "datasets": {
            "toy": {
                "source": "local",
                "topics": str(tmp_path / "t.tsv"),
                "qrels": str(tmp_path / "q.txt"),
                "corpus": str(tmp_path / "c.jsonl"),
            }
        },
        "systems": ["BM25", "Perfect", "Swap[1]"],
        "judges": [
            {
                "name": "j",
                "kind": "recorded",
                "qrels": str(tmp_path / "j.txt"),
                "scale": {"max": 1},
                "binary_threshold": 1,
            }
        ],
    }


def test_meaning_errors_in_judges_and_systems_name_them(base):
    config = validate_schema(copy.deepcopy(base))
    config["judges"][0]["qrels"] = "/nonexistent/j.txt"
    config["systems"][2] = "Swap[0]"
    with pytest.raises(ConfigErrors) as info:
        check(config)
    assert [e.key for e in info.value.errors] == ["systems[Swap[0]]", "judges[j].qrels"]


# ----------------------------------------------------------------------------- every error at once


def test_check_reports_one_error_per_section_at_once(base, tmp_path):
    config = validate_schema(copy.deepcopy(base))
    config["datasets"]["toy"]["topics"] = str(tmp_path / "none.tsv")  # datasets
    config["rankers"] = {"r1": {"method": "rankt5", "model": "m", "backend": "litellm"}}  # rankers
    config["systems"].append("Nope")  # systems
    config["evaluation"]["measures"] = ["nDCG@10", "Foo@10"]  # measures
    config["judges"].append({**config["judges"][0]})  # judges: a name used twice
    with pytest.raises(ConfigErrors) as info:
        check(config)
    error = info.value
    assert [e.key for e in error.errors] == [
        "datasets.toy.topics",
        "rankers.r1.backend",
        "systems[Nope]",
        "evaluation.measures[1]",
        "judges[j].name",
    ]
    assert isinstance(error, ConfigError) and isinstance(error, InputError)  # what callers catch still catches it
    assert error.key == "datasets.toy.topics"  # the first error's
    assert str(error).splitlines() == error.lines and len(error.lines) == 5


def test_a_system_of_a_broken_ranker_is_not_reported_twice(base):
    config = validate_schema(copy.deepcopy(base))
    config["rankers"] = {"r1": {"method": "rankt5", "model": "m", "backend": "litellm"}}
    config["systems"].append("r1")
    with pytest.raises(ConfigError) as info:
        check(config)
    assert info.value.lines == [str(info.value)] and info.value.key == "rankers.r1.backend"


def test_schema_errors_are_all_reported(base):
    config = copy.deepcopy(base)
    config["bm25"] = {"depth": 1}
    config["judges"][0]["kind"] = "oracle"
    config["datasets"]["toy"]["topcs"] = "x"
    with pytest.raises(ConfigErrors) as info:
        validate_schema(config)
    assert [e.key for e in info.value.errors] == ["bm25.depth", "datasets.toy.topcs", "judges[j].kind"]
    assert "did you mean 'topics'?" in info.value.lines[1]


def test_one_error_is_raised_as_itself():
    single = ConfigError("bad", key="bm25.depth")
    with pytest.raises(ConfigError) as info:
        raise_all([single])
    assert info.value is single and info.value.lines == ["config key 'bm25.depth': bad"]
    raise_all([])  # nothing to raise


def test_several_errors_pickle_and_flatten():
    inner = ConfigErrors([ConfigError("a", key="x"), ConfigError("b", key="y")])
    error = ConfigErrors([inner, InputError("c", path="f.txt", line=3)])
    assert error.lines == ["config key 'x': a", "config key 'y': b", "f.txt:3: c"]
    again = pickle.loads(pickle.dumps(error))
    assert again.lines == error.lines and again.key == "x"


def test_load_plan_names_a_path_relative_to_the_config_file(base, tmp_path, monkeypatch):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "judge.txt").write_text("1 0 a 1\n2 0 b 0\n")
    base["judges"][0]["qrels"] = "judge.txt"
    (folder / "c.yaml").write_text(yaml.safe_dump(base))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(ConfigError) as info:
        load_plan(folder / "c.yaml")
    assert str(info.value) == (
        f"config key 'judges[j].qrels': file not found: judge.txt (relative paths resolve from the working "
        f"directory, {elsewhere}); did you mean {folder / 'judge.txt'} (relative to the config file)?"
    )
    monkeypatch.chdir(folder)  # from the config file's folder it is found
    assert load_plan("c.yaml").judge_names("toy") == ["human", "j"]


def test_an_llm_judge_prompt_relative_to_the_config_file_is_named(base, tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "prompt.txt").write_text("{query} {passage}\n")
    config = validate_schema(copy.deepcopy(base))
    config["judges"].append(
        validate_schema(
            {
                **copy.deepcopy(base),
                "judges": [{"name": "umbrela", "kind": "llm", "model": "openai/x", "prompt_file": "prompt.txt"}],
            }
        )["judges"][0]
    )
    with pytest.raises(ConfigError) as info:
        check(config, configfile=[str(folder / "c.yaml")])
    assert info.value.key == "judges[umbrela].prompt_file" and len(info.value.lines) == 1
    assert str(info.value).endswith(
        f"prompt file not found: prompt.txt (relative paths resolve from the working "
        f"directory, {os.getcwd()}); did you mean "
        f"{folder / 'prompt.txt'} (relative to the config file)?"
    )


def test_a_wrong_value_inside_a_one_of_names_its_own_key(base):
    config = copy.deepcopy(base)
    config["judges"][0]["qrels"] = {"toy": 3}  # a mapping, as allowed, with a wrong entry
    config["judges"].append({"name": "k", "kind": "recorded", "qrels": 3})  # neither shape
    with pytest.raises(ConfigErrors) as info:
        validate_schema(config)
    assert info.value.lines == [
        "config key 'judges[j].qrels.toy': 3 is not of type 'string'",
        "config key 'judges[k].qrels': 3 is not a string nor a mapping",
    ]
