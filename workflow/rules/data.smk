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
