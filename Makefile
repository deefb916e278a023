# rlsweep — see README.md. Every target installs the pinned tools it needs (cached after the first run).
GO        ?= go
BIN       := bin/rlsweep
TOOLS     := scripts/install-tools.sh
GOBIN_DIR := $(shell $(GO) env GOPATH)/bin

.PHONY: demo build test test-python test-short test-long test-corpus test-integration test-topology topology-up topology-down lint fuzz bench diagnostics-corpus clean

## demo: run a CartPole sweep end to end on a local Temporal dev server and artifact directory, print
## its best configurations; at a terminal the server and Web UI then stay up until Ctrl-C, without one
## (a pipe, CI) it exits
DEMO_SPEC  ?= examples/quickstart.yaml
DEMO_FLAGS ?=
demo: build
	$(TOOLS) temporal >/dev/null
	@if [ -t 0 ]; then set -x; $(BIN) dev $(DEMO_FLAGS) $(DEMO_SPEC); \
	else set -x; $(BIN) dev --exit $(DEMO_FLAGS) $(DEMO_SPEC); fi

build:
	$(GO) build -o $(BIN) ./cmd/rlsweep

## test: everything CI runs: lint, the Python package's tests, unit and long tests, integration tests on real components, and the
## topology tier (root only: as another user it is skipped with a message, unless CI=true, where that
## is an error)
test: lint test-python test-long test-corpus test-integration test-topology

## test-python: the rlsweep Python package's tests (python/tests) and examples/torch-ppo's, under Debian's
## /usr/bin/python3 with python3-torch (scripts/install-python-deps.sh installs what is missing)
test-python:
	scripts/install-python-deps.sh
	/usr/bin/python3 -m unittest discover -s python/tests
	cd examples/torch-ppo && /usr/bin/python3 -m unittest test_torch_ppo

## test-short: the hermetic, fast tier
test-short:
	$(GO) test -short -count=1 ./...

## test-long: adds long numeric runs (PPO learning CartPole and Pendulum)
test-long:
	$(GO) test -timeout 40m -count=1 ./...

## test-integration: a real Temporal dev server, worker and trainer processes, kills
test-integration:
	$(TOOLS) temporal >/dev/null
	$(TOOLS) minio >/dev/null
	scripts/install-python-deps.sh
	$(TOOLS) chromium >/dev/null
	$(GO) test -tags integration -timeout 45m -count=1 ./integration/...

## topology-up / topology-down: docker-compose.yml's topology as plain processes on this machine
## (PostgreSQL, the Temporal server and Web UI, MinIO, a control and a GPU-class worker; docs/deploy.md)
topology-up:
	scripts/topology.sh up

topology-down:
	scripts/topology.sh down

## test-topology: that topology with each worker in a network namespace of its own, and faults across
## the network (root, iproute2; builds the Temporal server once, cached; about 16-19 minutes).
## TOPOLOGY_RUN selects tests (go test -run); RLSWEEP_TOPOLOGY_BENCH=1 adds the orchestration benchmark
## against the dev server (TestOrchestrationBenchmark, docs/deploy.md)
test-topology:
	@if [ "$$(id -u)" != 0 ]; then \
		if [ -n "$$CI" ] && [ "$$CI" != false ]; then echo "test-topology: CI=$$CI but running as $$(id -un), not root: the topology tier needs root (network namespaces, PostgreSQL as user postgres) and CI must run it"; exit 1; fi; \
		echo "test-topology: SKIPPED, not root (it creates network namespaces and runs PostgreSQL as user postgres); run 'sudo make test-topology' for it"; \
		exit 0; \
	fi; \
	set -x; \
	$(TOOLS) temporal-server temporal-sql-tool temporal-schema temporal-ui temporal-ui-config postgresql iproute2 minio >/dev/null && \
	$(GO) test -tags topology -timeout 35m -count=1 -v $(if $(TOPOLOGY_RUN),-run '$(TOPOLOGY_RUN)') ./infra/topology/...

lint:
	$(TOOLS) staticcheck >/dev/null
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...
	$(GO) vet -tags topology ./infra/topology/...
	$(GOBIN_DIR)/staticcheck ./...
	$(GOBIN_DIR)/staticcheck -tags integration ./integration/...
	$(GOBIN_DIR)/staticcheck -tags topology ./infra/topology/...

## fuzz: each fuzz target for FUZZTIME (default 60s)
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./sweeps -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	for f in FuzzParseJSONLine FuzzJSONLTail FuzzTensorBoardTail FuzzDecodeEvent FuzzRSLRLConsole FuzzSB3Console FuzzCSVTail; do \
		$(GO) test ./metrics -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done
	$(GO) test ./artifacts -run '^$$' -fuzz '^FuzzKeys$$' -fuzztime $(FUZZTIME)

## diagnostics-corpus: replay the corpus of real training logs (diagnostics/corpus/README.md) through
## `rlsweep diagnose` and print which runs the rules stop; RLSWEEP_CORPUS names its directory (default:
## the corpus folder CI keeps beside the clone; a relative path is taken from here)
RLSWEEP_CORPUS ?= ../shared/corpus/diagnostics
CORPUS_DIR := $(abspath $(RLSWEEP_CORPUS))
diagnostics-corpus:
	@test -f "$(CORPUS_DIR)/manifest.tsv" || { echo "RLSWEEP_CORPUS=$(RLSWEEP_CORPUS) ($(CORPUS_DIR)): want the corpus directory, holding manifest.tsv and the runs it names (diagnostics/corpus/README.md)"; exit 2; }
	@out=$$(RLSWEEP_CORPUS=$(CORPUS_DIR) $(GO) test -count=1 -run '^TestDiagnosticsCorpus$$' -v ./cmd/rlsweep 2>&1); \
	status=$$?; printf '%s\n' "$$out" | sed -n '/corpus_test.go/,$$p'; exit $$status

## test-corpus: diagnostics-corpus when the corpus is here (CI has it beside the clone), with its
## counts in the log; otherwise says it skipped
test-corpus:
	@if [ -f "$(CORPUS_DIR)/manifest.tsv" ]; then $(MAKE) --no-print-directory diagnostics-corpus; \
	else echo "test-corpus: SKIPPED, no corpus at $(CORPUS_DIR) (set RLSWEEP_CORPUS; diagnostics/corpus/README.md)"; fi

## bench: the benchmarks recorded in docs/BENCHMARKS.md
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
