package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// Under a flood of requests without an identity the default error handler
// logs one line per rule a minute; the next line counts those left out. A
// rule's silence does not silence another's.
func TestKeyFailureLogIsBounded(t *testing.T) {
	var records []slog.Record
	prev := slog.Default()
	slog.SetDefault(slog.New(logRecorder{&records}))
	defer slog.SetDefault(prev)
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var now time.Time
	log := newErrorLog(func() time.Time { return now })
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
		n := len(records)
		log.handle(httptest.NewRequest("GET", "/", nil), fail(step.rule))
		for _, r := range records[n:] {
			l := line{at: step.at, level: r.Level}
			r.Attrs(func(a slog.Attr) bool {
				switch a.Key {
				case "rule":
					l.rule = a.Value.String()
				case "suppressed":
					l.suppressed = a.Value.Int64()
				}
				return true
			})
			got = append(got, l)
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

type logRecorder struct{ out *[]slog.Record }

func (h logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h logRecorder) Handle(_ context.Context, r slog.Record) error {
	*h.out = append(*h.out, r)
	return nil
}
func (h logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logRecorder) WithGroup(string) slog.Handler      { return h }
