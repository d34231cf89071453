package guard

import (
	"errors"
	"strconv"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Outcome is what a door does with a request.
type Outcome int

// The outcomes of Decide.
const (
	// Admitted: serve the request. Its Decision allowed it, or shadow
	// mode let a refusal through (Result.Shadow), or the limiter failed
	// and the failure policy is open (Result.Err, no Decision), or no
	// rule applied.
	Admitted Outcome = iota
	// Refused: a rule refused the request; the Decision says which and
	// for how long.
	Refused
	// NoIdentity: a rule that is not Optional found no identity in the
	// request. The client's problem (HTTP 401, gRPC Unauthenticated).
	NoIdentity
	// BadCost: a rule's Cost was negative. The client's problem (400,
	// InvalidArgument).
	BadCost
	// Failed: the limiter failed to decide and the failure policy is
	// closed, or the backend failed while the request waited its turn.
	// (503, Unavailable.)
	Failed
	// Misconfigured: the server cannot decide the request (an invalid
	// Plan, a route key where nothing sets routes). The operator's
	// problem (500, Internal); the error handler has it.
	Misconfigured
	// Canceled: the client went away, or its context's deadline passed,
	// while the request was decided or queued; nobody reads the answer.
	Canceled
)

var outcomeNames = [...]string{"admitted", "refused", "no identity", "bad cost", "failed", "misconfigured", "canceled"}

// String names the outcome.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// errBadCost is the error of a BadCost request.
var errBadCost = errors.New("ratelimit: negative request cost")

// Result is the layer's answer for one request.
type Result struct {
	Outcome Outcome
	// Decision is the decision as the door tells it: a concurrency
	// limit's waits shortened to Config.SlotRetry (a slot comes back when
	// a request ends, which the server cannot know in advance). Empty
	// when nothing was decided.
	Decision limiter.Decision
	// Shadow is true when shadow mode admitted a refused request.
	Shadow bool
	// Rule names the rule that found no identity or a bad cost.
	Rule string
	// Err is the failure: the key's (NoIdentity, Misconfigured), the
	// cost's, the backend's (Failed, or Admitted under an open policy),
	// the client's context's (Canceled).
	Err error
	// settle is what Finish settles; nil when nothing does.
	settle *settlement
}
