"""Recorded systems, measures, needed pairs and labels-only configs, on tiny hand-made files."""

import gzip
import logging

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import yaml

from voirdire.config import check, validate_schema
from voirdire.errors import ConfigError, InputError
from voirdire.evaluation import evaluate_measures, for_judge, parse_measure
from voirdire.formats import (
    _read_run_checked,
    read_qrels,
    read_qrels_counted,
    read_run,
    trec_eval_order,
    write_qrels,
    write_run,
)
from voirdire.init import init_config, write_config
from voirdire.judges import needed_pairs, recorded_labels, with_texts
from voirdire.runs import _queries_with_ties, folder_names, normalise_run

RUN = "q1 Q0 d1 1 3.0 tagA\nq1 Q0 d2 2 2.0 tagA\nq1 Q0 d3 3 2.0 tagA\nq2 Q0 d1 1 1.5 tagA\n"
QRELS = "q1 0 d1 0\nq1 0 d2 2\nq1 0 d3 3\nq2 0 d1 1\nq2 0 d9 2\n"


def test_fast_and_checked_run_readers_agree(write):
    path = write("run.txt", RUN)
    fast, slow = read_run(path), _read_run_checked(path)
    pd.testing.assert_frame_equal(
        fast.astype({"query_id": object, "doc_id": object}), slow.astype({"query_id": object, "doc_id": object})
    )
    assert list(fast["doc_id"]) == ["d1", "d2", "d3", "d1"]


@pytest.mark.parametrize(
    "form, arrow",
    [
        ("single spaces", True),
        ("CRLF", True),
        ("blank lines", True),
        ("no final newline", True),
        ("quoted ids", True),
        ("gzip", True),
        ("tabs", False),
        ("two spaces", False),
        ("a space at a line's end", False),
        ("a space at the start", False),
        ("byte-order mark", False),
        ("a line of spaces", False),
    ],
)
def test_every_run_reader_reads_what_the_line_reader_reads(tmp_path, form, arrow):
    """Arrow's reader takes runs whose fields are one space apart (the form this project writes),
    pandas' any whitespace, the line reader anything; where a faster one takes a file, its table
    is the line reader's, dtypes and all (a double quote is part of an id for each of them)."""
    from voirdire.formats import _read_run_arrow, _read_run_pandas

    text = RUN.replace("d1", '"d1"') if form == "quoted ids" else RUN
    text = {
        "CRLF": text.replace("\n", "\r\n"),
        "blank lines": text.replace("\n", "\n\n"),
        "no final newline": text.rstrip("\n"),
        "tabs": text.replace(" ", "\t"),
        "two spaces": text.replace(" Q0", "  Q0"),
        "a space at a line's end": text.replace("\n", " \n"),
        "a space at the start": " " + text,
        "byte-order mark": "\ufeff" + text,
        "a line of spaces": text + "   \n",
    }.get(form, text)
    path = tmp_path / ("run.txt.gz" if form == "gzip" else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if form == "gzip" else text.encode())
    expected = _read_run_checked(path)
    assert (_read_run_arrow(path) is not None) == arrow
    for found in (read_run(path), _read_run_pandas(path), _read_run_arrow(path)):
        if found is not None:
            pd.testing.assert_frame_equal(found, expected.astype({"query_id": "str", "doc_id": "str"}))
    assert read_run(path)["doc_id"].tolist()[0] == ('"d1"' if form == "quoted ids" else "d1")


