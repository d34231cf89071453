package ratelimit_test

import (
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// TestSoak holds a steady load through the middleware on a real Redis, in
// rounds of a fixed number of requests, and checks that goroutines and
// heap stay flat from the first round on and that every request is
// decided: 4 rounds of 3,200 requests always, 13 rounds of 120,000 with
// RATELIMIT_SOAK=1.
func TestSoak(t *testing.T) {
	t.Run("short", func(t *testing.T) { soak(t, 4, 400) })
	t.Run("long", func(t *testing.T) {
		if os.Getenv("RATELIMIT_SOAK") != "1" {
			t.Skip("set RATELIMIT_SOAK=1 for the long soak")
		}
		soak(t, 13, 15_000)
	})
}

// soak sends rounds rounds of perRound requests from each of 8 goroutines,
// from 2,000 client addresses, to a per-IP limit on a real Redis. After
// each round it fails t when more than 4 goroutines, or more than twice
// the heap and 4 MiB, are left beyond the first round's, or when a request
// got anything but a 200 or a 429.
func soak(t *testing.T, rounds, perRound int) {
	s := redistest.Start(t)
	h := limit(t, s.Client, []middleware.Rule{perIP(1000)}, stack{})(ok)
	var first runtime.MemStats
	var firstG int
	var admitted atomic.Int64
	for r := range rounds {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range perRound {
					res := do(h, "GET", "/", "10.0."+strconv.Itoa(g)+"."+strconv.Itoa(i%250)+":1")
					switch res.StatusCode {
					case http.StatusOK:
						admitted.Add(1)
					case http.StatusTooManyRequests:
					default:
						t.Errorf("round %d: status %d, want 200 or 429", r, res.StatusCode)
						return
					}
				}
			})
		}
		wg.Wait()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		g := fewestGoroutines(firstG)
		t.Logf("round %2d: goroutines %d heap %d KiB", r+1, g, m.HeapAlloc>>10)
		if r == 0 {
			first, firstG = m, g
		} else if g > firstG+4 || m.HeapAlloc > 2*first.HeapAlloc+(4<<20) {
			t.Errorf("round %d: goroutines %d -> %d, heap %d -> %d", r+1, firstG, g, first.HeapAlloc, m.HeapAlloc)
		}
	}
	if admitted.Load() == 0 {
		t.Error("no request admitted")
	}
}

// fewestGoroutines is the fewest goroutines seen in 20 looks 10 ms apart,
// or the first count at most floor: a call's deadline timer, which starts
// a goroutine when it fires, fires within the store's timeout (100 ms) of
// the call.
func fewestGoroutines(floor int) int {
	g := runtime.NumGoroutine()
	for range 20 {
		if g <= floor {
			break
		}
		time.Sleep(10 * time.Millisecond)
		g = min(g, runtime.NumGoroutine())
	}
	return g
}
