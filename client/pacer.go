package client

import (
	"sync"
	"time"
)

// Pacer is the pacing of Transport without HTTP, for clients of other
// protocols whose servers advertise their limits with the IETF RateLimit
// and RateLimit-Policy fields (package grpclimit's Client drives one). It
// keeps what each server says of each of its rules, the members of those
// fields by name, and tells when a request may go so that a client that
// waits for it is not refused: as Transport's requests wait for their
// host, but per rule, so that requests of every kind that a rule spans
// share its quota, and a rule that spans only some of them paces only
// those.
//
// A request is of a scope (a gRPC method), and is paced by the rules the
// latest response in its scope that named any named; until one has, only
// by what holds every request to its server: a refusal that names no
// rule with no quota left. Pacer reads no clock: its callers pass the
// time, and wait themselves. The zero value is ready to use; it is safe
// for concurrent use.
type Pacer struct {
	mu      sync.Mutex
	servers map[string]*server
}

// server is what a Pacer knows of one server.
type server struct {
	pace                       // the server as a whole
	rules  map[string]*pace    // by name
	scopes map[string][]string // per scope, the rules its latest response named
}

// Turn is a request's place among those to its server: when it may go,
// and what its response is about.
type Turn struct {
	// At is when the request may go.
	At time.Time

	p             *Pacer
	server, scope string
	seq           int64            // among the server's requests
	seqs          map[string]int64 // among each rule's
	before        placed           // the server's pace before the take
}

// Reserve returns the turn of a request of scope to server at now, the
// latest of its rules' and the server's, and takes its place under each
// of its rules: a unit of the quota the rule has left, or, while it has
// none left, its next turn, spaced from the previous one by the rule's
// sustained rate. When the turn is past deadline, ok is false and
// nothing is taken.
func (p *Pacer) Reserve(server, scope string, now, deadline time.Time) (t Turn, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.server(server)
	names := s.scopes[scope]
	at := s.next(now)
	for _, name := range names {
		at = later(at, s.rules[name].next(now))
	}
	if at.After(deadline) {
		return Turn{At: at}, false
	}
	before := placed{left: s.left, turn: s.turn, learns: s.learns}
	t = Turn{At: at, p: p, server: server, scope: scope, seq: s.take(now), seqs: make(map[string]int64, len(s.rules)), before: before}
	for name, r := range s.rules {
		// A rule the request is not known to fall under: the quota a
		// response reports for it was left after the requests reserved
		// so far.
		t.seqs[name] = r.sent
	}
	for _, name := range names {
		t.seqs[name] = s.rules[name].take(now)
	}
	return t, true
}

// Observe learns what the response to t's request says at now:
// rateLimit and policy are the values of its RateLimit and
// RateLimit-Policy fields, and retryAfter, when positive, the wait of a
// refusal. A refusal holds the rules it names with no quota left for
// retryAfter, or, when it names none, every request to the server. A
// response that names rules is what later requests of its scope are
// paced by. A zero Turn observes nothing.
func (t Turn) Observe(now time.Time, rateLimit, policy []string, retryAfter time.Duration) {
	if t.p == nil {
		return
	}
	rules := readRules(rateLimit, policy)
	refused := retryAfter > 0
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	s := t.p.server(t.server)
	held := false
	names := make([]string, 0, len(rules))
	for name, l := range rules {
		names = append(names, name)
		hold := refused && l.left == 0
		if hold {
			l.wait, held = retryAfter, true
		}
		// A rule forgotten since t was reserved counts again from 0.
		r := s.rule(name)
		r.learn(min(t.seqs[name], r.sent), now, l, hold)
	}
	if refused && !held {
		s.until = later(s.until, now.Add(retryAfter))
	}
	if len(names) > 0 {
		s.scope(t.scope, names)
	}
}

// learn learns l, what the response to t's request says of its server
// as a whole at now.
func (t Turn) learn(now time.Time, l limits, refused bool) {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.p.server(t.server).learn(t.seq, now, l, refused)
}

// unsent gives back t's place among the requests to its server as a
// whole, its request not sent (canceled while it waited): the next
// request takes it, unless a later one took a place or a response was
// read meanwhile. Transport's, whose requests no rule paces.
func (t Turn) unsent() {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.p.server(t.server).untake(t.seq, t.before)
}

func (p *Pacer) server(addr string) *server {
	if p.servers == nil {
		p.servers = make(map[string]*server)
	}
	s := p.servers[addr]
	if s == nil {
		s = &server{pace: pace{left: -1}}
		p.servers[addr] = s
	}
	return s
}

func (s *server) rule(name string) *pace {
	if s.rules == nil {
		s.rules = make(map[string]*pace)
	}
	r := s.rules[name]
	if r == nil {
		r = &pace{left: -1}
		s.rules[name] = r
	}
	return r
}

// scope makes names the rules of scope, and forgets a rule that no scope
// names any more: nothing reserves or reads it, and a server that names
// new rules does not grow what a Pacer keeps.
func (s *server) scope(scope string, names []string) {
	if s.scopes == nil {
		s.scopes = make(map[string][]string)
	}
	for _, name := range names {
		s.rules[name].scopes++
	}
	for _, name := range s.scopes[scope] {
		r := s.rules[name]
		if r.scopes--; r.scopes == 0 {
			delete(s.rules, name)
		}
	}
	s.scopes[scope] = names
}
