package lease

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
)

// MaxLease is the longest lease a rule may set.
const MaxLease = time.Minute

// Algo is what the pools read of a check's algorithm: its facts, its
// refill (a bucket's or GCRA's) and its policy's quota and window.
type Algo struct {
	Facts  algo.Facts
	Refill algo.Refill
	Quota  int
	Window time.Duration
}

// Rule is a leased rule: how long a lease lasts (Lease), and how long its
// pools go between takes that came up short (Interval).
type Rule struct {
	Lease, Interval time.Duration
}

// Invalid is the reason a rule of the algorithm a, named name, leasing for
// ttl (0: not leased), cannot be leased, or "". blocks is whether the rule
// takes blocks.
func Invalid(ttl time.Duration, blocks bool, name string, a *Algo) string {
	switch {
	case ttl < 0 || ttl > MaxLease:
		return "lease " + ttl.String() + " outside 0 to " + MaxLease.String()
	case ttl == 0:
		return ""
	case blocks:
		return "a leased rule cannot take blocks (its units are spent without asking the store)"
	case a.Facts.Leasable:
		return ""
	}
	return "a " + name + " cannot be leased: its units are not interchangeable"
}

// Serves reports whether a check of cost, of the algorithm a, of rule r,
// is served from its rule's leases: the rule is leased, the check
// consumes, and a (a Plan's, when the check has one) can be leased; any
// other check of the rule is decided by the store as an unleased one is.
func (r Rule) Serves(a *Algo, cost int) bool {
	return r.Lease > 0 && cost > 0 && a.Facts.Leasable
}

// interval is how long a pool of a rule of algorithm a leasing for ttl
// goes between takes when its takes come up short: a tenth of the lease,
// and no more than refills half a bucket's (or GCRA's burst) capacity or
// a tenth of a window, so that nothing refilled meanwhile overflows.
func interval(a *Algo, ttl time.Duration) time.Duration {
	iv := ttl / 10
	if a.Refill.Rate > 0 {
		iv = min(iv, a.Refill.Half())
	} else {
		iv = min(iv, a.Window/10)
	}
	return max(iv, time.Millisecond)
}

// expiry is how long a lease of algorithm a, whose window starts at mark
// (µs, the token's Stamp), taken at the instant at, lasts: ttl, and for the
// windows (Facts.WindowBound) no further than the end of the window its
// units were counted in, so that they are spent in that window.
func expiry(a *Algo, mark int64, at time.Time, ttl time.Duration) time.Duration {
	if !a.Facts.WindowBound {
		return ttl
	}
	end := mark + a.Window.Microseconds()
	return min(ttl, time.Duration(end-at.UnixMicro())*time.Microsecond)
}
