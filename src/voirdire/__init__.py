"""voirdire: examine LLM relevance judges before trusting their labels.

Reproduces "Rankers, Judges, and Assistants" (Balog, Metzler & Qin, SIGIR 2025) as a
Snakemake workflow. The science lives here as small pure functions; the workflow in
``workflow/`` is I/O at the edges.
"""

__version__ = "0.1.0"
