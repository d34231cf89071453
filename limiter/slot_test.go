package limiter

import "testing"

// Reference values from the Redis Cluster specification and CLUSTER KEYSLOT.
func TestSlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want uint16
	}{
		{"123456789", 12739}, // CRC16 XMODEM check value 0x31C3 % 16384
		{"foo", 12182},
		{"{user1000}.following", slot("user1000")},
		{"foo{}{bar}", slot("foo{}{bar}")}, // empty tag: whole key
		{"foo{{bar}}zap", slot("{bar")},
		{"ratelimit:{per-ip:1.2.3.4}:gc", slot("per-ip:1.2.3.4")},
	} {
		if got := slot(tc.key); got != tc.want {
			t.Errorf("slot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

// The cluster tests' stacks must really span slots to test refunds.
func TestStacksOfTheClusterTestsSpanSlots(t *testing.T) {
	var checks []StoreCheck
	for _, name := range []string{"fw", "sl", "sw", "tb", "lb", "gc", "gate"} {
		checks = append(checks, StoreCheck{Key: (&rule{name: name}).key("stack", "u", "x")})
	}
	if got := len(groupBy(checks, slot)); got < 4 {
		t.Errorf("7 rules for one identity fall in %d slots, want several", got)
	}
}
