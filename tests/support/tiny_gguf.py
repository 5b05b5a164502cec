"""A small GGUF cut from SmolLM2's own: the same architecture, metadata, tensor formats (Q4_1,
Q8_0, F32) and tokenizer kind, with its first ``blocks`` layers and ``vocab`` tokens.

For tests of the conversion machinery (the race of two processes, one read of the file against
transformers' three), which then convert a few megabytes instead of the 135M-parameter model
with its 49k-token vocabulary. The tensors are the real file's quantised bytes, copied (the
token embedding cut to its first rows: each Q8_0 row is whole blocks), not re-quantised.
"""

from __future__ import annotations

from pathlib import Path


def write_tiny_gguf(source: Path, destination: Path, *, blocks: int = 2, vocab: int = 1024) -> Path:
    """Write the cut of ``source`` to ``destination`` and return it."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(source)
    arch = reader.fields["general.architecture"].contents()
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()[:vocab]
    kept = set(tokens)
    merges = [
        m
        for m in reader.fields["tokenizer.ggml.merges"].contents()
        if (pair := m.split(" ")) and len(pair) == 2 and {*pair, "".join(pair)} <= kept
    ]
    overrides = {
        f"{arch}.block_count": blocks,
        f"{arch}.vocab_size": vocab,
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": reader.fields["tokenizer.ggml.token_type"].contents()[:vocab],
        "tokenizer.ggml.merges": merges,
    }
    writer = gguf.GGUFWriter(destination, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue  # written by the writer itself
        value = overrides.get(name, field.contents())
        sub_type = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, value, field.types[0], sub_type=sub_type)
    for tensor in reader.tensors:
        if tensor.name.startswith("blk.") and int(tensor.name.split(".")[1]) >= blocks:
            continue
        data = np.asarray(tensor.data)  # quantised: (rows, bytes a row)
        if tensor.name == "token_embd.weight":  # a row a token: keep the first ``vocab``
            data = data[:vocab]
        writer.add_tensor(tensor.name, data, raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return destination
