package rls_test

import (
	"context"
	"math"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// hugeHitsConfig has a limit of each algorithm.
const hugeHitsConfig = `
domain: edge
descriptors:
  - key: fixed
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: sliding
    rate_limit: {unit: minute, requests_per_unit: 5, algorithm: sliding_window}
  - key: log
    rate_limit: {unit: minute, requests_per_unit: 5, algorithm: sliding_log}
  - key: token
    rate_limit: {unit: minute, requests_per_unit: 5, algorithm: token_bucket}
  - key: leaky
    rate_limit: {unit: minute, requests_per_unit: 5, algorithm: leaky_bucket}
  - key: gcra
    rate_limit: {unit: minute, requests_per_unit: 5, algorithm: gcra}
  - key: zero
    rate_limit: {unit: minute, requests_per_unit: 0}
  - key: free
    rate_limit: {unlimited: true}
`

// TestHugeHitsAddend: a descriptor's hits_addend is a uint64, and one
// above 2^32-1 (Envoy's from a byte count, say) is decided as any other,
// as the reference decides it: over every limit it exceeds, consuming
// nothing, and OK on a descriptor that no limit applies to or an
// unlimited one. It used to refuse the whole request as INVALID_ARGUMENT.
func TestHugeHitsAddend(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, hugeHitsConfig, rls.Options{})
		for _, n := range []uint64{1 << 32, 1 << 53, 1<<53 + 1, 1 << 63, math.MaxUint64} {
			for _, key := range []string{"fixed", "sliding", "log", "token", "leaky", "gcra", "zero"} {
				same(t, key+" over", summary(ask(t, c, hits(desc(key, "v"), n))), []any{over, over, uint32(0)})
			}
			// Two of them on one check: their sum is over too, and wraps nowhere.
			same(t, "summed", summary(ask(t, c, hits(desc("fixed", "w"), n), hits(desc("fixed", "w"), n))),
				[]any{over, over, uint32(0), over, uint32(0)})
			same(t, "unmatched and unlimited", summary(ask(t, c, hits(desc("other", "v"), n), hits(desc("free", "v"), n))),
				[]any{ok, ok, uint32(0), ok, uint32(math.MaxUint32)})
			res, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "elsewhere",
				Descriptors: []*ratelimitv3.RateLimitDescriptor{hits(desc("fixed", "v"), n)}})
			if err != nil || res.OverallCode != ok {
				t.Fatalf("unknown domain, %d hits: %v, %v; want OK", n, res, err)
			}
		}
		// Nothing was consumed.
		for _, key := range []string{"fixed", "sliding", "log", "token", "leaky", "gcra"} {
			same(t, key+" after", summary(ask(t, c, desc(key, "v"))), []any{ok, ok, uint32(4)})
		}
	})
}

// TestFileHitsAbove32Bits: a rules file's limit may be above 2^32-1, and
// hits above 2^32-1 that it admits are admitted.
func TestFileHitsAbove32Bits(t *testing.T) {
	_, _, c := serveFile(t, `
rules:
  - name: bytes
    key: {descriptor: k}
    fixed_window: 10000000000/1h
stacks:
  - name: edge
    domain: edge
    rules: [bytes]
`)
	same(t, "first", summary(ask(t, c, hits(desc("k", "v"), 6_000_000_000))), []any{ok, ok, uint32(4_000_000_000)})
	same(t, "second", summary(ask(t, c, hits(desc("k", "v"), 6_000_000_000))), []any{over, over, uint32(0)})
}