def test_fast_run_reader_parses_every_number_text_as_python_does(write):
    """The C-parsed reader's numbers (Arrow's parser) are float()'s to the bit, in every way a
    run writes a score: shortest repr, 17 digits, fixed, exponent, negative, integer; the ids
    come back as str; a text that is no number goes to the line-by-line reader."""
    rng = np.random.default_rng(4)
    values = rng.normal(size=400) * 10.0 ** rng.integers(-6, 7, 400)
    texts = [repr(float(v)) for v in values[:100]] + [f"{v:.17g}" for v in values[100:200]]
    texts += [f"{v:.6f}" for v in values[200:300]] + [f"{v:.12e}" for v in values[300:]] + ["-0.0", "7", "1e-320"]
    path = write("many.txt", "".join(f"q{i % 3} Q0 d{i} {i + 1} {t} tag\n" for i, t in enumerate(texts)))
    fast, slow = read_run(path), _read_run_checked(path)
    assert fast["score"].tolist() == [float(t) for t in texts] == slow["score"].tolist()
    assert np.array_equal(np.signbit(fast["score"]), np.signbit([float(t) for t in texts]))
    assert fast["query_id"].dtype == slow["query_id"].dtype == "str" and fast["doc_id"].dtype == "str"
    bad = write("bad.txt", "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 3.O t\n")
    with pytest.raises(InputError, match=r"bad.txt:2"):
        read_run(bad)


def test_gzip_runs_and_qrels_are_read(tmp_path):
    (tmp_path / "run.txt.gz").write_bytes(gzip.compress(RUN.encode()))
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(QRELS.encode()))
    assert len(read_run(tmp_path / "run.txt.gz")) == 4
    assert read_qrels(tmp_path / "qrels.gz")["relevance"].tolist() == [0, 2, 3, 1, 2]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0\n", 2, "5 fields"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 high t\n", 2, "not numbers"),
        ("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 1.0 t\n", 3, "appears twice"),
    ],
)
def test_bad_run_lines_name_file_and_line(write, text, line, message):
    path = write("bad.run", text)
    with pytest.raises(InputError, match=message) as error:
        read_run(path)
    assert f"{path}:{line}" in str(error.value)


def test_ties_follow_trec_eval_not_the_rank_column(write):
    # the file ranks d2 above d3 (equal scores); trec_eval orders ties by doc id descending
    run = read_run(write("run.txt", RUN))
    assert list(trec_eval_order(run)["doc_id"])[:3] == ["d1", "d3", "d2"]
    kept, summary = normalise_run(
        run, {"q1": "a", "q2": "b", "q3": "c"}, depth=2, unknown_queries="error", name="s", path="run.txt"
    )
    assert list(kept[kept["query_id"] == "q1"]["doc_id"]) == ["d1", "d3"]
    assert summary["queries_tied_top10"] == 1 and summary["topics_missing"] == 1
    assert summary["documents_below_depth"] == 1
    # the measure agrees with ir_measures on the file as written (it orders ties the same way)
    qrels = read_qrels(write("qrels.txt", QRELS))
    ours = evaluate_measures({"s": [run]}, qrels, ["q1", "q2"], ["RR(rel=3)@10"])
    # trec_eval itself (pytrec_eval), on the file's scores with its rank column ignored
    truth = {q: dict(zip(g["doc_id"], g["relevance"].astype(int), strict=True)) for q, g in qrels.groupby("query_id")}
    scored = {q: dict(zip(g["doc_id"], g["score"], strict=True)) for q, g in run.groupby("query_id")}
    theirs = pytrec_eval.RelevanceEvaluator(truth, {"recip_rank"}, relevance_level=3).evaluate(scored)
    assert ours.set_index("query_id")["value"].to_dict() == pytest.approx({"q1": theirs["q1"]["recip_rank"], "q2": 0.0})
    assert theirs["q1"]["recip_rank"] == 0.5  # d3 (grade 3) second: a file-order tie-break puts it third


def test_unknown_queries_error_or_drop():
    run = pd.DataFrame({"query_id": ["q1", "zz"], "doc_id": ["d1", "d1"], "rank": [1, 1], "score": [1.0, 1.0]})
    with pytest.raises(InputError, match="not topics"):
        normalise_run(run, {"q1": "a"}, depth=10, unknown_queries="error", name="s", path="r")
    _, summary = normalise_run(run, {"q1": "a"}, depth=10, unknown_queries="drop", name="s", path="r")
    assert summary["unknown_queries_dropped"] == 1 and summary["lines_dropped_unknown"] == 1
    with pytest.raises(InputError, match="none of its"):
        normalise_run(run, {"other": "a"}, depth=10, unknown_queries="drop", name="s", path="r")
    # lines of queries a dataset's `queries` list sets aside are counted apart, and are no error
    _, summary = normalise_run(
        run, {"q1": "a"}, depth=10, unknown_queries="error", name="s", path="r", set_aside=["zz"]
    )
    assert summary["lines_set_aside"] == 1 and summary["unknown_queries_dropped"] == 0


