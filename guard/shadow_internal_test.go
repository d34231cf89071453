package guard

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// A shadow rule's would-be refusals are logged at most once a minute per
// rule, the next line counting those left out; a shadow rule that allows
// and an enforced rule's refusal are not logged here.
func TestShadowLogIsBounded(t *testing.T) {
	rec := logtest.Capture(t)
	start := time.Date(2245, 1, 1, 12, 0, 0, 0, time.UTC)
	var now time.Time
	m := &Guard[*http.Request]{logs: newLogs(func() time.Time { return now })}
	refused := limiter.RuleResult{Shadow: true, Result: algorithms.Result{RetryAfter: 30 * time.Second}}
	type line struct {
		at         time.Duration
		rule       string
		suppressed int64
	}
	var got []line
	for _, step := range []struct {
		at    time.Duration
		rules []string // the shadow rules that would refuse
	}{
		{0, []string{"a"}}, {time.Second, []string{"a", "b"}}, {59 * time.Second, []string{"a"}},
		{time.Minute, []string{"a", "b"}}, {2 * time.Minute, nil}, {2 * time.Minute, []string{"a", "b"}},
	} {
		now = start.Add(step.at)
		d := limiter.Decision{Allowed: true, Results: []limiter.RuleResult{
			{Rule: "enforced", Result: algorithms.Result{RetryAfter: time.Second}},
			{Rule: "allows", Shadow: true, Result: algorithms.Result{Allowed: true}},
		}}
		for _, r := range step.rules {
			res := refused
			res.Rule = r
			d.Results = append(d.Results, res)
		}
		n := len(rec.Records())
		m.logShadow(httptest.NewRequest("GET", "/users/alice", nil), d)
		for _, r := range rec.Records()[n:] {
			attrs := logtest.Attrs(r)
			if r.Level != slog.LevelInfo || attrs["retry_after"].Duration() != 30*time.Second {
				t.Errorf("line %v %v", r.Level, attrs)
			}
			got = append(got, line{at: step.at, rule: attrs["rule"].String(), suppressed: attrs["suppressed"].Int64()})
		}
	}
	want := []line{
		{0, "a", 0},
		{time.Second, "b", 0},
		{time.Minute, "a", 2},
		{2 * time.Minute, "a", 0},
		{2 * time.Minute, "b", 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("logged %+v, want %+v", got, want)
	}
}
