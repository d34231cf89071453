package client

import "time"

// pace is what a Pacer knows of one limit: a server's as a whole (a
// Transport's host), or one of its rules.
type pace struct {
	until  time.Time     // the server said no more quota before this
	turn   time.Time     // while none is known to be left, the next request's turn
	gap    time.Duration // between turns: the sustained rate (RateLimit-Policy)
	left   int           // quota left, as reported less what was sent since; -1 unknown
	sent   int64         // requests reserved so far
	seen   int64         // the latest request whose response was read
	learns int64         // responses learned from so far
	scopes int           // a rule's: the scopes that name it
}

// next is when the next request may go, at the earliest now.
func (p *pace) next(now time.Time) time.Time {
	at := later(now, p.until)
	if p.left == 0 {
		at = later(at, p.turn)
	}
	return at
}

// take takes the place of a request at now: a unit of the quota left,
// or, while none is known to be left, the next turn, the one after a gap
// later. (A request that another limit holds past that turn goes later,
// which leaves its server more room, not less.) It returns the request's
// number among those reserved.
func (p *pace) take(now time.Time) (seq int64) {
	switch {
	case p.left > 0:
		p.left--
	case p.left == 0:
		p.turn = p.next(now).Add(p.gap)
	}
	p.sent++
	return p.sent
}

// learn learns l, what the response to request seq said at now. The
// quota it reports was left right after that request: the requests
// reserved since take their share of it. Quota left lifts any wait and
// the turns (the server has said it can take a request now); none left
// holds requests for l.wait, then gives them turns. A refusal holds them
// for l.wait whatever was left, and its retry's turn is then unless other
// requests hold turns already. A response to an earlier request than one
// already read tells nothing newer.
func (p *pace) learn(seq int64, now time.Time, l limits, refused bool) {
	p.learns++
	if l.gap > 0 {
		p.gap = l.gap
	}
	if seq < p.seen {
		return
	}
	p.seen = seq
	if l.left >= 0 {
		p.left = max(0, l.left-int(p.sent-seq))
	}
	switch {
	case refused:
		p.left, p.until = 0, now.Add(l.wait)
		if p.sent == seq {
			// No request holds a turn after this one's: the retry goes
			// when the server said, not a turn later.
			p.turn = time.Time{}
		}
	case p.left > 0:
		p.until, p.turn = time.Time{}, time.Time{}
	case p.left == 0:
		p.until = later(p.until, now.Add(l.wait))
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// placed is what a take changed of a pace, to give it back (see
// untake).
type placed struct {
	left   int
	turn   time.Time
	learns int64
}

// untake gives back the place of request seq, which was not sent, as
// before says it was before its take: only while no later request took a
// place and no response was learned since, so that nothing counted
// after it is undone.
func (p *pace) untake(seq int64, before placed) {
	if seq != p.sent || before.learns != p.learns {
		return
	}
	p.sent--
	p.left, p.turn = before.left, before.turn
}
