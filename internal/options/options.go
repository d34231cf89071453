// Package options applies functional options the one way every package of
// the library takes them: in order; a nil option is an error; every error
// wraps ratelimit.ErrConfig, once.
package options

import (
	"errors"
	"fmt"

	"github.com/seed-bff0c9e1/ratelimit"
)

// Apply applies opts to c in order, stopping at the first error.
func Apply[C any, O ~func(*C) error](c *C, opts []O) error {
	for _, opt := range opts {
		if opt == nil {
			return fmt.Errorf("%w: nil Option", ratelimit.ErrConfig)
		}
		if err := opt(c); err != nil {
			if errors.Is(err, ratelimit.ErrConfig) {
				return err
			}
			return fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
		}
	}
	return nil
}
