package keyfunc

import (
	"fmt"
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit"
)

// Route returns the pattern of the matched route, Request.Pattern: set by
// net/http's ServeMux ("GET /users/{id}") and by chi, which stores its
// route pattern there ("/users/{id}").
//
// A pattern is complete only after routing. In chi, mount the middleware
// inline on the endpoint with r.With(...).Get(...): an r.Use middleware,
// even inside r.Route, runs before its router matches and sees only the
// mount pattern so far ("/api/*"). With ServeMux, wrap the handler
// registered for the pattern. When no
// pattern is known it returns an error wrapping ratelimit.ErrConfig
// rather than the raw path, whose values a client could vary without
// bound: a request without a pattern is the server's misconfiguration,
// not the client's mistake, and the middleware answers it 500 Internal
// Server Error through its error handler.
func Route() KeyFunc {
	return func(r *http.Request) (string, error) {
		if r.Pattern != "" {
			return r.Pattern, nil
		}
		return "", fmt.Errorf("%w: keyfunc.Route: the request has no route pattern (is the limiter mounted before routing, or outside a router that sets Request.Pattern?)", ratelimit.ErrConfig)
	}
}