def test_folder_names_by_tag_then_stem(tmp_path):
    (tmp_path / "a.txt").write_text(RUN)
    (tmp_path / "b.run").write_text(RUN)  # the same tag: both named by their stems
    (tmp_path / "c.txt").write_text(RUN.replace("tagA", "tagC"))
    names, notes = folder_names(tmp_path, key="runs.x")
    assert sorted(names) == ["a", "b", "tagC"] and len(notes) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="holds no run files"):
        folder_names(empty, key="runs.y")


def test_binary_measures_take_each_judges_threshold():
    assert str(for_judge("AP@100", 2)) == "AP(rel=2)@100"
    assert str(for_judge("AP@100", 1)) == str(ir_measures.parse_measure("AP(rel=1)@100"))
    assert str(for_judge("AP(rel=3)@100", 2)) == "AP(rel=3)@100"  # the user's own rel stays
    assert str(for_judge("nDCG@10", 2)) == "nDCG@10"  # graded: no threshold
    with pytest.raises(ConfigError, match="cannot parse"):
        parse_measure("nDCG@ten", key="evaluation.measures[0]")


def test_measures_equal_ir_measures_on_the_same_inputs(write):
    run, qrels = read_run(write("run.txt", RUN)), read_qrels(write("qrels.txt", QRELS))
    measures = ["nDCG(judged_only=True)@10", "AP@100", "P@2"]
    ours = evaluate_measures({"s": [run]}, qrels, ["q1", "q2"], measures, binary_threshold=2)
    for text in measures:
        theirs = ir_measures.pytrec_eval.calc_aggregate(
            [for_judge(text, 2)], qrels, run[["query_id", "doc_id", "score"]]
        )
        mine = ours[ours["measure"] == text]["value"].mean()
        assert mine == pytest.approx(list(theirs.values())[0])


def test_needed_pairs_come_from_any_systems_top_depth():
    qrels = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "z"], "relevance": [1, 0, 2, 3]})
    pool = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "x"], "rank": [1, 2], "score": [2.0, 1.0]})
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["c", "b", "z"], "rank": [1, 2, 3], "score": [3.0, 2.0, 1.0]})
    pairs = needed_pairs(qrels, pool=pool, runs=[run], depth=2)
    assert sorted(pairs["doc_id"]) == ["a", "b", "c"]  # z is below depth 2; x is unjudged
    assert pairs.set_index("doc_id")["in_pool"].to_dict() == {"a": True, "c": False, "b": False}
    assert len(needed_pairs(qrels)) == 4  # no system at all: every human-judged pair
    covered = with_texts(pairs, {"a": "text a"}, judge="j")
    assert list(covered["doc_id"]) == ["a"]


def test_invalid_labels_drop_counts_both_sides_of_a_conflict(write):
    path = write("labels.txt", "q1 0 d1 1\nq1 0 d2 5\nq1 0 d3 0\nq1 0 d3 1\nq1 0 d4 10\n")
    with pytest.raises(InputError, match=f"{path}:2"):
        read_qrels(path, (0, 3))
    labels, counts = read_qrels_counted(path, (0, 3), invalid="drop")
    assert list(labels["doc_id"]) == ["d1"]
    assert counts == {"lines_out_of_scale": 2, "conflicting_pairs": 1, "conflicting_lines": 2}


