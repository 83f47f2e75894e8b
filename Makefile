# All set-up happens here: a fresh clone needs only `make demo` or `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test chromium lint samples bench lab clean record docs

#: The editable install with every extra. uv installs the same versions as pip, bytecode
#: compiled as pip compiles it, in less than half the time (23 s from a cold cache against
#: about 50 s here: it fetches, unpacks and compiles in parallel); where uv cannot be had or
#: cannot reach an index (it reads no pip.conf), pip does it.
$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@# PYTHONWARNINGS: setuptools' note that an editable install maps adfkit.notebooks and
	@# adfkit.sample_agents onto the repository's folders is expected here, not a problem.
	$(BIN)/python -m pip install -q uv && PYTHONWARNINGS="ignore::UserWarning" \
	  $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e ".[all]" pip \
	  || { $(BIN)/python -m pip install -q --upgrade pip && \
	  PYTHONWARNINGS="ignore::UserWarning" $(BIN)/python -m pip install -q -e ".[all]"; }
	touch $(STAMP)

SESSION := sample_agents/claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl

#: One sample of each other format present in sample_agents/ (tools/one_per_format.py: every
#: format the registry knows that has a sample there; an input of several agents by its first).
OTHERS = $$($(BIN)/python -m tools.one_per_format sample_agents --skip adf,claude_code)
#: Every sample agent, of every format: the folder, found by the one discovery rule.
ALL_SAMPLES := sample_agents

demo: $(STAMP)
	$(BIN)/adfkit info sample_agents/long-runner.adf
	@echo
	$(BIN)/adfkit info $(SESSION)
	@for f in $(OTHERS); do echo; $(BIN)/adfkit info "$$f" || exit 1; done
	@mkdir -p build/plots
	@# every sample of every format; the warnings about half-written last lines (the samples
	@# are written so, as a running agent leaves them) are not repeated here
	@MPLBACKEND=Agg $(BIN)/adfkit plot $(ALL_SAMPLES) --kind all -o build/plots >/dev/null \
	  2>build/plots.log; s=$$?; grep -v "problem(s) reading" build/plots.log; \
	  rm -f build/plots.log; exit $$s
	@echo "plots: build/plots/ ($$(ls build/plots | wc -l) PNG files, every sample agent of every format)"
	@# the plain HTML report (no kernel); its path, on a line of its own
	@out=$$($(BIN)/adfkit report sample_agents/long-runner.adf -o build/demo/long-runner-report.html) \
	  && echo "report: $$out"
	@echo
	@echo "Next: open build/demo/long-runner-report.html in a browser, look at build/plots/,"
	@echo "or run 'make lab' to explore the notebooks in JupyterLab."

CODE := adfkit adfsynth tests benchmarks tools

lint: $(STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/mypy

#: ruff first; then mypy beside the tests, not before them (half a minute on one core from a
#: cold cache, while the other waited): either failing fails `make test`, and mypy's report
#: is printed after the tests'. The tests: one worker per core (pytest-xdist), each test file
#: on one worker (a file's slow jobs, notebook kernels, reports, the wheel's venv, are
#: started by its own fixtures, once).
test: $(STAMP) chromium
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	@mkdir -p build
	@$(BIN)/mypy > build/mypy.log 2>&1 & m=$$!; \
	  MPLBACKEND=Agg $(BIN)/python -m pytest -q -n auto --dist loadfile; t=$$?; \
	  wait $$m; s=$$?; echo "$(BIN)/mypy"; cat build/mypy.log; rm -f build/mypy.log; \
	  [ $$t -eq 0 ] && [ $$s -eq 0 ]

#: The documentation site into build/site (strict: a broken reference fails it).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

#: Chromium for the browser tests (tests/test_browser.py drives JupyterLab in it), found as
#: they look for it ($$ADFKIT_CHROMIUM, then chromium or chromium-browser on the PATH) or
#: installed from Debian as .ci/run does, when this runs as root with apt-get (the machines
#: reach only package registries: Playwright's own browser download would fail). Otherwise a
#: note says the browser tests will be skipped, and how to get them.
chromium:
	@[ -n "$$ADFKIT_CHROMIUM" ] || command -v chromium >/dev/null || \
	  command -v chromium-browser >/dev/null || \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Chromium for the browser tests (apt-get install chromium)"; \
	    { apt-get install -y -qq chromium >/dev/null 2>&1 || \
	      { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; } \
	    || echo "Chromium could not be installed: the browser tests will be skipped"; \
	  else \
	    echo "no Chromium: the browser tests (tests/test_browser.py) will be skipped;" \
	      "apt-get install chromium (as root), or set ADFKIT_CHROMIUM to a Chromium"; \
	  fi

samples: $(STAMP)
	$(BIN)/python -m adfsynth sample_agents/

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)

clean:
	rm -rf build .pytest_cache

#: Record every agent's current release against the scripted model server (tools/record):
#: `make record`, or one agent: `make record AGENT=codex`. Needs the npm registry; not part of
#: `make test`, which tests the recordings committed under tests/fixtures/recorded/.
record: $(STAMP)
	$(BIN)/python -m tools.record $(AGENT)
