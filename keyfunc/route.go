package keyfunc

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Route returns the pattern of the matched route: chi's route pattern (e.g.
// "/users/{id}") when the request went through a chi router, else the
// net/http ServeMux pattern (Request.Pattern, e.g. "GET /users/{id}").
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
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if p := rc.RoutePattern(); p != "" {
				return p, nil
			}
		}
		if r.Pattern != "" {
			return r.Pattern, nil
		}
		return "", fmt.Errorf("%w: no route pattern (is the limiter mounted before routing?)", ErrNoKey)
	}
}
