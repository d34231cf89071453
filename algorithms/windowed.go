package algorithms

import (
	"fmt"
	"time"
)

// validateWindowed checks the Limit and Window of a SlidingWindow, whose
// Limit*Window (in µs) must stay exact.
func validateWindowed(algo string, limit int, window time.Duration) error {
	if err := validateQuantity(algo, "Limit", limit); err != nil {
		return err
	}
	return validateDuration(algo, "Window", window, "Limit", limit)
}

func windowedString(algo string, limit int, window time.Duration) string {
	return fmt.Sprintf("%s(%d per %v)", algo, limit, window)
}
