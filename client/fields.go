package client

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/sf"
)

// limits is what one response says of a limit: of one rule, or of all
// of a server's together.
type limits struct {
	left int           // least quota left; -1 unknown
	wait time.Duration // until more quota, when none is left
	gap  time.Duration // the most restrictive window per unit
}

// merge is what l and o say together: the least quota left, the longest
// wait and gap.
func (l limits) merge(o limits) limits {
	if l.left < 0 || (o.left >= 0 && o.left < l.left) {
		l.left = o.left
	}
	l.wait, l.gap = max(l.wait, o.wait), max(l.gap, o.gap)
	return l
}

// readRules reads the values of the RateLimit and RateLimit-Policy fields:
// what they say of each rule, by the name of its members (several members
// of one name taken together).
func readRules(rateLimit, policy []string) map[string]limits {
	rules := make(map[string]limits)
	add := func(member string, l limits) {
		name := sf.Name(member)
		if had, ok := rules[name]; ok {
			l = had.merge(l)
		}
		rules[name] = l
	}
	for _, field := range policy {
		for _, m := range sf.Members(field) {
			l := limits{left: -1}
			q, okQ := intParam(m, "q")
			w, okW := intParam(m, "w")
			if okQ && okW && q > 0 {
				l.gap = seconds(w) / time.Duration(q)
			}
			add(m, l)
		}
	}
	for _, field := range rateLimit {
		for _, m := range sf.Members(field) {
			l := limits{left: -1}
			if r, ok := intParam(m, "r"); ok {
				l.left = int(r)
				if s, ok := intParam(m, "t"); ok && r == 0 {
					l.wait = seconds(s)
				}
			}
			add(m, l)
		}
	}
	return rules
}

// read reads the RateLimit fields, all rules together, or else the
// X-RateLimit ones.
func read(h http.Header, now time.Time) limits {
	l := limits{left: -1}
	for _, r := range readRules(h.Values("RateLimit"), h.Values("RateLimit-Policy")) {
		l = l.merge(r)
	}
	if l.left >= 0 {
		return l
	}
	if r, err := strconv.Atoi(h.Get("X-RateLimit-Remaining")); err == nil && r >= 0 {
		l.left = r
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && r == 0 {
			l.wait = resetWait(reset, now)
		}
	}
	return l
}

// resetWait reads X-RateLimit-Reset, which servers send as Unix epoch
// seconds (GitHub, httprate, this module) or as seconds from now: a value
// past 2001 is taken for an epoch.
func resetWait(v int64, now time.Time) time.Duration {
	if v > 1_000_000_000 {
		return max(0, time.Unix(v, 0).Sub(now))
	}
	return seconds(v)
}

// seconds is n seconds, or the longest Duration when n seconds are
// longer (about 292 years), and 0 when n is negative: a wait too long to
// count is a long wait, not a negative one.
func seconds(n int64) time.Duration {
	if n > int64(math.MaxInt64/time.Second) {
		return math.MaxInt64
	}
	return time.Duration(max(0, n)) * time.Second
}

func intParam(member, key string) (int64, bool) {
	v, ok := sf.Param(member, key)
	if !ok {
		return 0, false
	}
	return parseUint(v)
}

// parseUint reads a non-negative integer, math.MaxInt64 for one too large
// for an int64.
func parseUint(v string) (int64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) && v != "" && v[0] != '-' {
		return math.MaxInt64, true
	}
	return n, err == nil && n >= 0
}

// parseRetryAfter reads Retry-After: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		return seconds(s), true
	} else if s, ok := parseUint(v); ok {
		return seconds(s), true // more seconds than an int64 holds
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(now)), true
	}
	return 0, false
}
