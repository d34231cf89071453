package middleware_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// hijackable is a ResponseWriter whose connection can be taken over, as
// net/http's HTTP/1 server's is.
type hijackable struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (h *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	c, _ := net.Pipe()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

// A handler behind a rule that settles by the response (Rule.Settle) can
// still take its connection over the way WebSocket libraries do, by
// asserting http.Hijacker on the ResponseWriter it is given; a
// ResponseWriter that cannot be hijacked still answers that it cannot.
func TestSettlingRuleKeepsHijacker(t *testing.T) {
	rule := middleware.Rule{Rule: limiter.Rule{Name: "bytes", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}},
		Identity: keyfunc.Constant("all"), Settle: func(*http.Request, guard.End) int { return 1 }}
	var hijackErr error
	h := mwtest.New(t, memstore.Must(), []middleware.Rule{rule})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			hijackErr = http.ErrNotSupported
			return
		}
		c, _, err := hj.Hijack()
		if hijackErr = err; err == nil {
			c.Close()
		}
	}))
	w := &hijackable{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest("GET", "/ws", nil))
	if hijackErr != nil || !w.hijacked {
		t.Errorf("hijack through the middleware: %v (connection taken over: %v)", hijackErr, w.hijacked)
	}
	hijackErr = nil
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/ws", nil))
	if hijackErr == nil {
		t.Error("a ResponseWriter that cannot be hijacked was hijacked")
	}
}

// A rule's Settle that panics (a bug in the user's accounting) does not
// keep another rule's concurrency slot until its TTL: the slot is
// released, and the panic goes on to the server.
func TestPanickingSettleReleasesTheSlot(t *testing.T) {
	boom := true
	rules := []middleware.Rule{
		{Rule: limiter.Rule{Name: "in-flight", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Hour}}, Identity: keyfunc.Constant("all")},
		{Rule: limiter.Rule{Name: "bytes", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: keyfunc.Constant("all"),
			Settle: func(*http.Request, guard.End) int {
				if boom {
					boom = false
					panic("settle failed")
				}
				return 1
			}},
	}
	h := mwtest.New(t, memstore.Must(), rules)(ok)
	panicsOnceThenAdmits(t, h, "Settle", "the only slot back")
}

// An error handler that panics on a failure the fallback store decided
// despite (Redis away) does not keep the slot the fallback gave the
// request until its TTL: the decision is settled before the panic goes
// on.
func TestPanickingErrorHandlerReleasesTheFallbackSlot(t *testing.T) {
	srv, c := redistest.Mini(t)
	srv.Close()
	boom := true
	rule := middleware.Rule{Rule: limiter.Rule{Name: "in-flight", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Hour}}, Identity: keyfunc.Constant("all")}
	h := mwtest.New(t, c, []middleware.Rule{rule}, limiter.WithFallback(memstore.Must()), limiter.WithRetryInterval(time.Minute),
		middleware.WithErrorHandler(func(*http.Request, error) {
			if boom {
				boom = false
				panic("error handler failed")
			}
		}))(ok)
	panicsOnceThenAdmits(t, h, "the error handler", "the fallback's only slot back")
}
