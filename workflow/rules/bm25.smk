# Stage 2 (docs/definitions.md, Systems): BM25 top-k pool with Pyserini (k1, b, depth from config.bm25).


rule bm25_index:
    input:
        corpus=lambda wildcards: config["datasets"][wildcards.dataset]["corpus"],
    output:
        # the completion marker, written last: an emptied or partial index folder is rebuilt
        L.index_marker(D),
    log:
        L.log("{dataset}/bm25_index"),
    benchmark:
        L.benchmark("{dataset}/bm25_index")
    conda:
        "../../envs/voirdire.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    script:
        "../scripts/bm25_index.py"


rule bm25:
    input:
        unpack(INPUTS.bm25_inputs),
    output:
        run=L.pool(D),
        passages=L.passages(D),
    log:
        L.log("{dataset}/bm25"),
    benchmark:
        L.benchmark("{dataset}/bm25")
    wildcard_constraints:
        dataset=INPUTS.pool_datasets(),
    conda:
        "../../envs/voirdire.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        spec=INPUTS.dataset_spec,
        bm25=config["bm25"],
    script:
        "../scripts/bm25_run.py"
