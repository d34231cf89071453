// Package logtest records what code under test logs with slog.
package logtest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
)

// Recorder is a slog.Handler that keeps every record, at every level.
type Recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

// Enabled implements slog.Handler: every level is recorded.
func (h *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (h *Recorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// WithAttrs implements slog.Handler; the attributes are not kept.
func (h *Recorder) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup implements slog.Handler; the group is not kept.
func (h *Recorder) WithGroup(string) slog.Handler { return h }

// Records returns what was recorded so far.
func (h *Recorder) Records() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.records...)
}

// Reset forgets what was recorded.
func (h *Recorder) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = nil
}

// Capture makes slog.Default record into a new Recorder until the test
// ends.
func Capture(t testing.TB) *Recorder {
	prev := slog.Default()
	rec := &Recorder{}
	slog.SetDefault(slog.New(rec))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return rec
}

// Attrs returns a record's attributes by key.
func Attrs(r slog.Record) map[string]slog.Value {
	attrs := make(map[string]slog.Value, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value
		return true
	})
	return attrs
}

// Count is how many of rec's records say msg, and their "error"
// attributes.
func Count(rec *Recorder, msg string) (n int, errs []string) {
	for _, r := range rec.Records() {
		if r.Message == msg {
			n++
			if e, ok := Attrs(r)["error"]; ok {
				errs = append(errs, e.String())
			}
		}
	}
	return n, errs
}
