# Stage 1 (SPEC section 1): normalise a dataset to topics and human qrels.


rule dataset:
    input:
        unpack(dataset_files),
    output:
        topics=f"{R}/{{dataset}}/data/topics.tsv",
        qrels=f"{R}/{{dataset}}/data/qrels.human.txt",
    params:
        spec=dataset_spec,
    log:
        f"{R}/logs/{{dataset}}/dataset.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/prepare_dataset.py"
