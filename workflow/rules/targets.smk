# The final outputs (rule all, the timings table) and the report entries of the audits and the
# probes: what needs Snakemake's `report()` and `expand()`. Paths come from L, the probes' and
# the gamed system's final tables from INPUTS.
from voirdire.audits import declared as AUDITS_DECLARED


def get_final_output():
    """Every table and figure, the verdict, then the table of where the run's time went (made last)."""
    return run_outputs() + verdict_outputs() + [L.timings("csv")]


def verdict_outputs():
    return [L.verdict(ext) for ext in ("csv", "md", "html")]


def run_outputs():
    names = ["table1", "table2", "significance"]
    if any(r.method == "prp" for r in PLAN.rankers):
        names.append("position_bias")
    tables = [L.table(P, name, ext) for name in names for ext in ("csv", "md")]
    # Figure 3 and the ASL curves draw the systems under each judge: none without systems
    # (Table 1 says why)
    figures = (
        [L.figure(P, name, ext) for name in ("figure3", "asl") for ext in ("png", "pdf")]
        if PLAN.has_systems
        else []
    )
    audits = [L.audit(P, name, "csv") for name in AUDITS_DECLARED.tables()]
    audits += [L.audit(P, name, "png") for name in AUDITS_DECLARED.figures()]
    outputs = expand(
        tables + figures + audits + [L.table(P, "fingerprint", "json")],
        provenance=PROVENANCES,
    )
    assistants = [
        L.table(P, name, "csv") for name in ("label_shift", "substitution", "rewrite_checks")
    ]
    assistants += [L.figure(P, "figure4", "png")]
    if PLAN.rewriting_rankers:
        assistants += [L.table(P, "score_shift", "csv"), L.figure(P, "figure5", "png")]
    return (
        outputs
        + expand(assistants, provenance=REWRITTEN)
        + INPUTS.probe_final_outputs()
        + INPUTS.gaming_final_outputs()
    )


# ----------------------------------------------------------------------------- report entries
def in_report(path, name, caption=None, folder="../report"):
    """``path``, the table or figure ``name``, in the report with its caption
    (``workflow/report/<caption or name>.rst``, or in ``folder``: an installed audit's), filed
    beside the verdict question it is evidence of (voirdire.audits.declared.report_section)."""
    caption = f"{folder}/{caption or name}.rst"
    return report(path, caption=caption, **AUDITS_DECLARED.report_section(name))


def audit_output(name, ext, caption=None, folder=None):
    """An audit table or figure; with a caption, it joins the report (in_report)."""
    path = L.audit(P, name, ext)
    if not caption:
        return path
    return in_report(path, name, f"audit_{caption}", folder or "../report")


def audit_rule_outputs():
    """The audits job's outputs, keyed as its script writes them, from their declarations
    (voirdire.audits.declared): each table's csv and md, each figure's png and pdf; the csv or
    png with a caption joins the report (in_report)."""
    outputs = {}
    for declared in AUDITS_DECLARED.outputs():
        (first, key), (second, other) = declared.keys().items()
        outputs[key] = audit_output(declared.name, first, declared.caption, declared.captions)
        outputs[other] = audit_output(declared.name, second)
    return outputs


def probe_output(name, ext, caption=None):
    """A probe's table or figure (provenance original); with a caption it joins the report (in_report)."""
    path = L.audit("original", name, ext)
    if not caption:
        return path
    return in_report(path, name, f"probe_{caption}")


def probe_table_outputs():
    """The outputs of every configured probe: ``{probe}`` (csv), ``{probe}_md``, ``{probe}_png``,
    ``{probe}_pdf``, and the persona tables and figures (``persona_*``)."""
    outputs = {}
    for name in ("swap", "pad", "injection"):
        if name in PROBES:
            outputs[name] = probe_output(name, "csv", name)
            outputs[f"{name}_md"] = probe_output(name, "md")
            outputs[f"{name}_png"] = probe_output(name, "png", f"{name}_chart")
            outputs[f"{name}_pdf"] = probe_output(name, "pdf")
    if "personas" in PROBES:
        outputs.update({f"persona_{k}": v for k, v in sensitivity_outputs("persona").items()})
    outputs["fingerprint"] = in_report(
        L.audit("original", "probes_fingerprint", "json"), "probes_fingerprint", "fingerprint"
    )
    return outputs


def sensitivity_outputs(prefix):
    """The persona (or prompt-variant) tables and figures: agreement, displacement, sensitivity by
    condition and by system, direction consistency; the displacement heatmap and sensitivity chart.
    """
    outputs = {}
    for name in ("agreement", "displacement", "sensitivity", "systems", "consistency"):
        outputs[name] = probe_output(f"{prefix}_{name}", "csv", f"sensitivity_{name}")
        outputs[f"{name}_md"] = probe_output(f"{prefix}_{name}", "md")
    outputs["heatmap"] = probe_output(f"{prefix}_heatmap", "png", "sensitivity_heatmap")
    outputs["chart"] = probe_output(f"{prefix}_chart", "png", "sensitivity_chart")
    return outputs
