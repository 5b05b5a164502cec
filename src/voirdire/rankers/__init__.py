"""LLM rerankers: every one reorders the BM25 pool (docs/configuration.md, LLM rerankers)."""
