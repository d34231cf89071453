package ratelimit

import "errors"

// ErrConfig is wrapped by every construction error of every package: an
// invalid rule, option or key function configuration. The message names the
// rule or option at fault.
var ErrConfig = errors.New("ratelimit: invalid configuration")

// ErrNoKey is wrapped by the error of a key function that finds no
// identity in a request: a missing header, no user in the context, no
// metadata (keyfunc.ErrNoKey is this error). Every door answers it as the
// client's problem.
var ErrNoKey = errors.New("ratelimit: request has no key")
