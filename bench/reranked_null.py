"""Benchmark: the judge-reranked audit's permutation null, per draw, both ways (prints a table).

``voirdire.audits.reranked`` draws its null (the judge's grades permuted among the pairs of the
same query and human grade, every variant re-sorted and rescored) either in numpy
(:class:`~voirdire.audits.reranked.FastNull`) or, for a measure it does not compute, through the
evaluation path per draw (pytrec_eval: ``_null_evaluated``). On TREC DL 2019 (43 queries, the NIST
labels of the needed pairs, the BM25 top 100 and the public monoT5-3B and Rank1-7B runs as your
systems, depth 100, k 10, nDCG@10 judged-only), per judge:

* seconds per draw of each path (the same seeded permutations), and the largest gap between their
  nulls (the same statistic: 0 up to float rounding);
* the fast null's shape at ``--null-draws`` draws: its mean, sd, skewness and excess kurtosis (the
  normal approximation behind ``p`` rests on them), and its ``p`` against the Monte Carlo one.

Judges: a per-pair noise judge (+-1 w.p. 0.3, seeded), the public monoT5-3B and Rank1-7B label
sets, and the noise judge fooled by the systems' non-relevant top-10 documents (grade 0 -> 3 w.p.
0.5 on them: the bias the question flags).

``--plants`` prints instead the table of docs/judge-in-the-loop.md: per planted judge (seeded by
7), :func:`voirdire.audits.reranked.reranked_table`'s ``all`` row and each system's excess, at the
audit's default draws.

    python bench/reranked_null.py                 # 5 evaluated draws, 200 fast, 2000 for the shape
    python bench/reranked_null.py --evaluated-draws 20 --null-draws 5000
    python bench/reranked_null.py --plants
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kurtosis, skew

from voirdire.audits import reranked as rr
from voirdire.evaluation import MEASURE, cut
from voirdire.formats import read_qrels, read_rankgpt, read_run, read_topics
from voirdire.judges import needed_pairs, restrict
from voirdire.machine import cpu, describe

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec-dl-2019"
DEPTH, K, SEED = 100, 10, 42


def load(folder: Path):
    """Queries, human@pool, the three systems, the needed pairs and the judges' label sets."""
    qrels = read_qrels(folder / "qrels.nist.txt")
    _, bm25, _ = read_rankgpt(folder / "bm25-top100.rankgpt.json")
    runs = {
        "BM25": [bm25],
        "monot5": [read_run(folder / "run.monot5-3b.txt")],
        "rank1": [read_run(folder / "run.rank1-7b.txt")],
    }
    pairs = needed_pairs(qrels, pool=bm25, runs=[r[0] for r in runs.values()], depth=DEPTH)
    human = restrict(qrels, pairs)
    rng = np.random.default_rng(7)
    g = human["relevance"].to_numpy()
    noise = np.clip(g + (rng.random(len(g)) < 0.3) * rng.choice([-1, 1], len(g)), 0, 3)
    tops = pd.concat([cut(r[0], K)[["query_id", "doc_id"]] for r in runs.values()]).drop_duplicates()
    in_top = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]]).isin(pd.MultiIndex.from_frame(tops))
    fooled = np.where(in_top & (noise == 0) & (rng.random(len(g)) < 0.5), 3, noise)
    judges = {
        "noise": human.assign(relevance=noise),
        "monoT5-3B": restrict(read_qrels(folder / "qrels.monot5-3b.txt"), pairs),
        "Rank1-7B": restrict(read_qrels(folder / "qrels.rank1-7b.txt"), pairs),
        "fooled": human.assign(relevance=fooled),
    }
    return list(read_topics(folder / "topics.tsv")), human, runs, pairs, judges


def setting(judge: pd.DataFrame, human: pd.DataFrame, runs, pairs, qids):
    """What ``_judge_rows`` hands the null: the judge's label array, the prepared runs, the
    observed scores (the evaluation path's), the permutation blocks."""
    labels = judge[["query_id", "doc_id", "relevance"]].astype({"query_id": str, "doc_id": str})
    labels = labels.drop_duplicates(["query_id", "doc_id"], keep="last").reset_index(drop=True)
    keys = pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]])
    grades = labels["relevance"].to_numpy(dtype=float)
    needed = pd.MultiIndex.from_arrays([pairs["query_id"].astype(str), pairs["doc_id"].astype(str)])
    systems = list(runs)
    prepared = {s: [rr.prepare(r, K, keys, needed, DEPTH, "trec_eval") for r in rs] for s, rs in runs.items()}
    names = {s: rr.variant_name(s, "j") for s in systems}
    variants = {names[s]: [rr.rerank(p, grades) for p in prepared[s]] for s in systems}
    scored = rr._score({**runs, **variants}, labels, human, (2, 2), qids, str(MEASURE), DEPTH, "trec_eval")
    over = float(rr._over_rating(scored, systems, names).mean(axis=1).mean())
    by_pair = human.set_index(["query_id", "doc_id"])["relevance"]
    grade_h = by_pair.reindex(keys).fillna(-1).to_numpy()
    codes = pd.factorize(pd.MultiIndex.from_arrays([labels["query_id"].to_numpy(), grade_h]))[0]
    common = (labels, grades, human, prepared, systems, names, runs, (2, 2), qids, str(MEASURE), DEPTH, "trec_eval")
    return common, codes, scored, over


