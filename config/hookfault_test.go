package config_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// hookPanicked is the message a hook's recovered panic is logged with.
const hookPanicked = "ratelimit: the reload hook panicked; reloads go on"

// swapTo makes path lead, at once, to a new file of version v of prefix.
func swapTo(t *testing.T, path, prefix string, v int) {
	t.Helper()
	next := fmt.Sprintf("%s.%d", path, v)
	write(t, next, version(prefix, v))
	swap(t, path, filepath.Base(next))
}

// inForce reports whether version v's own rule is in force.
func inForce(limits *config.Limits, v int) bool {
	_, err := limits.Status(context.Background(), fmt.Sprintf("other-%d", v), "127.0.0.1", "")
	return err == nil
}

// TestReloadHookPanics: a reload hook that panics is user code failing,
// not the program's end: the panic is recovered and logged (its value's
// type and where, never the value, which may hold anything the program
// has), Reload returns its own result, Watch goes on watching, and the
// hook hears the next reloads.
func TestReloadHookPanics(t *testing.T) {
	const secret = "user alice@example.com"
	panicky := func(heard *reports) func(error) {
		return func(err error) {
			heard.hook(err)
			panic(secret)
		}
	}
	checkLog := func(t *testing.T, rec *logtest.Recorder, want int) {
		t.Helper()
		n := 0
		for _, r := range rec.Records() {
			for _, v := range logtest.Attrs(r) {
				if strings.Contains(v.String(), "alice") {
					t.Errorf("log %q quotes the panic's value: %v", r.Message, v)
				}
			}
			if r.Message == hookPanicked {
				n++
			}
		}
		if n != want {
			t.Errorf("%d panics logged, want %d", n, want)
		}
	}
	t.Run("Reload", func(t *testing.T) {
		rec := logtest.Capture(t)
		var heard reports
		limits, path := load(t, memstore.Must(), version("p", 1), config.WithReloadHook(panicky(&heard)))
		reload := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("Reload panicked with the hook's panic: %v", p)
				}
			}()
			return limits.Reload()
		}
		write(t, path, "rules: [")
		if err := reload(); err == nil {
			t.Fatal("the invalid file reloaded")
		}
		write(t, path, version("p", 2))
		if err := reload(); err != nil {
			t.Fatal(err)
		}
		heard.onceThenFine(t)
		checkLog(t, rec, 2)
	})
	t.Run("Watch", func(t *testing.T) {
		rec := logtest.Capture(t)
		var heard reports
		limits, path := load(t, memstore.Must(), version("p", 1), config.WithReloadHook(panicky(&heard)))
		watch(t, limits, time.Millisecond)
		swapTo(t, path, "p", 2)
		waitFor(t, "the first reload's report", func() bool { return len(heard.list()) == 1 })
		swapTo(t, path, "p", 3)
		waitFor(t, "the second reload's report", func() bool { return len(heard.list()) == 2 })
		if got := heard.list(); got[0] != nil || got[1] != nil || !inForce(limits, 3) {
			t.Errorf("the hook heard %v, want two successful reloads, version 3 in force", got)
		}
		checkLog(t, rec, 2)
	})
}

// TestReloadHookBlocks: a reload hook that blocks holds up neither Watch,
// which goes on reloading the file and returns at Close, nor Close; once
// it returns, it hears the reloads made meanwhile, in order.
func TestReloadHookBlocks(t *testing.T) {
	var heard reports
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	limits, path := load(t, memstore.Must(), version("b", 1), config.WithReloadHook(func(err error) {
		heard.hook(err)
		once.Do(func() {
			close(entered)
			<-release
		})
	}))
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	done := make(chan struct{})
	go func() {
		defer close(done)
		limits.Watch(context.Background(), time.Millisecond)
	}()
	swapTo(t, path, "b", 2)
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the hook never heard the first reload")
	}
	swapTo(t, path, "b", 3)
	waitFor(t, "version 3 in force while the hook blocks", func() bool { return inForce(limits, 3) })
	closed := make(chan error, 1)
	go func() { closed <- limits.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for a blocked hook")
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Watch still runs after Close, held by a blocked hook")
	}
	unblock()
	waitFor(t, "the report of the reload made while the hook blocked", func() bool { return len(heard.list()) == 2 })
	if got := heard.list(); got[0] != nil || got[1] != nil {
		t.Errorf("the hook heard %v, want two successful reloads", got)
	}
}
