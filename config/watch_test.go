package config_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// onceThenFine fails t unless the hook heard an error, then nil, and
// nothing else.
func (r *reports) onceThenFine(t *testing.T) {
	t.Helper()
	got := r.list()
	if len(got) != 2 || got[0] == nil || got[1] != nil {
		var failed []error
		for _, err := range got {
			if err != nil {
				failed = append(failed, err)
			}
		}
		t.Errorf("the hook heard %d reports, %d of them errors (%v), want an error once, then a successful reload", len(got), len(failed), failed[:min(1, len(failed))])
	}
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

// swap makes path a symbolic link to target at once, as a ConfigMap
// update does.
func swap(t *testing.T, path, target string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestWatchReadsAnUnreadableFileAgain: a file Watch cannot read is
// reported to the hook once, not at every tick, and read again at every
// tick, so that it is reloaded once it can be read: a path that leads to
// a directory, then to a valid file; and a file at mode 000 (unreadable
// but to a privileged user), then readable again with its size and time
// unchanged.
func TestWatchReadsAnUnreadableFileAgain(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		var heard reports
		limits, path := load(t, memstore.Must(), version("u", 1), config.WithReloadHook(heard.hook))
		dir := filepath.Dir(path)
		if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "next.yaml"), version("u", 2))
		watch(t, limits, time.Millisecond)
		swap(t, path, "d")
		waitFor(t, "the report of the directory", func() bool { return len(heard.list()) > 0 })
		time.Sleep(100 * time.Millisecond) // ticks meanwhile read it again
		swap(t, path, "next.yaml")
		waitFor(t, "the reload of the valid file", func() bool { got := heard.list(); return got[len(got)-1] == nil })
		heard.onceThenFine(t)
	})
	t.Run("mode 000", func(t *testing.T) {
		var heard reports
		limits, path := load(t, memstore.Must(), version("u", 1), config.WithReloadHook(heard.hook))
		write(t, path, version("u", 22))
		if err := os.Chmod(path, 0); err != nil {
			t.Fatal(err)
		}
		if f, err := os.Open(path); err == nil {
			f.Close()
			t.Skip("this user reads a file at mode 000")
		}
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		watch(t, limits, time.Millisecond)
		waitFor(t, "the report of the unreadable file", func() bool { return len(heard.list()) > 0 })
		time.Sleep(100 * time.Millisecond) // ticks meanwhile read it again
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("chmod changed the file's size or time: %v, %v", after, err)
		}
		waitFor(t, "the reload of the file readable again", func() bool { got := heard.list(); return got[len(got)-1] == nil })
		heard.onceThenFine(t)
	})
}

// TestWatchWithoutInterval: an interval of 0 means a second: Watch
// neither panics nor waits much longer than that to see a change.
func TestWatchWithoutInterval(t *testing.T) {
	var heard reports
	limits, path := load(t, memstore.Must(), version("w0", 0), config.WithReloadHook(heard.hook))
	write(t, path, version("w0", 10))
	watch(t, limits, 0)
	waitFor(t, "the reload, watching without an interval", func() bool { return len(heard.list()) > 0 })
	if got := heard.list(); len(got) != 1 || got[0] != nil {
		t.Errorf("the hook heard %v, want one successful reload", got)
	}
}

// TestWatchStopsOnClose: Watch returns once the Limits are closed, without
// waiting for its next tick: no goroutine is left watching a closed file.
func TestWatchStopsOnClose(t *testing.T) {
	limits, _ := load(t, memstore.Must(), version("c", 1))
	done := make(chan struct{})
	go func() {
		defer close(done)
		limits.Watch(context.Background(), time.Hour)
	}()
	time.Sleep(10 * time.Millisecond) // Watch waits for its tick
	if err := limits.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch still runs 5s after Close")
	}
}

// TestReloadAfterClose: Reload after Close changes nothing, reports
// nothing to the hook, and returns an error a caller can tell apart with
// errors.Is(err, fs.ErrClosed), as a closed file's read does.
func TestReloadAfterClose(t *testing.T) {
	var heard reports
	limits, path := load(t, memstore.Must(), version("rc", 1), config.WithReloadHook(heard.hook))
	if err := limits.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, path, version("rc", 2))
	err := limits.Reload()
	if !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Reload after Close: %v, want an error wrapping fs.ErrClosed", err)
	}
	if got := heard.list(); len(got) != 0 {
		t.Errorf("the hook heard %v after Close, want nothing", got)
	}
}
