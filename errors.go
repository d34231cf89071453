package ratelimit

import "errors"

// ErrConfig is wrapped by every construction error of every package: an
// invalid rule, option or key function configuration. The message names the
// rule or option at fault.
var ErrConfig = errors.New("ratelimit: invalid configuration")
