package middleware_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// WithHeaders refuses names that could never reach a client intact: a
// field name net/http would silently leave out of the response, a list
// parameter that is not a Structured Field key (which makes clients drop
// the whole field). The error names the option's field and the value.
func TestWithHeadersRefusesInvalidNames(t *testing.T) {
	for _, tc := range []struct {
		names headers.Names
		want  string
	}{
		{headers.Names{Limit: "X-RateLimit Limit"}, `Limit "X-RateLimit Limit"`},
		{headers.Names{RetryAfter: "Retry-After:"}, `RetryAfter "Retry-After:"`},
		{headers.Names{Remaining: "Rest\n"}, `Remaining "Rest\n"`},
		{headers.Names{Policy: "RateLimit-Policy", QuotaParam: "Q"}, `QuotaParam "Q"`},
		{headers.Names{RateLimit: "RateLimit", ResetParam: "re set"}, `ResetParam "re set"`},
		{headers.Names{RateLimit: "RateLimit", RemainingParam: "1r"}, `RemainingParam "1r"`},
	} {
		_, err := mwtest.Build(memstore.Must(), []middleware.Rule{perIP(1)}, middleware.WithHeaders(tc.names))
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want ErrConfig naming %s", tc.names, err, tc.want)
		}
	}
	for _, names := range []headers.Names{headers.Both, headers.IETF, {Remaining: "quota-left"},
		{RateLimit: "RateLimit", RemainingParam: "remaining", ResetParam: "reset.at", WindowParam: "*w", QuotaParam: "q_2"}} {
		if _, err := mwtest.Build(memstore.Must(), []middleware.Rule{perIP(1)}, middleware.WithHeaders(names)); err != nil {
			t.Errorf("%+v: %v", names, err)
		}
	}
}
