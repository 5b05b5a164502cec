"""Audits at a challenge's size (84 label sets, 100 runs) stay cheap and say the same: a figure
is drawn once to fit it and once for its PDF (its PNG is the fit's last draw, the bytes savefig
writes), at most MAX_PANELS judges a figure; and what was vectorised for the size -- the
systems' passage lengths under every judge at once, the humans-only intervals of calibration,
the query resamples, the C-parsed qrels, one ir_measures evaluator for every run of a judge --
gives the same numbers, bit for bit, as the loops it replaces."""

from __future__ import annotations

import gzip
import io

import matplotlib.figure
import numpy as np
import pandas as pd
import pytest

from voirdire import output
from voirdire.audits.calibration import _classical_intervals
from voirdire.audits.figures import MAX_PANELS, confusion_heatmaps, length_chart, leniency_chart
from voirdire.audits.length import system_lengths, system_lengths_by_judge
from voirdire.evaluation import cut, evaluate_measures, judged_only, per_query_scores
from voirdire.formats import read_qrels_counted
from voirdire.stats.resample import query_resamples

RNG = np.random.default_rng(27)
JUDGES_84 = [f"{m}.prompt-variant-{v:02d}" for m in ("gpt-4o", "llama-3.1-70b", "qwen2.5-72b") for v in range(28)]


def deciles(judges):
    return pd.DataFrame(
        [
            {
                "dataset": "data",
                "judge": j,
                "decile": d,
                "all": RNG.random() * 3,
                **{f"human_{g}": RNG.random() * 3 for g in range(4)},
            }
            for j in judges
            for d in range(1, 11)
        ]
    )


def confusions(judges):
    return {("data", j): pd.DataFrame(RNG.integers(0, 900, (4, 4)), index=range(4), columns=range(4)) for j in judges}


def label_test(judges):
    return pd.DataFrame(
        [
            {
                "dataset": "data",
                "judge": j,
                **{f"mean_judge_grade_at_human_{g}": g + RNG.normal(0, 0.4) for g in range(4)},
            }
            for j in judges
        ]
    )


@pytest.fixture
def draws(monkeypatch):
    """Counts of Figure.draw calls: in all, and inside fit_to_contents."""
    counts = {"all": 0, "fit": 0}
    draw, fit = matplotlib.figure.Figure.draw, output.fit_to_contents

    def counted_draw(self, renderer):
        counts["all"] += 1
        return draw(self, renderer)

    def counted_fit(fig, *args, **kwargs):
        before = counts["all"]
        found = fit(fig, *args, **kwargs)
        counts["fit"] += counts["all"] - before
        return found

    monkeypatch.setattr(matplotlib.figure.Figure, "draw", counted_draw)
    monkeypatch.setattr(output, "fit_to_contents", counted_fit)
    return counts


@pytest.mark.parametrize(
    "figure, table",
    [(length_chart, deciles), (confusion_heatmaps, confusions), (leniency_chart, label_test)],
    ids=["length", "confusion", "leniency"],
)
def test_a_figure_of_84_judges_shows_at_most_the_cap_and_is_drawn_once_past_its_fit(tmp_path, draws, figure, table):
    fig = figure(table(JUDGES_84), tmp_path / "figure.png")
    judges = {j for ax in fig.axes for j in JUDGES_84 if j in ax.get_title() or j in ax.get_legend_handles_labels()[1]}
    assert 0 < len(judges) <= MAX_PANELS  # not a panel or a line per judge
    assert len(fig.axes) <= MAX_PANELS
    assert f"{MAX_PANELS} of 84 judges" in fig.get_suptitle() + "".join(ax.get_title() for ax in fig.axes)
    # the fit's draws, then one for the PDF: no draw of the PNG, no layout pass inside savefig
    assert draws["fit"] >= 1 and draws["all"] == draws["fit"] + 1
    assert (tmp_path / "figure.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "figure.pdf").read_bytes()[:4] == b"%PDF"


def _busy_figure(engine="constrained"):
    plt = output.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(7, 4), layout=engine)
    rng = np.random.default_rng(1)  # the same figure every time
    for i, ax in enumerate(axes.flat):
        ax.imshow(rng.random((4, 4)))
        ax.set_title(f"a long panel title that wraps nowhere {i}")
        ax.set_xlabel("judge grade")
    fig.legend([ax.images[0] for ax in axes.flat[:2]], ["first", "second"], loc="outside right upper")
    return fig


