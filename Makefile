# All set-up happens here: a fresh clone needs only `make demo` or `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint samples bench lab clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@# PYTHONWARNINGS: setuptools' note that an editable install maps adfkit.notebooks and
	@# adfkit.sample_agents onto the repository's folders is expected here, not a problem.
	PYTHONWARNINGS="ignore::UserWarning" $(BIN)/python -m pip install -q -e ".[all]"
	touch $(STAMP)

SESSION := sample_agents/claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl

demo: $(STAMP)
	$(BIN)/adfkit info sample_agents/long-runner.adf
	@echo
	$(BIN)/adfkit info $(SESSION)
	@mkdir -p build/plots
	@# every sample: the ADF agents, the Claude Code sessions and the Codex rollouts; the warning
	@# about the session shown above is not repeated
	@MPLBACKEND=Agg $(BIN)/adfkit plot sample_agents/*.adf sample_agents/claude-code/projects/*/*.jsonl \
	  sample_agents/codex/sessions/*/*/*/*.jsonl* --kind all -o build/plots >/dev/null 2>build/plots.log; \
	  s=$$?; grep -v "$(SESSION): 1 problem" build/plots.log; rm -f build/plots.log; exit $$s
	@echo "plots: build/plots/ ($$(ls build/plots | wc -l) PNG files, every sample agent)"
	@# the report's progress goes to stderr first; then its path, on a line of its own
	@out=$$($(BIN)/adfkit report sample_agents/long-runner.adf -o build/demo/long-runner-report.html) \
	  && echo "report: $$out"
	@echo
	@echo "Next: open build/demo/long-runner-report.html in a browser, look at build/plots/,"
	@echo "or run 'make lab' to explore the notebooks in JupyterLab."

lint: $(STAMP)
	$(BIN)/ruff check adfkit adfsynth tests benchmarks
	$(BIN)/ruff format --check adfkit adfsynth tests benchmarks
	$(BIN)/mypy

test: lint
	MPLBACKEND=Agg $(BIN)/python -m pytest -q

samples: $(STAMP)
	$(BIN)/python -m adfsynth sample_agents/

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)

clean:
	rm -rf build .pytest_cache
