package algorithms

import (
	"fmt"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// validateBucket checks a size, a Rate and a Period, shared by TokenBucket,
// LeakyBucket and GCRA.
func validateBucket(algo, sizeField string, size, rate int, period time.Duration) error {
	if err := validateQuantity(algo, sizeField, size); err != nil {
		return err
	}
	if err := validateQuantity(algo, "Rate", rate); err != nil {
		return err
	}
	if err := validateDuration(algo, "Period", period, sizeField, size); err != nil {
		return err
	}
	us := period.Microseconds()
	if int64(rate) > us {
		return fmt.Errorf("%w: %s.Rate of %d per %v is more than one per microsecond", ErrInvalid, algo, rate, period)
	}
	// The scaled debt of GCRA and the buckets reaches size*period + rate.
	if int64(size) > exact.Max/2/us {
		return fmt.Errorf("%w: %s.%s %d times Period %v overflows exact arithmetic", ErrInvalid, algo, sizeField, size, period)
	}
	if w := refillPolicy(size, rate, period).Window; w > exact.MaxDuration {
		return fmt.Errorf("%w: %s takes %v to refill %d %s, more than %v", ErrInvalid, algo, w, size, sizeField, exact.MaxDuration)
	}
	return nil
}

// refillPolicy is size units per the time an empty bucket of that size takes
// to refill at rate per period.
func refillPolicy(size, rate int, period time.Duration) Policy {
	return Policy{Quota: size, Window: period * time.Duration(size) / time.Duration(rate)}
}

func bucketString(algo string, capacity, rate int, period time.Duration) string {
	return fmt.Sprintf("%s(capacity %d, %d per %v)", algo, capacity, rate, period)
}
