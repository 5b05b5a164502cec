"""The Assistants experiment (Balog, Metzler & Qin, SIGIR 2025, §4.3, Figures 4-5): do
judges favour passages an LLM has rewritten?

An *assistant* is an LLM that rewrites a passage ("make it read better"), keeping its
content. If a judge's relevance grade moves when only the wording changed, the judge rewards
the style of machine text rather than the information in it; a ranker whose score moves the
same way would then look better under that judge for reasons that have nothing to do with
relevance (the circularity the paper warns about).

* **Sample.** :func:`.sample.balanced_sample` draws the same number of (query, passage) pairs at
  every human grade, so a perfectly calibrated judge would give each grade equally often and
  a shift in either direction is visible at every grade.
* **Rewrites.** Rewrites come from an assistant run here or from a recorded corpus
  (:func:`.recorded.read_recorded_rewrites`, e.g. the Cocktail benchmark's ``llama-2-7b-chat`` BEIR
  corpora). :func:`.checks.check_rewrite` flags rewrites that are not rewrites: empty, a refusal, a
  copy of the original, far shorter or longer, or wrapped in chat ("Sure! Here is ...").
  Flagged rewrites are reported, never silently dropped: the caller decides.
* **Experiment 1 (Figure 4).** The same judge labels each pair twice, original and
  rewritten passage. :func:`.experiments.label_shift` compares the two label sets with
  :func:`voirdire.stats.paired_shift`, the paired test every label shift here uses (the two
  labels of a pair are not independent): the exact sign test of the pairs that rose against
  those that fell, and the Stuart-Maxwell test of marginal homogeneity for the label
  distributions (the figure's view). Within each human grade too: a judge may inflate only
  the non-relevant passages.
* **Experiment 2 (substitution).** Every passage a system retrieves is replaced by its
  rewrite and the judge's labels re-taken; :func:`.experiments.substitution` pairs the per-query nDCG@10
  of each system before and after (paired t-test). A judge that favours rewrites makes every
  system look better, but not necessarily by the same amount.
* **Experiment 3 (Figure 5).** The rankers' own scores: does a ranker score the rewrite of a
  passage higher than the original? :func:`.experiments.score_shift` summarises the differences with a
  sign test (differences within ``tolerance`` count as ties).

Where each part lives: :mod:`.declarations` (what an assistant is, from the config),
:mod:`.sample`, :mod:`.checks` (rewrite checks), :mod:`.recorded` (recorded rewrite corpora),
:mod:`.job` (a live assistant's calls through :mod:`voirdire.llm`), :mod:`.experiments`
(experiments 1-3), :mod:`.figures` (Figures 4-5) and :mod:`.preference` (self-preference on
rewritten passages). All but the job are pure functions on pandas tables.
"""
