package duration

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration // -1: refused
	}{
		{"250ms", 250 * time.Millisecond},
		{"1h30m", 90 * time.Minute},
		{"7d", 7 * 24 * time.Hour},
		{"0d", 0},
		{"3650d", 3650 * 24 * time.Hour},
		{"3651d", -1},
		{"-1d", -1},
		{"1.5d", -1},
		{"d", -1},
		{"soon", -1},
	} {
		got, err := Parse(tc.in)
		if tc.want < 0 && err == nil || tc.want >= 0 && (err != nil || got != tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