def test_save_fitted_writes_the_bytes_savefig_writes(tmp_path):
    output.save_fitted(_busy_figure(), tmp_path / "fast.png")
    fig = output.fit_to_contents(_busy_figure())
    png, pdf = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=output.DPI)
    fig.savefig(pdf, format="pdf", dpi=output.DPI, metadata=output.PDF_METADATA)
    assert (tmp_path / "fast.png").read_bytes() == png.getvalue()
    assert (tmp_path / "fast.pdf").read_bytes() == pdf.getvalue()
    assert fig.get_layout_engine() is None  # laid out where it stands: savefig runs no layout


def test_a_fitted_figure_without_a_layout_engine_is_still_laid_out_tight(tmp_path, monkeypatch):
    fig = _busy_figure(engine=None)
    calls = []
    monkeypatch.setattr(fig, "tight_layout", lambda *a, **k: calls.append(1))
    output.save_fitted(fig, tmp_path / "plain.png")
    assert calls == [1]  # as save_figure always did for a figure with no engine of its own


# ----------------------------------------------------------------------------- the same numbers


def _lengths_one_by_one(runs, texts, depth, judged, evaluation_depth):
    """system_lengths as it was: every run cut, filtered and averaged on its own (the lengths as
    floats: a run with nothing judged has a missing mean, where the loop raised on its empty
    string column)."""
    words = {d: len(t.split()) for d, t in texts.items()}
    out = {}
    for system, system_runs in runs.items():
        means = []
        for run in system_runs:
            top = cut(run, evaluation_depth) if evaluation_depth is not None else run
            top = judged_only(top, judged) if judged is not None else top
            top = cut(top, depth) if depth is not None else top
            means.append(top["doc_id"].map(words).astype(float).groupby(top["query_id"]).mean().mean())
        out[system] = float(np.mean(means))
    return pd.Series(out)


