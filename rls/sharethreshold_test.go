package rls_test

import (
	"fmt"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

const shareConfig = `
domain: edge
descriptors:
  - key: files
    value: files/*
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: own
    value: own/*
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: tenant
    value: t/*
    share_threshold: true
    descriptors:
      - key: path
        rate_limit: {unit: hour, requests_per_unit: 2}
`

// TestShareThreshold: the values a prefix with share_threshold matches
// share one count (the reference's integration case), at any depth; a
// prefix without it counts each value on its own.
func TestShareThreshold(t *testing.T) {
	c := serve(t, miniBackend(t), shareConfig, rls.Options{})
	for i := range 3 {
		same(t, "shared", summary(ask(t, c, desc("files", fmt.Sprintf("files/%d.pdf", i)))), []any{ok, ok, uint32(2 - i)})
	}
	same(t, "shared, spent", summary(ask(t, c, desc("files", "files/other.csv"))), []any{over, over, uint32(0)})
	for i := range 4 {
		same(t, "own counts", summary(ask(t, c, desc("own", fmt.Sprintf("own/%d", i)))), []any{ok, ok, uint32(2)})
	}
	same(t, "nested, first tenant", summary(ask(t, c, desc("tenant", "t/a", "path", "/x"))), []any{ok, ok, uint32(1)})
	same(t, "nested, second tenant shares", summary(ask(t, c, desc("tenant", "t/b", "path", "/x"))), []any{ok, ok, uint32(0)})
	same(t, "nested, spent", summary(ask(t, c, desc("tenant", "t/c", "path", "/x"))), []any{over, over, uint32(0)})
	same(t, "nested, another path counts apart", summary(ask(t, c, desc("tenant", "t/c", "path", "/y"))), []any{ok, ok, uint32(1)})
}
