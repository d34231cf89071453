package rls

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Under a flood of failures the default log writes one line per cause a
// minute, the next counting those left out; a decision skipped while the
// backend is marked down is not logged.
func TestFailureLogIsBounded(t *testing.T) {
	var out bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var now time.Time
	l := newFailureLog(func() time.Time { return now })
	timeout := fmt.Errorf("%w: %w", limiter.ErrBackend, context.DeadlineExceeded)
	down := fmt.Errorf("%w: %w", limiter.ErrBackend, limiter.ErrUnavailable)
	for _, at := range []time.Duration{0, time.Second, 2 * time.Second, time.Minute, time.Minute + time.Second} {
		now = start.Add(at)
		l.failure(timeout)
		l.failure(down)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "suppressed=0") || !strings.Contains(lines[1], "suppressed=2") ||
		!strings.Contains(lines[1], "cause=timeout") {
		t.Errorf("logged %q, want two timeout lines, the second counting 2 left out", lines)
	}
}