def _runs_and_judges():
    docs = [f"d{i}" for i in range(400)]
    texts = {d: " ".join(["w"] * int(RNG.integers(1, 200))) for d in docs[:370]}  # some without a text
    queries = [f"q{q:02d}" if q % 3 else f"Q{q}" for q in range(12)]
    runs = {}
    for s in range(9):
        draws = []
        for _ in range(3 if s == 0 else 1):  # an oracle's tie-break draws
            rows = [
                (q, docs[d], r + 1, round(float(RNG.random()), 1))  # tied scores
                for q in queries
                for r, d in enumerate(RNG.choice(len(docs), 60, replace=False))
            ]
            draws.append(pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"]))
        runs[f"system-{s}"] = draws
    judges = {
        f"j{j}": pd.DataFrame(
            [(q, docs[d], 1) for q in queries[: 12 - j] for d in RNG.choice(len(docs), 150, replace=False)],
            columns=["query_id", "doc_id", "relevance"],
        )
        for j in range(4)
    }
    judges["nothing judged"] = pd.DataFrame({"query_id": ["zz"], "doc_id": ["d0"], "relevance": [1]})
    return runs, texts, judges


@pytest.mark.parametrize("depth, evaluation_depth", [(10, 40), (10, None), (None, 25), (3, 5)])
def test_system_lengths_of_every_judge_at_once_are_those_of_one_run_at_a_time(depth, evaluation_depth):
    runs, texts, judges = _runs_and_judges()
    every = system_lengths_by_judge(runs, texts, {**judges, "all": None}, depth, evaluation_depth=evaluation_depth)
    for judge, qrels in {**judges, "all": None}.items():
        expected = _lengths_one_by_one(runs, texts, depth, qrels, evaluation_depth)
        pd.testing.assert_series_equal(every[judge], expected, check_exact=True)
        pd.testing.assert_series_equal(
            system_lengths(runs, texts, depth, qrels, evaluation_depth=evaluation_depth), expected, check_exact=True
        )
    assert every["nothing judged"].isna().all()


def test_system_lengths_without_texts_are_missing_for_every_system():
    runs, _, judges = _runs_and_judges()
    found = system_lengths_by_judge(runs, {}, judges, 10, evaluation_depth=40)
    for judge, qrels in judges.items():
        pd.testing.assert_series_equal(found[judge], _lengths_one_by_one(runs, {}, 10, qrels, 40), check_exact=True)


def test_humans_only_intervals_are_ppi_pys_classical_interval_column_by_column():
    from ppi_py import classical_mean_ci

    for k, systems in [(3, 101), (5, 7), (10, 1), (20, 64), (130, 3)]:
        y = RNG.random((k, systems))
        if systems == 64:
            y = np.round(y, 1)  # ties, as nDCG has
        low, high = _classical_intervals(y, 0.95)
        expected = np.array([np.ravel(classical_mean_ci(column, alpha=1 - 0.95)) for column in y.T]).T
        assert np.array_equal(low, expected[0]) and np.array_equal(high, expected[1])


@pytest.mark.parametrize("queries, resamples, seed", [(50, 1000, 42), (1, 7, 3), (43, 2000, 7), (0, 5, 1)])
def test_query_resamples_count_the_draws_as_add_at_did(queries, resamples, seed):
    picks = np.random.default_rng(seed).integers(0, queries, size=(resamples, queries))
    expected = np.zeros((resamples, queries))
    np.add.at(expected, (np.arange(resamples)[:, None], picks), 1)
    found = query_resamples(queries, resamples, seed)
    assert found.dtype == expected.dtype and np.array_equal(found, expected)


QRELS = {
    "plain": "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 3\n",
    "tabs and blank lines": "q1\t0\td1\t2\n\n   \nq2 0  d3 1\n",
    "leading spaces": "  q1 0 d1 2\n",
    "numeric ids": "001 0 0042 1\n1 0 42 2\n",
    "ids pandas would read as missing": "NA 0 NaN 1\nnull 0 None 0\n",
    "a grade with zeros": "q 0 d 003\n",
    "no final newline": "q1 0 d1 2",
    "repeated line": "q1 0 d1 2\nq1 0 d1 2\n",
    "conflicting grades": "q1 0 d1 2\nq1 0 d1 1\n",
    "out of scale": "q1 0 d1 5\nq1 0 d2 1\n",
    "a float grade": "q1 0 d1 2.0\n",
    "a signed grade": "q1 0 d1 +2\n",
    "an underscored grade": "q 0 d 1_0\n",
    "a huge grade": "q 0 d 99999999999999999999\n",
    "five fields": "q1 0 d1 2 x\n",
    "a short line": "q1 0 d1 2\nq1 0 d2\n",
    "crlf": "q1 0 d1 2\r\nq2 0 d1 1\r\n",
    "a lone carriage return": "q1 0 d1 2\rq2 0 d1 1\n",
    "byte-order mark": "\ufeffq1 0 d1 2\n",
    "no-break space": "q1 0 d\u00a01 2\n",
    "form feed": "q1 0 d1\x0c2\n",
    "accented id": "q1 0 dé 2\n",
    "empty": "",
}


@pytest.mark.parametrize("name", list(QRELS))
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_qrels_read_fast_are_what_the_line_by_line_reader_reads(tmp_path, monkeypatch, name, compressed):
    from voirdire import formats
    from voirdire.errors import InputError

    data = QRELS[name].encode()
    path = tmp_path / "qrels.txt"
    path.write_bytes(gzip.compress(data) if compressed else data)

    def read(scale, **kwargs):
        try:
            return read_qrels_counted(path, scale, **kwargs)
        except InputError as error:
            return str(error)

    cases = [
        ((0, 3), {}),
        ((0, 3), {"invalid": "drop", "allow_empty": True}),
        ((-(10**9), 10**9), {"allow_empty": True}),
    ]
    fast = [read(scale, **kwargs) for scale, kwargs in cases]
    monkeypatch.setattr(formats, "_read_qrels_fast", lambda *args: None)  # line by line only
    slow = [read(scale, **kwargs) for scale, kwargs in cases]
    for found, expected in zip(fast, slow, strict=True):
        if isinstance(expected, str):
            assert found == expected
        else:
            pd.testing.assert_frame_equal(found[0], expected[0], check_exact=True)
            assert found[1] == expected[1]


def test_one_evaluator_for_every_run_of_a_judge_scores_as_one_per_run():
    runs, _, judges = _runs_and_judges()
    qrels = judges["j1"].assign(relevance=RNG.integers(0, 4, len(judges["j1"])))
    queries = sorted(set(qrels["query_id"]) | {"unanswered"})
    measures = ["nDCG(judged_only=True)@10", "nDCG@10", "AP@100", "RR@10", "RR@5", "P(rel=3)@5"]
    found = evaluate_measures(runs, qrels, queries, measures, binary_threshold=2, depth=40)
    for system, system_runs in runs.items():
        draws = [per_query_scores(r, qrels, queries, measures, binary_threshold=2, depth=40) for r in system_runs]
        mean = sum(draws[1:], draws[0]) / len(draws)
        for text in measures:
            rows = found[(found["system"] == system) & (found["measure"] == text)]
            assert np.array_equal(rows["value"].to_numpy(), mean[text].to_numpy()), (system, text)


@pytest.mark.parametrize("dtype", [object, "string[pyarrow]"])
def test_run_dict_is_the_dict_ir_measures_builds_row_by_row(dtype):
    """The run handed to pytrec_eval: the same keys, order and values as ir_measures' own
    conversion of the DataFrame (a repeated pair: the later line wins)."""
    from ir_measures.util import RunConverter

    from voirdire.evaluation import run_dict

    run, _, _ = _runs_and_judges()
    frame = pd.concat([run["system-1"][0], run["system-2"][0].head(30)], ignore_index=True)
    frame = frame.astype({"query_id": dtype, "doc_id": dtype})
    expected = RunConverter(frame[["query_id", "doc_id", "score"]]).as_dict_of_dict()
    found = run_dict(frame)
    assert found == expected and list(found) == list(expected)
    assert all(list(found[q]) == list(expected[q]) for q in expected)
    assert {type(s) for docs in found.values() for s in docs.values()} == {float}


@pytest.mark.parametrize("systems", [1, 2, 3, 7, 40])
def test_tau_ap_rows_equals_tau_ap_row_by_row(systems):
    """The whole-array tau_AP of bootstrap draws equals the one-row walk it replaces, ties and
    NaN rows included (both give NaN there)."""
    from voirdire.stats.agreement import ranked, tau_ap, tau_ap_rows

    rng = np.random.default_rng(systems)
    reference = rng.normal(size=(1100, systems))
    judge = reference + rng.normal(scale=0.8, size=reference.shape)
    if systems > 1:
        judge[::7, 0] = judge[::7, 1]  # ties in the judge's ordering
        reference[::11, -1] = reference[::11, 0]  # ties in the reference's
        judge[5, 0] = np.nan
    expected = np.array([tau_ap(r, j) for r, j in zip(reference, judge, strict=True)])
    got = tau_ap_rows(reference, judge, chunk=256)
    np.testing.assert_array_equal(tau_ap_rows(ranked(reference), ranked(judge)), got)  # sorted once, the same bits
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got[~np.isnan(got)], expected[~np.isnan(expected)], rtol=0, atol=1e-12)
    if systems > 2:
        assert np.isnan(expected).sum() > 0 and (~np.isnan(expected)).sum() > 100