@pytest.mark.parametrize("dtype", [object, "string[pyarrow]"])
def test_run_writing_and_tie_counts_match_their_row_by_row_forms(tmp_path, dtype):
    """write_run, write_qrels and normalise_run's tie counts, from whole columns, as the loops had them."""
    rng = np.random.default_rng(5)
    rows = [
        (f"q{q}", f"d{d}", int(r), float(rng.choice([0.5, 0.25, rng.random()])))
        for q in (3, 1, 2)
        for r, d in enumerate(rng.choice(50, 20, replace=False))
    ]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"]).astype(
        {"query_id": dtype, "doc_id": dtype}
    )
    write_run(run, tmp_path / "run.txt", tag="my tag")
    expected = []
    for qid, group in run.sort_values(
        ["query_id", "score", "rank", "doc_id"], ascending=[True, False, True, True]
    ).groupby("query_id", sort=False):
        for rank, row in enumerate(group.itertuples(index=False), start=1):
            expected.append(f"{qid} Q0 {row.doc_id} {rank} {float(row.score)!r} my_tag\n")
    assert (tmp_path / "run.txt").read_text() == "".join(expected)
    qrels = run.assign(relevance=[i % 4 for i in range(len(run))])[["query_id", "doc_id", "relevance"]]
    write_qrels(qrels, tmp_path / "qrels.txt")
    lines = [f"{row.query_id} 0 {row.doc_id} {int(row.relevance)}\n" for row in qrels.itertuples(index=False)]
    assert (tmp_path / "qrels.txt").read_text() == "".join(lines)
    for depth in (3, 10):
        top = trec_eval_order(run).groupby("query_id", sort=False).head(depth)
        by_query = top.groupby("query_id", sort=False)["score"].agg(lambda s: s.duplicated().any()).sum()
        assert _queries_with_ties(top) == int(by_query)


def test_recorded_labels_keep_the_needed_pairs_and_log_by_judge(write, caplog):
    path = write("labels.txt", "q1 0 d1 1\nq1 0 d2 5\nq1 0 d3 1\nq1 0 d7 1\nq9 0 d1 1\n")
    pairs = pd.DataFrame({"query_id": ["q1", "q1", "q1"], "doc_id": ["d1", "d2", "d3"]})
    scale = {"min": 0, "max": 3, "binary_threshold": 2}
    with pytest.raises(InputError, match=f"{path}:2"):
        recorded_labels("j", path, pairs, scale)
    log = logging.getLogger("test.recorded")
    with caplog.at_level(logging.INFO, logger="test.recorded"):
        labels, summary = recorded_labels("j", path, pairs, scale, "drop", log)
    assert list(labels["doc_id"]) == ["d1", "d3"]
    assert summary == {
        "judge": "j",
        "kind": "recorded",
        "labels_in_file": 4,
        "labels_outside_pool": 1,
        "labels_other_queries": 1,
        "pairs": 3,
        "pairs_labelled": 2,
        "coverage": 2 / 3,
        "invalid_labels_dropped": 1,
        "lines_out_of_scale": 1,
        "conflicting_pairs": 0,
        "conflicting_lines": 0,
    }
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 5 and all(message.startswith("j: ") for message in messages)  # each names its judge
    assert "1 needed pairs have no label" in messages[2] and "reaches binary_threshold 2" in messages[4]
    with pytest.raises(InputError, match="recorded judge 'j' labels none of the 1 pairs"):
        recorded_labels("j", path, pairs.assign(doc_id="d9").head(1), scale, "drop")


def base_config(tmp_path, write, **changes):
    config = {
        "results": str(tmp_path / "results"),
        "datasets": {
            "d": {
                "source": "local",
                "topics": str(write("topics.tsv", "q1\tone\nq2\ttwo\n")),
                "qrels": str(write("qrels.txt", QRELS)),
            }
        },
        "runs": {"sysA": {"path": str(write("a.run", RUN)), "family": "f"}},
        "systems": ["Perfect", "sysA"],
        "oracles": {"base": "sysA"},
        "judges": [],
    }
    config.update(changes)
    return config


def test_a_labels_only_config_checks(tmp_path, write):
    plan = check(validate_schema(base_config(tmp_path, write)))
    assert [str(s) for s in plan.systems] == ["Perfect", "sysA"] and plan.labels_only("d")
    assert plan.base.name == "sysA" and plan.measures == ["nDCG(judged_only=True)@10"] and plan.depth == 100


