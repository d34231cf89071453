package demo

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serving starts Serve on a free address with a handler that signals
// entered and waits for release, and sends one request to it; it returns
// the address, Serve's result and the response's body (or error).
func serving(t *testing.T, ctx context.Context, entered chan<- struct{}, release <-chan struct{}, finished *atomic.Bool) (string, <-chan error, <-chan string) {
	t.Helper()
	addr := freeAddr(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "done")
		finished.Store(true)
	})
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, addr, h) }()
	body := make(chan string, 1)
	go func() {
		for range 1000 { // until the server listens
			res, err := http.Get("http://" + addr + "/")
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			body <- string(b)
			return
		}
		body <- "never served"
	}()
	return addr, served, body
}

// TestServeLetsRequestsFinish: Serve returns once the requests under way
// when its context ended have finished, not as soon as the listener
// closes (a program then closes its limits and Redis, and exits, under
// them); a request still running after the 5 s grace period makes it
// return an error, not nil.
func TestServeLetsRequestsFinish(t *testing.T) {
	t.Run("finishes", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		entered, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		addr, served, body := serving(t, ctx, entered, release, &finished)
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatal("the request never reached the handler")
		}
		cancel()
		for range 100000 { // until the listener is closed: the shutdown has begun
			c, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			c.Close()
		}
		close(release)
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
			if !finished.Load() {
				t.Error("Serve returned before the request under way had finished")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Serve never returned")
		}
		if got := <-body; got != "done" {
			t.Errorf("response %q, want done", got)
		}
	})
	t.Run("outlives the grace period", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		entered, release := make(chan struct{}), make(chan struct{})
		defer close(release)
		var finished atomic.Bool
		_, served, _ := serving(t, ctx, entered, release, &finished)
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatal("the request never reached the handler")
		}
		cancel()
		select {
		case err := <-served:
			if err == nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Serve: %v, want the shutdown's deadline exceeded", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Serve never returned")
		}
	})
}
