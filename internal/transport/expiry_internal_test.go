package transport

import (
	"testing"
	"time"
)

// Waiters whose deadlines fall in one millisecond share a channel, which
// is never closed before the deadline asked for.
func TestExpiries(t *testing.T) {
	var e expiries
	e.after(time.Now()) // sets the origin of its milliseconds
	base := e.start.Add(20 * time.Millisecond)
	a, b := e.after(base.Add(100*time.Microsecond)), e.after(base.Add(900*time.Microsecond))
	c := e.after(base.Add(1100 * time.Microsecond))
	if a != b {
		t.Error("deadlines in one millisecond got two channels")
	}
	if a == c {
		t.Error("deadlines in two milliseconds got one channel")
	}
	for _, w := range []struct {
		ch       <-chan struct{}
		deadline time.Time
	}{{a, base.Add(900 * time.Microsecond)}, {c, base.Add(1100 * time.Microsecond)}} {
		<-w.ch
		if now := time.Now(); now.Before(w.deadline) {
			t.Errorf("closed at %v, before its deadline %v", now, w.deadline)
		}
	}
	e.mu.Lock()
	left := len(e.at)
	e.mu.Unlock()
	if left != 0 {
		t.Errorf("%d channels kept after they closed", left)
	}
}
