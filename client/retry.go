package client

import (
	"fmt"
	"net/http"
)

// retryable reports whether req may be sent again after status: its body
// can be replayed, and the server refused it (429) or the method is
// idempotent.
func retryable(req *http.Request, status int) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if status == http.StatusTooManyRequests {
		return true
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// rewind is a copy of req to send again, with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("ratelimit: replaying the request body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}
