"""Probes, step 5: the tables and figures of every configured probe (the swap test, the pad test,
the injection probe, persona-conditioned judging) and the probes' fingerprint.

The systems' per-query scores under each persona condition and under the humans are computed as
Table 2 computes them (:func:`voirdire.probes.tables.condition_scores`): the primary measure,
every run cut at the evaluation depth, binarized at the probed judge's binary threshold. Every
table comes with why it may be empty (:class:`voirdire.probes.tables.Table`). What a sample left
out because its passage has no text (a recorded run's passages beyond the candidates' texts) is
counted in each table (``without_text``, per dataset) and said in its title."""

import json
from pathlib import Path

import pandas as pd

from voirdire.evaluation import primary_scores, read_scores
from voirdire.fingerprint import fingerprint
from voirdire.formats import atomic_write
from voirdire.jobscript import grouped, start
from voirdire.judges import HUMAN
from voirdire.manifest import sha256
from voirdire.probes import tables as probes
from voirdire.probes.shifts import shift_chart, swap_chart

log = start(snakemake)
params, out = snakemake.params, snakemake.output
files = grouped(snakemake.input)
manifest = sha256(snakemake.input.manifest)
human = probes.read_human(files["human"], params.judges)
found = probes.read_answers(files["answers"])
# dataset -> each probe's sample summary (probe_sample): what it drew, and what it left out
drawn = {d: json.loads(Path(p).read_text(encoding="utf-8"))["summary"] for d, p in files["samples"].items()}
LEFT_OUT = {"personas": "without_text_left_out"}  # the summary key of each probe's count; else without_text


def left_out(probe: str) -> dict[str, int]:
    """Dataset -> how many of the probe's candidates its sample left out for want of a text."""
    return {
        d: int((summary.get(probe) or {}).get(LEFT_OUT.get(probe, "without_text"), 0)) for d, summary in drawn.items()
    }


def note(counts: dict[str, int], what: str) -> str:
    """The title's note on what was left out for want of a text ('' when nothing was)."""
    counts = {d: n for d, n in counts.items() if n}
    if not counts:
        return ""
    where = ", ".join(f"{d}: {n}" for d, n in counts.items())
    return f" ({what} without a passage text left out of the sample, counted in without_text: {where})"


def table(result: probes.Table, key: str, title: str) -> None:
    """A probe's table, with ``without_text`` (its sample's left-out count, per dataset; swap and
    lists rows each their own) and the count in the title."""
    frame, view = result.frame, list(probes.VIEWS[key])
    counts = {p: left_out(p) for p in (key, "lists") if p == key or (key == "swap" and params.lists)}
    if "dataset" in frame.columns and len(frame):
        which = frame["probe"] if key == "swap" and "probe" in frame.columns else pd.Series(key, frame.index)
        frame = frame.assign(without_text=[counts.get(p, {}).get(d, 0) for p, d in zip(which, frame["dataset"])])
        view.append("without_text")
    what = {"swap": "candidate pairs", "lists": "pairs of result lists", "personas": "pairs"}
    title += "".join(note(c, what.get(p, "passages")) for p, c in counts.items())
    probes.write_probe_table(
        probes.Table(frame, result.empty), getattr(out, key), title=title, manifest=manifest, view=view
    )


if "swap" in params.probes:
    human_eval = primary_scores(read_scores(files["scores"].values()), params.measure, [HUMAN])
    result = probes.swap_results(found, human, human_eval, lists=params.lists, alpha=params.alpha)
    table(result, "swap", "Swap test: each pair asked in both orders; a win counts only if it survives the swap")
    swap_chart(result.frame, out.swap_png)
if "pad" in params.probes:
    result = probes.pad_results(found, human, params.alpha)
    table(result, "pad", "Pad test: padded (about twice the length, no new facts) vs original text")
    shift_chart(result.frame.rename(columns={"padding": "condition"}), out.pad_png, "Pad test")
if "injection" in params.probes:
    result = probes.injection_results(found, human, params.alpha)
    table(result, "injection", "Injection probe: a relevance claim or the query's terms added to non-relevant passages")
    shift_chart(result.frame.rename(columns={"template": "condition"}), out.injection_png, "Injection probe")
if "personas" in params.probes:  # every role and the humans on the same pairs: human-judged, parsed everywhere
    runs = probes.read_runs(files.get("runs", {}))
    comparison, _ = probes.persona_results(found, human, runs, **probes.evaluation_of(params))
    what = "Persona-conditioned judging (every condition and the humans on the same pairs)" + note(
        left_out("personas"), "pairs"
    )
    probes.write_comparison(comparison, probes.comparison_paths(out, "persona_"), what, manifest)

# what produced these tables: packages, config, and who answered
answered = {}
for dataset, summaries in files["summaries"].items():
    for path in summaries.values():
        summary = json.loads(Path(path).read_text(encoding="utf-8"))
        who = summary.get("judge") or f"padder {summary.get('assistant')}"
        answered[f"{dataset}/{who}"] = {"model": summary.get("model"), "model_versions": summary.get("model_versions")}
with atomic_write(out.fingerprint) as fh:
    json.dump({**fingerprint(params.config), "manifest_sha256": manifest, "answered_by": answered}, fh, indent=2)
log.info("probe tables written")
