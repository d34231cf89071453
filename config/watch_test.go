package config_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// reports are what a reload hook heard, in order.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) hook(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *reports) list() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// watch runs limits.Watch(ctx, interval) until the test ends, and waits
// for it to return then.
func watch(t *testing.T, limits *config.Limits, interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		limits.Watch(ctx, interval)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestWatchSeesAWriteInPlace: a file written in place (the same file, not
// a new one renamed over it) is reloaded when its size changed, though
// its modification time did not, and when its modification time changed,
// though its size did not.
func TestWatchSeesAWriteInPlace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		next     int           // the version written in place of version 1
		mtimeBy  time.Duration // how far the modification time moves
		sameSize bool
	}{
		{"size", 22, 0, false},
		{"mtime", 2, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var heard reports
			limits, path := load(t, memstore.Must(), version("w", 1), config.WithReloadHook(heard.hook))
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			// Written before Watch starts, so that it never reads a
			// half-written file.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(version("w", tc.next)); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			mtime := before.ModTime().Add(tc.mtimeBy)
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(before, after) || (after.Size() == before.Size()) != tc.sameSize || !after.ModTime().Equal(mtime) {
				t.Fatalf("the write is not the one meant: same file %v, size %d then %d, modified %v then %v",
					os.SameFile(before, after), before.Size(), after.Size(), before.ModTime(), after.ModTime())
			}
			watch(t, limits, time.Millisecond)
			waitFor(t, "the reload of the file written in place", func() bool { return len(heard.list()) > 0 })
			if got := heard.list(); len(got) != 1 || got[0] != nil {
				t.Errorf("the hook heard %v, want one successful reload", got)
			}
		})
	}
}
