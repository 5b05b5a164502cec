"""Stage 4b: every recorded judge's labels for exactly the needed pairs, and what each file held
beyond them: one job per dataset and provenance (one Python start, not one per label set).

Every label set is read before any is written; bad input in any fails the job with one line per
judge at fault (file:line and what is wrong)."""

import json

from voirdire.errors import InputError, raise_all
from voirdire.formats import atomic_write, read_pairs, write_qrels
from voirdire.jobscript import grouped, start
from voirdire.judges import recorded_labels

log = start(snakemake)
params = snakemake.params
files = grouped(snakemake.input)["labels"]
outputs = grouped(snakemake.output)
pairs = read_pairs(snakemake.input.pairs)
done, errors = {}, []
for name, path in files.items():
    try:
        done[name] = recorded_labels(name, path, pairs, params.scale[name], params.invalid_labels[name], log)
    except InputError as error:
        log.error("%s: %s", name, error)
        errors.append(error)
raise_all(errors)
for name, (labels, summary) in done.items():
    write_qrels(labels, outputs["qrels"][name])
    with atomic_write(outputs["summary"][name]) as fh:
        json.dump(summary, fh, indent=2)
log.info("%d recorded judges written", len(done))
