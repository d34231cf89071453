package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Under a flood of requests without an identity the default error handler
// logs one line per rule a minute; the next line counts those left out. A
// rule's silence does not silence another's.
func TestKeyFailureLogIsBounded(t *testing.T) {
	rec := logtest.Capture(t)
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var now time.Time
	log := newLogs(func() time.Time { return now })
	fail := func(rule string) error {
		return &keyError{rule: rule, err: fmt.Errorf("%w: header X-Api-Key", keyfunc.ErrNoKey)}
	}
	type line struct {
		at         time.Duration
		level      slog.Level
		rule       string
		suppressed int64
	}
	var got []line
	for _, step := range []struct {
		at   time.Duration
		rule string
	}{
		{0, "per-key"}, {time.Second, "per-key"}, {2 * time.Second, "per-user"}, {59 * time.Second, "per-key"},
		{time.Minute, "per-key"}, {time.Minute + time.Second, "per-key"}, {3 * time.Minute, "per-key"},
	} {
		now = start.Add(step.at)
		n := len(rec.Records())
		log.failure("GET /", fail(step.rule))
		for _, r := range rec.Records()[n:] {
			attrs := logtest.Attrs(r)
			got = append(got, line{at: step.at, level: r.Level, rule: attrs["rule"].String(), suppressed: attrs["suppressed"].Int64()})
		}
	}
	want := []line{
		{0, slog.LevelWarn, "per-key", 0},
		{2 * time.Second, slog.LevelWarn, "per-user", 0},
		{time.Minute, slog.LevelWarn, "per-key", 2},
		{3 * time.Minute, slog.LevelWarn, "per-key", 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("logged %+v, want %+v", got, want)
	}
	if !errors.Is(fail("r"), keyfunc.ErrNoKey) || fail("r").Error() != `rule "r": ratelimit: request has no key: header X-Api-Key` {
		t.Errorf("key error %q", fail("r"))
	}
}

// Under a flood of backend failures the default error handler logs one
// line per cause a minute, the next counting those left out, and a
// timeout's line names the option that sets the timeout (#44: 25 timeouts
// at 14k requests/s were 25 ERROR lines).
func TestFailureLogIsBoundedPerCause(t *testing.T) {
	rec := logtest.Capture(t)
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var now time.Time
	log := newLogs(func() time.Time { return now })
	timeout := fmt.Errorf("%w: %w", limiter.ErrBackend, context.DeadlineExceeded)
	refused := fmt.Errorf("%w: %w", limiter.ErrBackend, &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	type line struct {
		cause      string
		suppressed int64
		names      bool // the message names redisstore.WithTimeout
	}
	var got []line
	for _, step := range []struct {
		at  time.Duration
		err error
	}{
		{0, timeout}, {time.Millisecond, timeout}, {2 * time.Millisecond, refused}, {time.Second, timeout},
		{30 * time.Second, refused}, {time.Minute, timeout}, {time.Minute, timeout},
	} {
		now = start.Add(step.at)
		n := len(rec.Records())
		log.failure("GET /", step.err)
		for _, r := range rec.Records()[n:] {
			attrs := logtest.Attrs(r)
			if r.Level != slog.LevelError {
				t.Errorf("level %v", r.Level)
			}
			got = append(got, line{attrs["cause"].String(), attrs["suppressed"].Int64(), strings.Contains(r.Message, "redisstore.WithTimeout")})
		}
	}
	want := []line{{"timeout", 0, true}, {"refused", 0, false}, {"timeout", 2, true}}
	if !slices.Equal(got, want) {
		t.Errorf("logged %+v, want %+v", got, want)
	}
}
