GO ?= go
STATICCHECK_VERSION = v0.8.2
# staticcheck from the PATH (.ci/run installs it), else run at the pinned version.
STATICCHECK ?= $(shell command -v staticcheck || echo "$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)")

.PHONY: test vet lint bench leasesim run exports figure

# test: vet, gofmt, staticcheck and the module check (no nested module
# requires an undownloadable version or imports another module's
# internal/; no runtime package imports internal/testkit), then every
# package with the race detector, shuffled, the prommetrics, otelhook and
# grpclimit and rls modules too (modules of their own, so that
# their Prometheus, OpenTelemetry, gRPC and Envoy dependencies stay out of the
# library's go.mod; go.work builds them against this checkout),
# uncached. Real-Redis tests start their own servers on free loopback ports;
# packages run one at a time (-p 1) so the fault tests' timeouts measure
# Redis, not other packages competing for the CPU.
test: lint
	$(GO) test -race -shuffle=on -count=1 -p 1 ./...
	cd prommetrics && $(GO) test -race -shuffle=on -count=1 ./...
	cd otelhook && $(GO) test -race -shuffle=on -count=1 ./...
	cd grpclimit && $(GO) test -race -shuffle=on -count=1 ./...
	cd rls && $(GO) test -race -shuffle=on -count=1 ./...

vet:
	$(GO) vet ./...
	cd prommetrics && $(GO) vet ./...
	cd otelhook && $(GO) vet ./...
	cd grpclimit && $(GO) vet ./...
	cd rls && $(GO) vet ./...

lint: vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run ./internal/cmd/modcheck
	$(STATICCHECK) ./...
	cd benchmarks && $(STATICCHECK) ./...
	cd prommetrics && $(STATICCHECK) ./...
	cd otelhook && $(STATICCHECK) ./...
	cd grpclimit && $(STATICCHECK) ./...
	cd rls && $(STATICCHECK) ./...

# bench: the Go benchmarks (middleware path, memstore against x/time/rate and
# httprate), then a short run of the load tool against its own redis-server,
# its process mode too (each gRPC and HTTP server in a process of its own,
# with its CPU per call) (benchmarks/ is a separate module, so the peers
# never become dependencies), then a short run of the Envoy rate limit
# server against the reference server (rlsbench builds both; its full run
# is in docs/envoy.md, Benchmark).
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	cd benchmarks && $(GO) run ./cmd/ratebench -d 300ms -rounds 1 -memkeys 20000 -ctxtimeouts -procs
	cd benchmarks && $(GO) run ./cmd/rlsbench -d 2s -before 1s -down 2s -after 3s -termwait 5s

# leasesim: eight app instances sharing a leased global limit, then the
# same unleased, against a redis-server and a 3-master Cluster of its own
# (about 30 s; see docs/leases.md).
leasesim:
	cd benchmarks && $(GO) run ./cmd/leasesim

# run: the stdlib example server on :8080 (in-process miniredis unless REDIS_URL is set).
run:
	$(GO) run ./examples/stdlib

# exports: the library's exported names, counted (the budget, and why it
# grew, is maxExported in internal/cmd/exports/main_test.go).
exports:
	$(GO) run ./internal/cmd/exports -v

# figure: docs/algorithms.svg, drawn from the Go models.
figure:
	$(GO) run ./internal/cmd/figure > docs/algorithms.svg
