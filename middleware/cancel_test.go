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
// failure, whatever the failure policy, nor is a request whose context's
// deadline passes meanwhile (http.TimeoutHandler's, say): nothing is
// logged, the hook sees the context's error and not an ErrBackend, the
// metrics count the outcome canceled (no backend error, no state change),
// and the handler does not run for a client that is gone.
func TestClientCancellationIsNotABackendFailure(t *testing.T) {
	rec := logtest.Capture(t)
	ends := []struct {
		name string
		want error
		// start is the request's context, and what ends it once its
		// decision has begun.
		start func() (context.Context, func())
	}{
		{"cancelled", context.Canceled, func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, cancel
		}},
		{"past its deadline", context.DeadlineExceeded, func() (context.Context, func()) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			t.Cleanup(cancel)
			return ctx, func() {} // the hanging store returns once it passes
		}},
	}
	for _, tc := range []struct {
		policy string
		opts   []any
	}{{"fail open", nil}, {"fail closed", []any{middleware.WithFailClosed()}}} {
		for _, end := range ends {
			policy := tc.policy + ", " + end.name
			rec.Reset()
			store := hanging{Store: memstore.Must(), entered: make(chan struct{}, 1)}
			var events []guard.Event
			served := false
			h := mwtest.New(t, store, []middleware.Rule{perIP(10)}, append(tc.opts,
				middleware.WithHook(func(e guard.Event) { events = append(events, e) }))...)(
				http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
			ctx, stop := end.start()
			r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(httptest.NewRecorder(), r)
			}()
			<-store.entered
			stop()
			<-done

			if served || len(rec.Records()) != 0 || len(events) != 1 {
				t.Fatalf("%s: served %v, logged %d lines, %d events; want not served, nothing logged, 1 event", policy, served, len(rec.Records()), len(events))
			}
			e := events[0]
			if !errors.Is(e.Err, end.want) || errors.Is(e.Err, limiter.ErrBackend) || !slices.Equal(e.Rules, []string{"per-ip"}) {
				t.Errorf("%s: event error %v, rules %v; want %v, not ErrBackend, for per-ip", policy, e.Err, e.Rules, end.want)
			}
			if e.Outcome != "canceled" || e.RuleOutcome(0) != "canceled" || e.Cause != "" || e.Backend != "" {
				t.Errorf("%s: outcome %q, rule outcome %q, cause %q, backend %q; want canceled, canceled, no cause, no backend state",
					policy, e.Outcome, e.RuleOutcome(0), e.Cause, e.Backend)
			}
		}
	}
}
