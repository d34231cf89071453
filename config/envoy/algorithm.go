package envoy

import (
	"strings"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// algorithm is how a limit counts, by the word the library's rules file
// names it with: a rate_limit's algorithm key. "" is fixed_window, the
// reference's.
type algorithm string

const fixedWindow algorithm = "fixed_window"

// algorithmWords are the algorithms a rate_limit may name, in the order
// the documentation lists them.
var algorithmWords = []algorithm{fixedWindow, "sliding_window", "sliding_log", "token_bucket", "leaky_bucket", "gcra"}

// refusedAlgorithms are the library's algorithms a descriptor cannot use,
// and why.
var refusedAlgorithms = map[string]string{
	"concurrency": "an RLS call takes a slot and no call gives it back, so every slot would stay taken until its TTL",
	"queue":       "a queue admits by delaying a request, and Envoy waits about 20 ms for an answer, far less than a turn",
}

// bursty reports whether a takes a burst: its capacity beyond the rate.
func (a algorithm) bursty() bool {
	return a == "token_bucket" || a == "leaky_bucket" || a == "gcra"
}

// build is a's algorithm admitting perUnit per window, with burst as a
// bucket's capacity or GCRA's burst (0: perUnit). A fixed window is
// aligned to the Unix epoch, as the reference counts.
func (a algorithm) build(perUnit, burst int, window time.Duration) algorithms.Algorithm {
	if burst == 0 {
		burst = perUnit
	}
	switch a {
	case "sliding_window":
		return algorithms.SlidingWindow{Limit: perUnit, Window: window}
	case "sliding_log":
		return algorithms.SlidingLog{Limit: perUnit, Window: window}
	case "token_bucket":
		return algorithms.TokenBucket{Capacity: burst, Rate: perUnit, Period: window}
	case "leaky_bucket":
		return algorithms.LeakyBucket{Capacity: burst, Rate: perUnit, Period: window}
	case "gcra":
		return algorithms.GCRA{Rate: perUnit, Period: window, Burst: burst}
	}
	return algorithms.FixedWindow{Limit: perUnit, Window: window}
}

// leasable lists the algorithms the limiter accepts a lease on, asked of
// the limiter itself.
func leasable() string {
	var ok []string
	for _, a := range algorithmWords {
		r := limiter.Rule{Name: "lease", Algorithm: a.build(1, 0, time.Second), Lease: time.Second}
		if r.Validate() == nil {
			ok = append(ok, string(a))
		}
	}
	return strings.Join(ok, ", ")
}

// wordList is words joined for a message.
func wordList(words []algorithm) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = string(w)
	}
	return strings.Join(s, ", ")
}
