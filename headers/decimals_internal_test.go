package headers

import "testing"

func TestDecimals(t *testing.T) {
	for _, tc := range []struct {
		a, b, c int64
		want    [3]string
	}{
		{0, 0, 0, [3]string{"0", "0", "0"}},
		{100, 99, 1795000060, [3]string{"100", "99", "1795000060"}},
		{1_000_000, 999_999, 253402300800, [3]string{"1000000", "999999", "253402300800"}},
		{-1, 9223372036854775807, -9223372036854775808, [3]string{"-1", "9223372036854775807", "-9223372036854775808"}},
	} {
		a, b, c := decimals(tc.a, tc.b, tc.c)
		if got := [3]string{a, b, c}; got != tc.want {
			t.Errorf("decimals(%d, %d, %d) = %q, want %q", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
}
