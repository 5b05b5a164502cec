# Stage 0: model servers the workflow runs itself (`serve:` on a judge or ranker, instead of
# api_base). A service job: Snakemake runs it with every caller of its layer as one group job
# (one node; under Slurm the GPU node) and terminates it when they are done. See
# voirdire.llm.serve for what the job does, and voirdire.inputs (Inputs.served_input) for the layers.


rule serve:
    output:
        service(L.served("{server}", "{layer}")),
    log:
        L.log("serve/{server}.{layer}"),
    wildcard_constraints:
        server=one_of(SERVED),
        layer="[0-2]",
    conda:
        "../../envs/voirdire.yaml"
    threads: 1
    resources:
        gpu=lambda wildcards: SERVED[wildcards.server].gpus,
        mem_mb=lambda wildcards: SERVED[wildcards.server].mem_mb,
    params:
        python=sys.executable,
        spec=lambda wildcards: json.dumps(dataclasses.asdict(SERVED[wildcards.server])),
        server_log=L.log("serve/{server}.{layer}.server"),
    # a shell job, exec'd: Snakemake terminates a service that is a shell command, and the
    # SIGTERM then reaches the server's keeper, which stops the server
    shell:
        "exec {params.python:q} -m voirdire.llm.serve_job --spec {params.spec:q} "
        "--service-file {output:q} --server-log {params.server_log:q} > {log:q} 2>&1"
