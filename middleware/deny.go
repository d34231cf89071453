package middleware

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// problem is the RFC 9457 body of a denied request, sent as
// application/problem+json to clients that accept JSON.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// Rules names the rules that denied the request.
	Rules []string `json:"rules"`
	// RetryAfter is the Retry-After header's value in seconds; absent when
	// the request's cost exceeds a rule's limit and waiting cannot help.
	RetryAfter int64 `json:"retry_after,omitempty"`
}

// deny answers 429 Too Many Requests with a short body: an RFC 9457
// problem when the client accepts JSON, plain text otherwise. The
// rate-limit headers, Retry-After included, are set already.
func deny(w http.ResponseWriter, r *http.Request, d limiter.Decision) {
	p := problem{Type: "about:blank", Title: http.StatusText(http.StatusTooManyRequests), Status: http.StatusTooManyRequests}
	impossible := false
	for _, res := range d.Results {
		if !res.Allowed {
			p.Rules = append(p.Rules, res.Rule)
			impossible = impossible || res.Impossible()
		}
	}
	wait := d.RetryAfter()
	if impossible {
		p.Detail = fmt.Sprintf("request cost exceeds what rate limit %s can ever admit", strings.Join(p.Rules, ", "))
	} else {
		p.RetryAfter = exact.RetrySeconds(wait)
		p.Detail = fmt.Sprintf("rate limit %s exceeded; retry in %d s", strings.Join(p.Rules, ", "), p.RetryAfter)
	}
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

// acceptsJSON reports whether the Accept header names a JSON media type
// (application/json, application/problem+json, any +json) with q > 0.
func acceptsJSON(r *http.Request) bool {
	for _, field := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(field, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || params["q"] == "0" {
				continue
			}
			if mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
				return true
			}
		}
	}
	return false
}
