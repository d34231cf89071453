package rls_test

import (
	"strconv"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// headerMap is res's response_headers_to_add by name; a name added twice
// fails the test.
func headerMap(t *testing.T, res *rlsv3.RateLimitResponse) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, h := range res.ResponseHeadersToAdd {
		if _, dup := m[h.Key]; dup {
			t.Fatalf("header %s added twice: %v", h.Key, res.ResponseHeadersToAdd)
		}
		m[h.Key] = h.Value
	}
	return m
}

// wantHeaders checks res's headers: limit and remaining as given; reset,
// on miniredis (whose clock is at 10:00:30), as given, and elsewhere the
// seconds, rounded up, of the duration_until_reset of the status at
// binding; Retry-After ("" for none) likewise, on redis-server within a
// second of the reset (the store's wait and the window's end are read at
// one instant, each rounded on its own).
func wantHeaders(t *testing.T, b backend, what string, res *rlsv3.RateLimitResponse, binding int, limit, remaining, reset, retry string) {
	t.Helper()
	h := headerMap(t, res)
	want := map[string]string{"RateLimit-Limit": limit, "RateLimit-Remaining": remaining, "RateLimit-Reset": reset}
	if retry != "" {
		want["Retry-After"] = retry
	}
	if b.mini == nil {
		d := res.Statuses[binding].DurationUntilReset.AsDuration()
		want["RateLimit-Reset"] = strconv.FormatInt(int64((d+999_999_999)/1e9), 10)
		if retry != "" {
			got, _ := strconv.Atoi(h["Retry-After"])
			if r, _ := strconv.Atoi(want["RateLimit-Reset"]); got < r-1 || got > r+1 {
				t.Errorf("%s: Retry-After %q, want within a second of the reset %d", what, h["Retry-After"], r)
			}
			want["Retry-After"] = h["Retry-After"]
		}
	}
	if len(h) != len(want) {
		t.Fatalf("%s: headers %v, want %v", what, h, want)
	}
	for k, v := range want {
		if h[k] != v {
			t.Fatalf("%s: headers %v, want %v", what, h, want)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	const day = "50370" // 10:00:30 to midnight
	eachBackend(t, func(t *testing.T, b backend) {
		c := serve(t, b, serverConfig, rls.Options{ResponseHeaders: true})
		api := func() *ratelimitv3.RateLimitDescriptor { return desc("tenant", "t1", "path", "/api/x") }

		res := ask(t, c, desc("remote_address", "a"), api(), desc("unknown", "x"))
		wantHeaders(t, b, "the least remaining", res, 1, "2", "1", "30", "")

		// Both at 0: the first.
		res = ask(t, c, hits(desc("remote_address", "a"), 2), api())
		wantHeaders(t, b, "equals", res, 0, "3", "0", day, "")

		// Both refuse: the longer wait, and Retry-After.
		res = ask(t, c, desc("remote_address", "a"), api())
		same(t, "both refuse", summary(res), []any{over, over, uint32(0), over, uint32(0)})
		wantHeaders(t, b, "both refuse", res, 0, "3", "0", day, day)

		// A refusal binds over a descriptor with fewer units left.
		res = ask(t, c, hits(desc("remote_address", "b"), 3), api())
		same(t, "one refuses", summary(res), []any{over, ok, uint32(3), over, uint32(0)})
		wantHeaders(t, b, "one refuses", res, 1, "2", "0", "30", "30")

		// Hits above the limit can never be admitted: no Retry-After.
		res = ask(t, c, hits(desc("remote_address", "c"), 4))
		wantHeaders(t, b, "never", res, 0, "3", "0", day, "")

		if res := ask(t, c, desc("unknown", "x"), desc("tenant", "t1", "path", "/health")); len(res.ResponseHeadersToAdd) != 0 {
			t.Errorf("no limit: headers %v, want none", res.ResponseHeadersToAdd)
		}

		if res := ask(t, serve(t, b, serverConfig, rls.Options{}), desc("remote_address", "d")); len(res.ResponseHeadersToAdd) != 0 {
			t.Errorf("not enabled: headers %v, want none", res.ResponseHeadersToAdd)
		}

		// Global shadow mode answers OK: the fields, but no Retry-After.
		shadow := serve(t, b, serverConfig, rls.Options{ResponseHeaders: true, ShadowMode: true})
		wantHeaders(t, b, "shadow mode", ask(t, shadow, desc("remote_address", "a")), 0, "3", "0", day, "")

		named := serve(t, b, serverConfig, rls.Options{ResponseHeaders: true, LimitHeader: "X-Limit", RemainingHeader: "X-Left", ResetHeader: "X-Reset"})
		h := headerMap(t, ask(t, named, desc("remote_address", "e")))
		if h["X-Limit"] != "3" || h["X-Left"] != "2" || h["X-Reset"] == "" || len(h) != 3 {
			t.Errorf("named headers %v, want X-Limit 3, X-Left 2, X-Reset", h)
		}
	})
}
