package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// hanging is a store whose decisions wait for their context to end, like
// a Redis call cut short; entered receives each decision as it starts.
type hanging struct {
	store.Store
	entered chan struct{}
}

func (s hanging) Decide(ctx context.Context, _ time.Time, _ []store.Check, _ []store.Result) (store.Verdict, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	return store.Verdict{}, ctx.Err()
}

// A client that hangs up while its request is decided is not a Redis
// failure, whatever the failure policy: nothing is logged, the hook sees
// context.Canceled and not an ErrBackend, the metrics count the outcome
// canceled (no backend error, no state change), and the handler does not
// run for a client that is gone.
func TestClientCancellationIsNotABackendFailure(t *testing.T) {
	rec := logtest.Capture(t)
	for _, tc := range []struct {
		policy string
		opts   []any
	}{{"fail open", nil}, {"fail closed", []any{middleware.WithFailClosed()}}} {
		policy := tc.policy
		rec.Reset()
		store := hanging{Store: memstore.Must(), entered: make(chan struct{}, 1)}
		var events []guard.Event
		served := false
		h := mwtest.New(t, store, []middleware.Rule{perIP(10)}, append(tc.opts,
			middleware.WithHook(func(e guard.Event) { events = append(events, e) }))...)(
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(httptest.NewRecorder(), r)
		}()
		<-store.entered
		cancel()
		<-done

		if served || len(rec.Records()) != 0 || len(events) != 1 {
			t.Fatalf("%s: served %v, logged %d lines, %d events; want not served, nothing logged, 1 event", policy, served, len(rec.Records()), len(events))
		}
		e := events[0]
		if !errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, limiter.ErrBackend) || !slices.Equal(e.Rules, []string{"per-ip"}) {
			t.Errorf("%s: event error %v, rules %v; want context.Canceled, not ErrBackend, for per-ip", policy, e.Err, e.Rules)
		}
		if e.Outcome != "canceled" || e.RuleOutcome(0) != "canceled" || e.Cause != "" || e.Backend != "" {
			t.Errorf("%s: outcome %q, rule outcome %q, cause %q, backend %q; want canceled, canceled, no cause, no backend state",
				policy, e.Outcome, e.RuleOutcome(0), e.Cause, e.Backend)
		}
	}
}
