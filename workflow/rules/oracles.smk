# Stage 3 (SPEC section 2, paper section 4.2.3): Perfect and Swap[...] oracles over the pool.


rule oracle:
    input:
        pool=f"{R}/{{dataset}}/runs/original/bm25.run",
        qrels=f"{R}/{{dataset}}/data/qrels.human.txt",
    output:
        f"{R}/{{dataset}}/runs/{{provenance}}/{{oracle}}.run",
    params:
        tie_break=config["oracles"]["tie_break"],
        seed=config["oracles"]["seed"],
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/oracle-{{oracle}}.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/oracle.py"
