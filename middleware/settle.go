package middleware

import (
	"context"
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// recorder notes a response's status and body size for rules that settle
// their cost after it. It forwards Flush and unwraps for
// http.ResponseController, so streaming handlers keep working.
type recorder struct {
	http.ResponseWriter
	status  int
	written int64
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 && status >= 200 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.written += int64(n)
	return n, err
}

// Flush forwards to the ResponseWriter when it flushes.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		if r.status == 0 {
			r.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the ResponseWriter.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// settles reports whether any check of a request settles after the
// response: its rule has Settle, or it holds a slot (a Concurrency limit).
func (m *mw) settles(checks []limiter.Check, rules []int) bool {
	for j, i := range rules {
		if m.rules[i].Settle != nil || m.holdsSlots(checks[j], i) {
			return true
		}
	}
	return false
}

// serveSettled serves an allowed request, then charges each rule its final
// cost: 0 for a slot (a Concurrency limit: released, also when the
// handler panics), Rule.Settle's, or the cost decided. A settlement that
// fails is reported to the error handler and the hook; the charge decided
// before the handler stays (stricter, never looser; a slot then expires
// after its TTL), and it is not retried.
func (m *mw) serveSettled(w http.ResponseWriter, r *http.Request, next http.Handler, d limiter.Decision, checks []limiter.Check, rules []int) {
	rec := &recorder{ResponseWriter: w}
	returned := false
	defer func() {
		switch {
		case !returned:
			rec.status = http.StatusInternalServerError // the handler panicked
		case rec.status == 0:
			rec.status = http.StatusOK // the handler wrote nothing
		}
		final := make([]int, len(checks))
		for j, i := range rules {
			switch settle := m.rules[i].Settle; {
			case m.holdsSlots(checks[j], i):
				final[j] = 0
			case settle != nil:
				final[j] = max(0, settle(r, rec.status, rec.written))
			default:
				final[j] = checks[j].Cost
			}
		}
		// The request may be over, its context cancelled: the settlement
		// still runs, within the store's timeout.
		more, err := m.lim.Settle(context.WithoutCancel(r.Context()), d, final...)
		if err != nil {
			m.fail(Event{Request: r, Decision: more, Err: err, Rules: ruleNames(checks)})
		}
	}()
	next.ServeHTTP(rec, r)
	returned = true
}
