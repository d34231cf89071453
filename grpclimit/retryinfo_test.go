package grpclimit_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestRetryInfoRoundsUpToTheMillisecond: a refusal's RetryInfo is the
// decision's wait rounded up to the millisecond, exactly. The store's
// waits are whole milliseconds already; a concurrency limit's advertised
// wait (WithConcurrencyRetryAfter) need not be. One slot, held by a call
// for a minute on a fixed clock, refuses a second call with the shorter
// configured wait.
func TestRetryInfoRoundsUpToTheMillisecond(t *testing.T) {
	now := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		wait, want time.Duration // advertised; the RetryInfo
	}{
		{250*time.Millisecond + 400*time.Microsecond, 251 * time.Millisecond},
		{250 * time.Millisecond, 250 * time.Millisecond},
		{999*time.Millisecond + time.Microsecond, time.Second},
		{time.Microsecond, time.Millisecond},
	} {
		rules := []grpclimit.Rule{{Rule: limiter.Rule{Name: "slot", Algorithm: algorithms.Concurrency{Limit: 1, TTL: time.Minute}}, Identity: grpclimit.Constant("all")}}
		lim, err := limiter.New(memstore.Must(), guard.Limits(rules), limiter.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		s, err := grpclimit.NewWithLimiter(lim, rules, grpclimit.WithConcurrencyRetryAfter(tc.wait))
		if err != nil {
			t.Fatal(err)
		}
		unary := s.UnaryServerInterceptor()
		info := &grpc.UnaryServerInfo{FullMethod: "/pkg.Service/Method"}
		var refused error
		_, err = unary(context.Background(), nil, info, func(ctx context.Context, _ any) (any, error) {
			// The slot is held: a second call meanwhile is refused.
			_, refused = unary(context.Background(), nil, info, func(context.Context, any) (any, error) { return nil, nil })
			return nil, nil
		})
		if err != nil {
			t.Fatalf("%v: the first call: %v", tc.wait, err)
		}
		st := status.Convert(refused)
		if st.Code() != codes.ResourceExhausted {
			t.Fatalf("%v: the second call: %v, want ResourceExhausted", tc.wait, refused)
		}
		var got []time.Duration
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				got = append(got, ri.GetRetryDelay().AsDuration())
			}
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("a wait of %v: RetryInfo %v, want exactly %v", tc.wait, got, tc.want)
		}
	}
}
