package middleware

import (
	"fmt"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/sf"
	"github.com/seed-bff0c9e1/ratelimit/internal/token"
)

// checkNames reports the first name of n that cannot reach a client
// intact, naming its field: a header name that is not an HTTP token
// (net/http leaves such a field out of the response without a word), or
// a list parameter that is not a Structured Field key (a client then
// drops the whole field). Empty names are not written, so they pass.
func checkNames(n headers.Names) error {
	for _, f := range []struct{ field, name string }{
		{"Limit", n.Limit}, {"Remaining", n.Remaining}, {"Reset", n.Reset},
		{"RetryAfter", n.RetryAfter}, {"Policy", n.Policy}, {"RateLimit", n.RateLimit},
	} {
		if f.name != "" && !token.Valid(f.name) {
			return fmt.Errorf("%w: headers.Names.%s %q is not a header field name", ratelimit.ErrConfig, f.field, f.name)
		}
	}
	for _, f := range []struct{ field, name string }{
		{"QuotaParam", n.QuotaParam}, {"WindowParam", n.WindowParam},
		{"RemainingParam", n.RemainingParam}, {"ResetParam", n.ResetParam},
	} {
		if f.name != "" && !sf.ValidKey(f.name) {
			return fmt.Errorf("%w: headers.Names.%s %q is not a Structured Field key (a lower-case letter or '*', then lower-case letters, digits, '_', '-', '.', '*')",
				ratelimit.ErrConfig, f.field, f.name)
		}
	}
	return nil
}
