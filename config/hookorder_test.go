package config_test

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestReloadHookInOrder: the reload hook is called for one reload at a
// time, in the order of the reloads, also when they run on two goroutines
// (Watch's and a SIGHUP's): a hook still reporting a failed reload is not
// entered again for the next one, and the last call it gets is the
// outcome of the last reload, so a "last reload succeeded" gauge tells
// the truth. A reload does not wait for the hook of another.
func TestReloadHookInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	write(t, path, version("order", 0))
	var (
		inside, overlaps atomic.Int32
		mu               sync.Mutex
		heard            []bool // failed, per call
	)
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	limits, err := config.Load(path, memstore.Must(), config.WithReloadHook(func(err error) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inside.Add(-1)
		mu.Lock()
		heard = append(heard, err != nil)
		mu.Unlock()
		if calls.Add(1) == 1 { // the first report, the failure, takes its time
			close(entered)
			<-release
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer limits.Close()
	failed := make(chan error, 1)
	go func() {
		write(t, path, "rules: [")
		failed <- limits.Reload()
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the hook never heard the failed reload")
	}
	write(t, path, version("order", 1))
	reloaded := make(chan error, 1)
	go func() { reloaded <- limits.Reload() }()
	select {
	case err := <-reloaded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a reload waited for the hook of another")
	}
	close(release)
	if err := <-failed; err == nil {
		t.Fatal("the invalid file reloaded")
	}
	for range 5000 { // until the second reload is reported
		mu.Lock()
		n := len(heard)
		mu.Unlock()
		if n >= 2 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if overlaps.Load() != 0 {
		t.Errorf("the hook was entered %d times while it ran", overlaps.Load())
	}
	if len(heard) != 2 || !heard[0] || heard[1] {
		t.Errorf("hook heard failed = %v, want [true false]", heard)
	}
}
