"""Probes, step 5: the tables and figures of every configured probe (the swap test, the pad test,
the injection probe, persona-conditioned judging), or of prompt sensitivity (its own rule).

The systems' per-query scores under each condition and under the humans are computed as Table 2
computes them (:func:`voirdire.probes.tables.condition_scores`): the primary measure, every run
cut at the evaluation depth, binarized at the judge's own binary threshold (a persona's: the
probed judge's; a prompt variant's: its own)."""

import json
from pathlib import Path

import pandas as pd

from voirdire.fingerprint import fingerprint
from voirdire.formats import atomic_write, read_qrels, read_run
from voirdire.jobscript import grouped, start
from voirdire.judges import HUMAN
from voirdire.manifest import sha256
from voirdire.output import pyplot, save_figure, write_table
from voirdire.probes import tables as probes
from voirdire.probes.sensitivity import AGREEMENT_VIEW, BY_CONDITION_VIEW, displacement_heatmap, sensitivity_chart
from voirdire.probes.shifts import shift_chart, swap_chart

log = start(snakemake)
params, out, rule = snakemake.params, snakemake.output, snakemake.rule
files = grouped(snakemake.input)
manifest = sha256(snakemake.input.manifest)
# how the systems are scored under every label set, and what the sensitivity tables need
evaluation = {"judges": params.judges, "measure": params.measure, "depth": params.depth, "low": params.low,
              "high": params.high, "seed": params.seed, "rbo_p": params.rbo_p}  # fmt: skip


def qrels(path: str, dataset: str, judge: str = HUMAN) -> pd.DataFrame:
    """A judge's qrels, every grade checked against its declared scale."""
    scale = params.judges[dataset][judge]
    return read_qrels(path, (scale["min"], scale["max"]), allow_empty=True).assign(dataset=dataset)


def runs() -> dict:
    """dataset -> system -> its runs."""
    return {d: {s: [read_run(p) for p in paths] for s, paths in systems.items()}
            for d, systems in files.get("runs", {}).items()}  # fmt: skip


def answers() -> pd.DataFrame:
    frames = [pd.read_parquet(path).assign(dataset=d, judge=j) for d, judges in files["answers"].items()
              for j, path in judges.items()]  # fmt: skip
    return pd.concat(frames, ignore_index=True)


VIEWS = {  # the columns a person reads in the Markdown; the CSV keeps every one
    "swap": ["judge", "probe", "pairs", "answered", "position_consistency", "first_position_win_rate", "tie_rate",
             "accuracy", "position_p"],
    "pad": ["judge", "padding", "human", "n", "queries", "mean_shift", "shift_p", "flagged", "padded_wins",
            "padded_wins_upper", "tests"],
    "injection": ["judge", "template", "human", "n", "queries", "mean_shift", "shift_p", "flagged", "tests",
                  "expected_false_flags"],
}  # fmt: skip
VIEWS |= {  # prompt sensitivity's tables and the persona probe's
    f"{kind}{name}": view
    for kind in ("", "persona_")
    for name, view in (("agreement", AGREEMENT_VIEW), ("sensitivity", BY_CONDITION_VIEW))
}


def table(frame: pd.DataFrame, key: str, title: str) -> None:
    write_table(frame, getattr(out, key), title=title, floatfmt=".3f", manifest=manifest, view=VIEWS.get(key),
                empty="no LLM judge is probed")  # fmt: skip


def sensitivity(tables: dict, prefix: str, what: str, left_out=None) -> None:
    """Persona or prompt-variant sensitivity: the five tables and the two figures (none: say why in each)."""
    if not tables:  # nothing to compare on the same pairs: say so in every table and figure
        note = "no pair is human-judged and parsed under every condition, so no condition can be compared"
        for name in ("agreement", "displacement", "sensitivity", "systems", "consistency"):
            frame = left_out if name == "agreement" and left_out is not None else pd.DataFrame(columns=["dataset"])
            write_table(frame, getattr(out, f"{prefix}{name}"), title=f"{what}: {name} ({note})", floatfmt=".3f",
                        manifest=manifest, empty=note)  # fmt: skip
        for key in ("heatmap", "chart"):
            fig = pyplot().figure(figsize=(5, 1.6))
            fig.text(0.5, 0.5, note, ha="center", va="center", wrap=True, fontsize=9)
            save_figure(fig, getattr(out, f"{prefix}{key}"))
        log.warning("%s: %s (left out: %s)", what, note, None if left_out is None else left_out.to_dict("records"))
        return
    for name, frame in tables.items():
        table(frame, f"{prefix}{name}", f"{what}: {name}")
    displacement_heatmap(tables["displacement"], getattr(out, f"{prefix}heatmap"))
    sensitivity_chart(tables["sensitivity"], getattr(out, f"{prefix}chart"))


human = pd.concat([qrels(path, d) for d, path in files["human"].items()], ignore_index=True)
if rule == "prompt_sensitivity":  # each variants group's judges' labels of the pool
    labels = pd.concat([qrels(path, d, j).assign(group=g, condition=j) for d, groups in files["labels"].items()
                        for g, judges in groups.items() for j, path in judges.items()], ignore_index=True)  # fmt: skip
    tables = probes.sensitivity_results(labels, human, params.baselines, runs(), judge_of=probes.variant_judge,
                                        **evaluation)  # fmt: skip
    sensitivity(tables, "", "Prompt sensitivity")
else:
    found = answers()
    if "swap" in params.probes:
        human_eval = pd.concat([pd.read_parquet(p) for p in files["human_scores"].values()], ignore_index=True)
        result = probes.swap_results(found, human, human_eval)
        table(result, "swap", "Swap test: each pair asked in both orders; a win counts only if it survives the swap")
        swap_chart(result, out.swap_png)
    if "pad" in params.probes:
        result = probes.pad_results(found, human, params.alpha)
        table(result, "pad", "Pad test: padded (about twice the length, no new facts) vs original text")
        shift_chart(result.rename(columns={"padding": "condition"}), out.pad_png, "Pad test")
    if "injection" in params.probes:
        result = probes.injection_results(found, human, params.alpha)
        table(
            result,
            "injection",
            "Injection probe: a relevance claim or the query's terms added to non-relevant passages",
        )
        shift_chart(result.rename(columns={"template": "condition"}), out.injection_png, "Injection probe")
    if "personas" in params.probes:  # every role and the humans on the same pairs: human-judged, parsed everywhere
        tables, left_out = probes.persona_results(found, human, runs(), **evaluation)
        sensitivity(tables, "persona_", "Persona-conditioned judging (every condition and the humans on the same pairs)",
                    left_out)  # fmt: skip
if rule == "probe_tables":  # what produced these tables: packages, config, and who answered
    answered = {}
    for dataset, summaries in files["summaries"].items():
        for path in summaries.values():
            summary = json.loads(Path(path).read_text(encoding="utf-8"))
            who = summary.get("judge") or f"padder {summary.get('assistant')}"
            answered[f"{dataset}/{who}"] = {
                "model": summary.get("model"),
                "model_versions": summary.get("model_versions"),
            }
    with atomic_write(out.fingerprint) as fh:
        json.dump({**fingerprint(params.config), "manifest_sha256": manifest, "answered_by": answered}, fh, indent=2)
log.info("%s written", rule)