def plants(human: pd.DataFrame, runs) -> dict[str, pd.DataFrame]:
    """The planted judges of docs/judge-in-the-loop.md, each from its own generator seeded by 7."""
    g = human["relevance"].to_numpy()
    keys = pd.MultiIndex.from_frame(human[["query_id", "doc_id"]])

    def within(systems) -> np.ndarray:
        tops = pd.concat([cut(runs[s][0], K)[["query_id", "doc_id"]] for s in systems]).drop_duplicates()
        return keys.isin(pd.MultiIndex.from_frame(tops))

    def noise(rng) -> np.ndarray:
        return np.clip(g + (rng.random(len(g)) < 0.3) * rng.choice([-1, 1], len(g)), 0, 3)

    any_top, mono = within(runs), within(["monot5"])
    found = {}
    rng = np.random.default_rng(7)
    found["+-1 noise on 30% of pairs (a null)"] = noise(rng)
    found["copy of NIST"] = g.copy()
    rng = np.random.default_rng(7)
    found["grade 0 -> 3 w.p. 0.5 on documents any system puts in its top 10"] = np.where(
        any_top & (g == 0) & (rng.random(len(g)) < 0.5), 3, g
    )
    rng = np.random.default_rng(7)
    base = noise(rng)
    found["noise, then grade 0 -> 3 w.p. 0.5 on monoT5's top 10 (one family)"] = np.where(
        mono & (g == 0) & (rng.random(len(g)) < 0.5), 3, base
    )
    rng = np.random.default_rng(7)
    base = noise(rng)
    found["noise, then +1 w.p. 0.5 on monoT5's top 10 (every grade)"] = np.clip(
        base + (mono & (rng.random(len(g)) < 0.5)), 0, 3
    )
    rng = np.random.default_rng(7)
    found["+1 w.p. 0.5 on documents of any top 10 with grade <= 2 (no other noise)"] = np.where(
        any_top & (g <= 2) & (rng.random(len(g)) < 0.5), g + 1, g
    )
    return {name: human.assign(relevance=grades) for name, grades in found.items()}


def plants_table(qids, human, runs, pairs) -> pd.DataFrame:
    """Per planted judge: the ``all`` row's over-rating, null mean, sd and skewness, both p, and
    each system's excess over its own null."""
    rows = []
    for name, judge in plants(human, runs).items():
        table = rr.reranked_table(runs, {"j": judge}, human, pairs, {"j": 2}, 2, qids, k=K, depth=DEPTH, seed=SEED)
        table = table.set_index("system")
        total = table.loc[rr.ALL]
        rows.append(
            {
                "planted judge": name,
                "over-rating (all)": total["over_rating"],
                "null mean": total["null_mean"],
                "null sd": total["null_sd"],
                "null skew": total["null_skew"],
                "p": total["p"],
                "p_permutation": total["p_permutation"],
                "excess per system": ", ".join(f"{s} {table.loc[s, 'excess']:+.3f}" for s in runs),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--evaluated-draws", type=int, default=5, help="draws through pytrec_eval (slow)")
    parser.add_argument("--fast-draws", type=int, default=200, help="draws in numpy, timed")
    parser.add_argument("--null-draws", type=int, default=2000, help="draws in numpy for the null's shape")
    parser.add_argument("--plants", action="store_true", help="the planted judges' table instead")
    args = parser.parse_args()
    if not (args.data / "qrels.nist.txt").is_file():
        sys.exit(f"no TREC DL 2019 data at {args.data}")
    qids, human, runs, pairs, judges = load(args.data)
    if args.plants:
        print(plants_table(qids, human, runs, pairs).to_markdown(index=False, floatfmt=".3g"))
        print(f"\n- draws {rr.DRAWS} (the audit's default), seed {SEED}, depth {DEPTH}, k {K}, {MEASURE}.")
        return
    rows = []
    for name, judge in judges.items():
        common, codes, scored, over = setting(judge, human, runs, pairs, qids)
        begun = time.perf_counter()
        slow = rr._null_evaluated(*common[:3], codes, *common[3:], args.evaluated_draws, SEED)
        slow_s = (time.perf_counter() - begun) / args.evaluated_draws
        begun = time.perf_counter()
        fast = rr._null(*common, args.fast_draws, SEED, scored=scored)
        fast_s = (time.perf_counter() - begun) / args.fast_draws
        if rr._fast_null(*common[3:6], *common[:3], qids, str(MEASURE), scored) is None:
            sys.exit(f"{name}: the numpy null did not reproduce the evaluated scores")
        gap = float(np.abs(fast[: args.evaluated_draws] - slow).max())
        shape = rr._null(*common, args.null_draws, SEED, scored=scored).mean(axis=1)
        columns = rr._null_columns(over, shape)
        rows.append(
            {
                "judge": name,
                "s/draw evaluated": slow_s,
                "s/draw numpy": fast_s,
                "speed-up": slow_s / fast_s,
                "max |null gap|": gap,
                "over_rating": over,
                "null mean": columns["null_mean"],
                "null sd": columns["null_sd"],
                "skew": float(skew(shape, bias=False)),
                "excess kurtosis": float(kurtosis(shape, bias=False)),
                "z": (over - columns["null_mean"]) / columns["null_sd"],
                "p (normal)": columns["p"],
                "p (permutation)": columns["p_permutation"],
            }
        )
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".4g"))
    print()
    print(
        f"- TREC DL 2019, {len(qids)} queries, systems {', '.join(runs)} (depth {DEPTH}, k {K}, {MEASURE}); "
        f"evaluated draws {args.evaluated_draws}, numpy draws {args.fast_draws} (timed) and {args.null_draws} "
        f"(the shape), seed {SEED}; one process on {describe(cpu())}."
    )


if __name__ == "__main__":
    main()