def test_a_folder_key_lists_all_of_its_runs(tmp_path, write):
    write("runs/x.txt", RUN.replace("tagA", "alpha"))
    write("runs/y.txt", RUN.replace("tagA", "beta"))
    config = base_config(
        tmp_path,
        write,
        runs={
            "sysA": {"path": str(write("a.run", RUN))},
            "team": {"path": str(tmp_path / "runs"), "families": {"beta": "g"}},
        },
        systems=["Perfect", "sysA", "team"],
    )
    plan = check(validate_schema(config))
    assert [str(s) for s in plan.systems] == ["Perfect", "sysA", "alpha", "beta"]
    assert [s.family for s in plan.recorded] == [None, None, "g"]


@pytest.mark.parametrize(
    "changes, key, message",
    [
        ({"systems": ["BM25", "sysA"]}, "systems[BM25]", "labels-only"),
        ({"judges": [{"name": "n", "kind": "baseline", "method": "length"}]}, "judges[n].kind", "reads passage texts"),
        ({"oracles": {"base": "nope"}}, "oracles.base", "not a recorded run"),
        ({"evaluation": {"measures": ["Foo@10"]}}, "evaluation.measures[0]", "cannot parse"),
        (
            {"rankers": {"sysa": {"method": "rg", "model": "m"}}, "runs": {"sysa": {"path": "x"}}},
            "runs.sysa",
            "both a run and a ranker",
        ),
        ({"runs": {"sysA": {"path": "/nonexistent/run"}}}, "runs.sysA.path", "not found"),
    ],
)
def test_bad_recorded_configs_name_the_key(tmp_path, write, changes, key, message):
    with pytest.raises(ConfigError, match=message) as error:
        check(validate_schema(base_config(tmp_path, write, **changes)))
    assert f"'{key}'" in str(error.value)


def test_init_writes_a_config_that_checks(tmp_path, write):
    topics = write("topics.tsv", "q1\tone\nq2\ttwo\nq3\tthree\n")  # q3 has no qrels: dropped and counted
    judge = write("j.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    config, notes = init_config(
        qrels=str(write("qrels.txt", QRELS)),
        topics=str(topics),
        runs=[str(write("a.run", RUN))],
        judges=[f"j={judge}"],
        families=["tagA=f", "j=f"],
        measures=["AP@100"],
    )
    path = tmp_path / "mine.yaml"
    write_config(config, notes, path)
    plan = check(validate_schema(yaml.safe_load(path.read_text())))
    assert plan.config["datasets"]["data"]["unjudged_topics"] == "drop"
    assert plan.judge("data", "j").scale.binary_threshold == 1 and plan.judge("data", "j").family == "f"
    assert [s.family for s in plan.recorded] == ["f"] and any("no human qrels" in n for n in notes)


@pytest.mark.workflow
def test_a_bad_run_line_fails_its_job_in_one_line_naming_file_and_line(tmp_path, write):
    """A run with a 5-column line: the recorded-runs job (the first) fails with one line naming
    the file:line; the config error of a measure ir_measures cannot parse fails before any job."""
    from conftest import snakemake

    config = base_config(tmp_path, write, runs={"sysA": {"path": str(write("bad.run", RUN + "q2 Q0 d4 2 1.0\n"))}})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("--cores", "1", "--configfile", str(path), check=False)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("voirdire: ")]
    assert result.returncode != 0 and len(lines) == 1, result.stderr
    assert f"{tmp_path / 'bad.run'}:5" in lines[0] and "5 fields" in lines[0]
    config = base_config(tmp_path, write, evaluation={"measures": ["nDCG@ten"]}, results=str(tmp_path / "second"))
    path.write_text(yaml.safe_dump(config))
    result = snakemake("--cores", "1", "--configfile", str(path), check=False)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("voirdire: ")]
    assert len(lines) == 1 and "evaluation.measures[0]" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "second").exists()  # before any job
