package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
)

// The helpers shared with the root package's black-box tests.
var (
	clock = mwtest.At
	ok    = mwtest.OK
	do    = mwtest.Do
	perIP = mwtest.PerIP
)

// panicsOnceThenAdmits serves two requests with h: the first must panic
// (what panicked: who), the second must be admitted (why: the slot the
// first took is back).
func panicsOnceThenAdmits(t *testing.T, h http.Handler, who, why string) {
	t.Helper()
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("%s's panic did not reach the server", who)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != http.StatusOK {
		t.Errorf("after %s's panic: %d, want 200 (%s)", who, w.Code, why)
	}
}
