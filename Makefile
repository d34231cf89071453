GO ?= go

.PHONY: test vet lint bench run

# test: vet and gofmt, then every package with the race detector, shuffled,
# uncached. Real-Redis tests start their own servers on free loopback ports.
test: lint
	$(GO) test -race -shuffle=on -count=1 ./...

vet:
	$(GO) vet ./...

lint: vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=2000x ./...

# run: the stdlib example server on :8080 (in-process miniredis unless REDIS_URL is set).
run:
	$(GO) run ./examples/stdlib
