package limiter

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/keypart"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

func TestHostileIdentitiesGetDistinctBoundedKeys(t *testing.T) {
	r := &rule{name: "per-ip"}
	ids := []string{
		"a", "A", "1.2.3.4", "2001:db8::/64", "user@example.com",
		"{", "}", "{a}", "a}b", "}{", "a{b}c", "per-ip:a", "#", "#00",
		"line\nbreak", "nul\x00byte", "\xff\xfe", "ünïcödé", " ", "a b",
		strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("y", 1<<20),
	}
	// The hashed form of an identity must not equal another identity's key.
	ids = append(ids, keypart.Identity("{a}"))
	seen := map[string]string{}
	for _, id := range ids {
		k := r.key("rl", id, "gc").String()
		if got, max := len(k), len("rl:{per-ip:}:gc")+keypart.MaxRawIdentity; got > max {
			t.Errorf("identity of %d bytes: key of %d bytes, want at most %d", len(id), got, max)
		}
		open, close := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		if open != 3 || strings.Count(k, "{") != 1 || strings.Count(k, "}") != 1 || !strings.HasPrefix(k[open+1:close], "per-ip:") || k[close:] != "}:gc" {
			t.Errorf("identity %q: key %q does not keep one hash tag {per-ip:...}", trunc(id), k)
		}
		if strings.ContainsAny(k, "\n\r\x00 ") {
			t.Errorf("identity %q: key %q holds control bytes or spaces", trunc(id), k)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("identities %q and %q share key %q", trunc(prev), trunc(id), k)
		}
		seen[k] = id
	}
}

func trunc(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

func TestRuleNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"per-ip", true}, {"api_v2.login", true}, {strings.Repeat("a", 64), true},
		{"", false}, {"a:b", false}, {"{a}", false}, {"a b", false}, {strings.Repeat("a", 65), false}, {"é", false},
	} {
		if got := keypart.ValidRuleName(tc.name); got != tc.want {
			t.Errorf("ValidRuleName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Algorithms whose state shares a key share its Reset mark, with one TTL
// long enough for every one of their give-backs (twice its window, at
// most exact.MaxDuration), so that a Reset through any of them voids the
// others' give-backs for as long as these can return anything; states
// under different keys have different marks. The buckets, GCRA and a
// queue, whose give-backs name their state's epoch, have none.
func TestResetMarkIsTheStateKeys(t *testing.T) {
	h, m := time.Hour, time.Minute
	algs := []algorithms.Algorithm{
		algorithms.FixedWindow{Limit: 4, Window: h}, algorithms.FixedWindow{Limit: 2, Window: h, Anchored: true}, algorithms.FixedWindow{Limit: 4, Window: m},
		algorithms.SlidingWindow{Limit: 4, Window: h}, algorithms.SlidingWindow{Limit: 2, Window: h},
		algorithms.SlidingLog{Limit: 4, Window: h}, algorithms.SlidingLog{Limit: 2, Window: h}, algorithms.SlidingLog{Limit: 2, Window: m},
		algorithms.Concurrency{Limit: 4, TTL: h}, algorithms.Concurrency{Limit: 2, TTL: h},
		algorithms.TokenBucket{Capacity: 4, Rate: 1, Period: h}, algorithms.TokenBucket{Capacity: 4, Rate: 2, Period: h},
		algorithms.LeakyBucket{Capacity: 4, Rate: 1, Period: h}, algorithms.LeakyBucket{Capacity: 2, Rate: 1, Period: h},
		algorithms.GCRA{Rate: 1, Period: m, Burst: 1}, algorithms.GCRA{Rate: 1, Period: 24 * h, Burst: 365}, algorithms.GCRA{Rate: 1, Period: exact.MaxDuration, Burst: 1},
		algorithms.Queue{Rate: 10, Period: time.Second}, algorithms.Queue{Rate: 1, Period: h, MaxDelay: exact.MaxDuration - h},
	}
	r := &rule{name: "api"}
	for _, a := range algs {
		for _, b := range algs {
			algA, algB := newAlgo(a), newAlgo(b)
			ka, kb := r.key("rl", "acme", algA.suffix), r.key("rl", "acme", algB.suffix)
			ma, mb := resetMark(ka, algA), resetMark(kb, algB)
			markA, ttlA, markB, ttlB := ma.Key, ma.TTL, mb.Key, mb.TTL
			switch {
			case algA.facts.Epochs != (ma == store.Mark{}):
				t.Errorf("%v (epochs %v): mark %+v", a, algA.facts.Epochs, ma)
			case algA.facts.Epochs || algB.facts.Epochs:
			case ka == kb && (markA != markB || ttlA != ttlB):
				t.Errorf("%v and %v share %s: marks %s for %v and %s for %v", a, b, ka, markA, ttlA, markB, ttlB)
			case ka == kb && ttlA < min(exact.MaxDuration, 2*algorithms.PolicyOf(b).Window):
				t.Errorf("%v and %v share %s: a mark of %v is shorter than twice %v's window", a, b, ka, ttlA, b)
			case ka != kb && markA == markB:
				t.Errorf("%v (%s) and %v (%s) share the mark %s", a, ka, b, kb, markA)
			}
		}
	}
}
