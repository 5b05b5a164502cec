"""Judge probes that ask again: swap, pad, injection, persona and prompt sensitivity (SPEC sections 6-7)."""
