package client_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/client"
)

// A Pacer paces by rule: the requests of every scope that a rule spans
// share its turns, a rule that spans one scope holds only that one, a
// refusal holds for its wait as given, and one that names no rule holds
// the whole server. Times are offsets from a fixed instant; the Pacer
// reads no clock.
func TestPacerPacesByRule(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	never := t0.Add(time.Hour)
	var p client.Pacer
	reserve := func(scope string, now, deadline time.Time) (client.Turn, time.Duration) {
		t.Helper()
		turn, ok := p.Reserve("srv", scope, now, deadline)
		if !ok {
			t.Fatalf("%s at %v: no turn before %v (turn %v)", scope, now.Sub(t0), deadline.Sub(t0), turn.At.Sub(t0))
		}
		return turn, turn.At.Sub(t0)
	}
	shared := []string{`"shared";q=2;w=1`}

	a, _ := reserve("a", t0, never)
	a.Observe(t0, []string{`"shared";r=1;t=1, "a-only";r=0;t=60`}, []string{`"shared";q=2;w=1, "a-only";q=1;w=60`}, 0)
	b, _ := reserve("b", t0, never) // b's first: its rules are not known yet
	b.Observe(t0, []string{`"shared";r=0;t=1`}, shared, 0)

	if _, at := reserve("b", t0, never); at != time.Second {
		t.Errorf("b waits for shared until %v, want 1s, when the server said", at)
	}
	if _, at := reserve("a", t0, never); at != time.Minute {
		t.Errorf("a waits for a-only until %v, want 1m", at)
	}
	// a took the turn of shared at 1.5s, the one it would have had had it
	// gone at once; b's next is a turn later, not a turn after a's minute.
	if _, at := reserve("b", t0, never); at != 2*time.Second {
		t.Errorf("b's next turn %v, want 2s: two turns of shared (2 a second) after b's", at)
	}
	if turn, ok := p.Reserve("srv", "b", t0, t0.Add(time.Second)); ok {
		t.Errorf("b's turn %v past its deadline of 1s, want none", turn.At.Sub(t0))
	}
	last, at := reserve("b", t0, never)
	if at != 2500*time.Millisecond {
		t.Errorf("b's turn %v, want 2.5s: one past the deadline took none", at)
	}

	now := t0.Add(2500 * time.Millisecond)
	last.Observe(now, []string{`"shared";r=0;t=1`}, shared, 250*time.Millisecond)
	if _, at := reserve("b", now, never); at != 2750*time.Millisecond {
		t.Errorf("after a refusal of 250ms at 2.5s, b's turn %v, want 2.75s", at)
	}

	_, at = reserve("c", now, never)
	if at != 2500*time.Millisecond {
		t.Errorf("c, of no known rule, waits until %v, want 2.5s (now)", at)
	}
	turn, _ := reserve("c", now, never)
	turn.Observe(now, nil, nil, 3*time.Second)
	for _, scope := range []string{"a", "b", "c", "d"} {
		if _, at := reserve(scope, now, never); at < 5500*time.Millisecond {
			t.Errorf("after a refusal that names no rule, %s's turn %v, want 5.5s or later", scope, at)
		}
	}
}

// A server that names a new rule in each response does not grow what a
// Pacer keeps: a rule that no scope's latest response named is
// forgotten, and a Reserve does not walk the rules it forgot.
func TestPacerForgetsRulesNoLongerNamed(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var p client.Pacer
	for i := range 20000 {
		turn, ok := p.Reserve("srv", "m", t0, t0.Add(time.Hour))
		if !ok {
			t.Fatalf("response %d: no turn", i)
		}
		turn.Observe(t0, []string{`"rule-` + strconv.Itoa(i) + `";r=5`}, nil, 0)
		if n := client.RulesKept(&p, "srv"); n != 1 {
			t.Fatalf("after response %d, the Pacer keeps %d rules; want 1, the one the latest response named", i, n)
		}
	}
}
