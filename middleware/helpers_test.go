package middleware_test

import "github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"

// The helpers shared with the root package's black-box tests.
var (
	clock = mwtest.At
	ok    = mwtest.OK
	do    = mwtest.Do
	perIP = mwtest.PerIP
)
