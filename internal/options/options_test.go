package options_test

import (
	"errors"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/options"
)

type config struct{ n int }

type option func(*config) error

func set(n int) option {
	return func(c *config) error {
		if n < 0 {
			return errors.New("set: negative")
		}
		c.n = n
		return nil
	}
}

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []option
		want    int
		wantErr string
	}{
		{"none", nil, 0, ""},
		{"in order", []option{set(1), set(2)}, 2, ""},
		{"invalid", []option{set(1), set(-1), set(3)}, 1, "ratelimit: invalid configuration: set: negative"},
		{"nil", []option{nil}, 0, "ratelimit: invalid configuration: nil Option"},
		{"wrapped once", []option{func(*config) error { return ratelimit.ErrConfig }}, 0, "ratelimit: invalid configuration"},
	} {
		var c config
		err := options.Apply(&c, tc.opts)
		if c.n != tc.want {
			t.Errorf("%s: n = %d, want %d", tc.name, c.n, tc.want)
		}
		if (err == nil) != (tc.wantErr == "") || (err != nil && (!errors.Is(err, ratelimit.ErrConfig) || err.Error() != tc.wantErr)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}
