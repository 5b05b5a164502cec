"""LLM rerankers: every one reorders the BM25 pool (SPEC section 2)."""
