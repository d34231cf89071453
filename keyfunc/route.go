package keyfunc

import (
	"fmt"
	"net/http"
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
// pattern is known it returns ErrNoKey rather than the raw path, whose
// values a client could vary without bound.
func Route() KeyFunc {
	return func(r *http.Request) (string, error) {
		if r.Pattern != "" {
			return r.Pattern, nil
		}
		return "", fmt.Errorf("%w: no route pattern (is the limiter mounted before routing?)", ErrNoKey)
	}
}