@pytest.mark.parametrize("systems", [1, 2, 3, 7, 40, 102])
def test_rbo_and_max_drop_rows_equal_the_row_by_row_walks_to_the_bit(systems):
    """RBO and the largest drop of bootstrap draws, as whole-array operations, equal one call per
    row bit for bit (the agreement table's intervals do not move), ties and NaN rows included."""
    from voirdire.stats.agreement import max_drop, max_drop_rows, ranked, rbo_rows, rbo_scores

    rng = np.random.default_rng(systems)
    reference = rng.normal(size=(600, systems))
    judge = reference + rng.normal(scale=0.8, size=reference.shape)
    if systems > 1:
        judge[::7, 0] = judge[::7, 1]
        reference[::11, -1] = reference[::11, 0]
        judge[5, 0] = np.nan
    for p in (0.9, 0.5):
        expected = np.array([rbo_scores(r, j, p=p) for r, j in zip(reference, judge, strict=True)])
        np.testing.assert_array_equal(rbo_rows(reference, judge, p=p), expected)
        np.testing.assert_array_equal(rbo_rows(ranked(reference), ranked(judge), p=p), expected)
    expected = np.array([max_drop(r, j) for r, j in zip(reference, judge, strict=True)])
    np.testing.assert_array_equal(max_drop_rows(reference, judge), expected)
    np.testing.assert_array_equal(max_drop_rows(ranked(reference), judge), expected)
    if systems > 2:
        assert np.isnan(expected).sum() > 0 and (~np.isnan(expected)).sum() > 100


def test_resampled_means_are_the_nan_means_of_the_drawn_queries():
    """leave-one-judge-out's bootstrap means, from the draws' multiplicities, equal the mean of
    each cell over the queries each draw picks (the same draws), NaN cells left out and a cell
    no drawn query scores NaN."""
    from voirdire.audits.panel import resampled_means
    from voirdire.stats import query_picks

    rng = np.random.default_rng(12)
    cube = rng.random((12, 5, 3))
    cube[rng.random(cube.shape) < 0.2] = np.nan
    cube[:, 4, 2] = np.nan  # a cell no query scores
    cube[0, 3, 1], cube[1:, 3, 1] = 0.5, np.nan  # scored by query 0 only
    found = resampled_means(cube, 300, 9)
    picks = query_picks(12, 300, 9)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmean(cube[picks], axis=1)
    assert found.shape == expected.shape == (300, 5, 3)
    assert np.array_equal(np.isnan(found), np.isnan(expected)) and np.isnan(found[:, 4, 2]).all()
    assert np.allclose(found, expected, rtol=1e-12, atol=0, equal_nan=True)
    assert 0 < np.isnan(found[:, 3, 1]).mean() < 1  # undefined exactly where query 0 is not drawn
