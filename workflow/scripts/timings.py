"""Stage 8: where the run's time went, from every job's Snakemake benchmark file."""

from voirdire.jobscript import start
from voirdire.output import write_table
from voirdire.timing import measured_on, read_benchmarks, slowest

log = start(snakemake)
jobs = read_benchmarks(snakemake.params.folder)
table = slowest(jobs).assign(dataset="all jobs")
write_table(
    table,
    snakemake.output.csv,
    floatfmt=".2f",
    title=f"Where the time went: the slowest of {len(jobs)} jobs (Snakemake benchmark files; wall "
    f"seconds summed over jobs: {jobs['wall_s'].sum():.1f}; {measured_on()})",
    empty="no benchmark file found",
)
log.info(
    "%d jobs, %.1f s of job wall time; slowest: %s",
    len(jobs),
    jobs["wall_s"].sum(),
    ", ".join(f"{j} {s:.1f}s" for j, s in jobs.head(3)[["job", "wall_s"]].itertuples(index=False)),
)
