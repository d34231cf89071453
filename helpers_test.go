package ratelimit_test

import "github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"

// The helpers shared with the middleware package's own tests.
var (
	at    = mwtest.At
	ok    = mwtest.OK
	do    = mwtest.Do
	body  = mwtest.Body
	perIP = mwtest.PerIP
	limit = mwtest.OnRedis
)

// stack is what a service configures (see mwtest.Stack).
type stack = mwtest.Stack
