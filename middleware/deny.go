package middleware

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// The problem types of draft-ietf-httpapi-ratelimit-headers-10.
const (
	quotaExceeded            = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	temporaryReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)

// problem is the RFC 9457 body of a refused request, sent as
// application/problem+json to clients that accept JSON.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// ViolatedPolicies names the rules (the RateLimit-Policy members) that
	// refused the request, as the draft defines it; absent from a 503,
	// which no policy refused.
	ViolatedPolicies []string `json:"violated-policies,omitempty"`
	// RetryAfter, an extension, is the Retry-After header's value in
	// seconds; absent when the request's cost exceeds a rule's limit and
	// waiting cannot help.
	RetryAfter int64 `json:"retry_after,omitempty"`
	// Blocked, an extension, names the violated policies that refused the
	// request because the client is blocked (limiter.Limiter.Block, or a
	// rule's Penalty), not because its quota ran out.
	Blocked []string `json:"blocked,omitempty"`
}

// deny answers 429 Too Many Requests with a short body: a quota-exceeded
// problem when the client accepts JSON, plain text otherwise. The
// rate-limit headers, Retry-After included, are set already.
func deny(w http.ResponseWriter, r *http.Request, d limiter.Decision) {
	p := problem{Type: quotaExceeded, Title: http.StatusText(http.StatusTooManyRequests), Status: http.StatusTooManyRequests}
	impossible := false
	for _, res := range d.Results {
		if res.Shadow { // never refuses, nor is blocked by this request
			continue
		}
		if res.Refused() {
			p.ViolatedPolicies = append(p.ViolatedPolicies, res.Rule)
			impossible = impossible || res.RetryAfter == algorithms.Never
		}
		if res.Blocked {
			p.Blocked = append(p.Blocked, res.Rule)
		}
	}
	rules := strings.Join(p.ViolatedPolicies, ", ")
	switch {
	case impossible:
		p.Detail = fmt.Sprintf("request cost exceeds what rate limit %s can ever admit", rules)
	case len(p.Blocked) > 0:
		p.RetryAfter = exact.RetrySeconds(d.RetryAfter())
		p.Detail = fmt.Sprintf("client blocked by rate limit %s; retry in %d s", strings.Join(p.Blocked, ", "), p.RetryAfter)
	default:
		p.RetryAfter = exact.RetrySeconds(d.RetryAfter())
		p.Detail = fmt.Sprintf("rate limit %s exceeded; retry in %d s", rules, p.RetryAfter)
	}
	p.write(w, r)
}

// unavailable answers 503 Service Unavailable when the limiter cannot
// decide under WithFailClosed: a temporary-reduced-capacity problem,
// or plain text. It lists no violated policies: none refused the request.
// Retry-After is set already.
func unavailable(w http.ResponseWriter, r *http.Request) {
	p := problem{Type: temporaryReducedCapacity, Title: http.StatusText(http.StatusServiceUnavailable), Status: http.StatusServiceUnavailable,
		Detail: "rate limiting is unavailable; retry in 1 s", RetryAfter: 1}
	p.write(w, r)
}

// noIdentity answers status (401 by default, see WithKeyErrorStatus) to a
// request in which rule found no identity: a problem (or a line of text)
// that names the rule and what it reads (a header's name, never a value),
// when err, the key function's, says it (those of package keyfunc do).
func noIdentity(w http.ResponseWriter, r *http.Request, status int, rule string, err error) {
	p := problem{Type: "about:blank", Title: http.StatusText(status), Status: status,
		Detail: fmt.Sprintf("rate limit %s found no identity in the request", rule)}
	var m interface{ Missing() string }
	if errors.As(err, &m) {
		p.Detail = fmt.Sprintf("rate limit %s needs %s", rule, m.Missing())
	}
	p.write(w, r)
}

// write sends p as application/problem+json to clients that accept JSON,
// else as one line of plain text.
func (p problem) write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if acceptsJSON(r) {
		h.Set("Content-Type", "application/problem+json")
		w.WriteHeader(p.Status)
		_ = json.NewEncoder(w).Encode(p)
		return
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(p.Status)
	fmt.Fprintf(w, "%s: %s\n", p.Title, p.Detail)
}

// maxRanges is how many media ranges of Accept acceptsJSON reads. A
// browser sends fewer than ten; a client may send a megabyte of them,
// whose parsing would make each refusal it draws costly.
const maxRanges = 64

// acceptsJSON reports whether the Accept header names a JSON media type
// (application/json, application/problem+json, any +json) with q > 0
// among its first maxRanges media ranges.
func acceptsJSON(r *http.Request) bool {
	n := 0
	for _, field := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(field, ",") {
			if n++; n > maxRanges {
				return false
			}
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || zeroWeight(params["q"]) {
				continue
			}
			if mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
				return true
			}
		}
	}
	return false
}

// zeroWeight reports whether q, a media range's weight as written ("" when
// absent), refuses it: 0 however written ("0", "0.0", "0.000").
func zeroWeight(q string) bool {
	w, err := strconv.ParseFloat(q, 64)
	return err == nil && w <= 0
}
