# Stage 1 (docs/configuration.md): normalise a dataset to topics and human qrels.


rule dataset:
    input:
        unpack(INPUTS.dataset_files),
    output:
        topics=L.topics(D),
        qrels=L.human_qrels(D),
        summary=L.data_summary(D),
    log:
        L.log("{dataset}/dataset"),
    benchmark:
        L.benchmark("{dataset}/dataset")
    conda:
        "../../envs/voirdire.yaml"
    params:
        spec=INPUTS.dataset_spec,
    script:
        "../scripts/prepare_dataset.py"


# A dataset with `texts:` (docs/trec-rag.md) has no BM25 pool: the texts of the passages its
# needed pairs name are fetched from a Lucene index or the official segment files, and nothing else.
rule fetch_texts:
    input:
        pairs=L.pairs(D, "original"),
        segments=INPUTS.text_source_files,
    output:
        passages=L.passages(D),
        summary=L.texts_summary(D),
    log:
        L.log("{dataset}/fetch_texts"),
    benchmark:
        L.benchmark("{dataset}/fetch_texts")
    wildcard_constraints:
        dataset=INPUTS.fetched_datasets(),
    priority: 50
    conda:
        "../../envs/voirdire.yaml"
    resources:
        mem_mb=4000,
    params:
        texts=lambda wildcards: as_plain(config["datasets"][wildcards.dataset]["texts"]),
    script:
        "../scripts/fetch_texts.py"
