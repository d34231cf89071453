// Package duration reads the durations that people write: a rules file's
// fields and the operator command's flags read them alike.
package duration

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxDays is the most whole days Parse reads ("3650d": 10 years, the
// longest any duration may be).
const maxDays = 3650

// Parse reads a Go duration ("1m", "1h30m", "250ms") or whole days ("7d",
// at most maxDays).
func Parse(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= maxDays {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 1m, 1h30m, 250ms, 7d)", s)
	}
	return d, nil
}
