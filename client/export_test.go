package client

import (
	"context"
	"time"
)

// SetClock makes t read the time from now and wait with sleep, which
// waits d or returns ctx's error, instead of the real clock's.
func SetClock(t *Transport, now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	t.clock = clock{now: now, sleep: sleep}
}

// RulesKept is the number of rules p keeps for server.
func RulesKept(p *Pacer, server string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.servers[server]; s != nil {
		return len(s.rules)
	}
	return 0
}
