package main

import (
	"context"
	"sync"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// outcall is one call of the outage's load.
type outcall struct {
	start, end time.Time
	answered   bool // a response or a status from the server, within the deadline
	ok         bool // a decision, OK
}

// startOutageCallers starts the outage's callers, each calling with the
// deadline at most once per pace, and returns the function that stops
// them and returns their calls.
func startOutageCallers(ctx context.Context, o outageSettings, c *client, tr *traffic, seed uint64) (stop func() []outcall) {
	var mu sync.Mutex
	var calls []outcall
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range o.callers {
		p, stub := tr.picker(seed+uint64(i)), c.stub(i)
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return
				default:
				}
				call, cancel := context.WithTimeout(ctx, o.deadline)
				start := time.Now()
				res, err := stub.ShouldRateLimit(call, p.request())
				end := time.Now()
				cancel()
				code := status.Code(err)
				mu.Lock()
				calls = append(calls, outcall{start: start, end: end,
					answered: code != codes.DeadlineExceeded && code != codes.Canceled,
					ok:       err == nil && res.GetOverallCode() == rlsv3.RateLimitResponse_OK})
				mu.Unlock()
				time.Sleep(time.Until(start.Add(o.pace)))
			}
		})
	}
	return func() []outcall {
		close(done)
		wg.Wait()
		return calls
	}
}
