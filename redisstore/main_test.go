package redisstore_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
)

// TestMain stops the shared cluster (see sharedCluster), then fails the
// package when a test left a goroutine behind.
func TestMain(m *testing.M) {
	code := m.Run()
	shared.tb.cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// shared is the cluster sharedCluster returns, or why it did not start.
var shared struct {
	once sync.Once
	tb   packageTB
	c    *redistest.Cluster
	end  *ended // the start's Fatal or Skip
}

// sharedCluster is a Redis Cluster of 3 masters and no replicas for the
// tests that need one but not a fresh one: they neither stop, fail over
// nor reconfigure its nodes, nor move its slots (a node they pause they
// unpause). The first test that asks starts it, TestMain stops it, and
// every test finds it flushed. A cluster takes over 2 s to start (a master
// waits 2 s after its start before it serves).
func sharedCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	shared.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				e, ok := r.(ended)
				if !ok {
					panic(r)
				}
				shared.end = &e
			}
		}()
		shared.c = redistest.StartCluster(&shared.tb, 3, 0)
	})
	switch {
	case shared.end != nil && shared.end.skip:
		t.Skip(shared.end.msg)
	case shared.end != nil:
		t.Fatalf("shared cluster: %s", shared.end.msg)
	}
	for _, n := range shared.c.Nodes {
		if err := n.Client.FlushAll(ctx).Err(); err != nil {
			t.Fatalf("FLUSHALL on %s: %v", n.Addr, err)
		}
	}
	return shared.c
}

// packageTB is the testing.TB of a fixture that outlives the test that
// starts it, with the methods redistest.StartCluster calls: its cleanups
// run when TestMain calls cleanup, its temporary directories are removed
// then, and a Fatal or Skip ends the start with a panic of ended.
type packageTB struct {
	testing.TB // nil: only the methods below may be called
	cleanups   []func()
}

// ended is a packageTB's Fatal or Skip.
type ended struct {
	msg  string
	skip bool
}

func (*packageTB) Helper()                           {}
func (p *packageTB) Cleanup(f func())                { p.cleanups = append(p.cleanups, f) }
func (*packageTB) Fatal(args ...any)                 { panic(ended{msg: fmt.Sprint(args...)}) }
func (*packageTB) Fatalf(format string, args ...any) { panic(ended{msg: fmt.Sprintf(format, args...)}) }
func (*packageTB) Skipf(format string, args ...any) {
	panic(ended{msg: fmt.Sprintf(format, args...), skip: true})
}

func (p *packageTB) TempDir() string {
	dir, err := os.MkdirTemp("", "redisstore-test")
	if err != nil {
		p.Fatal(err)
	}
	p.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanup runs the cleanups, the last registered first.
func (p *packageTB) cleanup() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
}
