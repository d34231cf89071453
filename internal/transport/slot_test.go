package transport

import (
	"strings"
	"testing"
)

// hashTag is what Redis Cluster and go-redis's Ring shard a key by: the
// part between the first "{" and the next "}" when not empty, else the
// whole key.
func hashTag(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key[open+1 : open+1+end]
		}
	}
	return key
}

// Slot is the hash slot of the key named key, as Redis Cluster computes it.
func Slot(key string) uint16 { return TagSlot(hashTag(key)) }

// Reference values from the Redis Cluster specification, each what
// CLUSTER KEYSLOT answers on redis-server 7.0.
func TestSlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want uint16
	}{
		{"123456789", 12739}, // CRC16 XMODEM check value 0x31C3 % 16384
		{"foo", 12182},
		{"bar", 5061},
		{"user1000", 3443},
		{"{user1000}.following", 3443}, // the tag's, user1000
		{"foo{}{bar}", 8363},           // empty tag: the whole key
		{"{bar", 4015},
		{"foo{{bar}}zap", 4015}, // the tag "{bar"
		{"per-ip:1.2.3.4", 4294},
		{"ratelimit:{per-ip:1.2.3.4}:gc", 4294},
	} {
		if got := Slot(tc.key); got != tc.want {
			t.Errorf("Slot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

// TagSlot of a tag in parts is Slot of a key with that tag.
func TestTagSlot(t *testing.T) {
	for _, parts := range [][]string{{"per-ip", ":", "1.2.3.4"}, {"api", ":", "#00ff"}, {"", ":", ""}, {"123456789"}} {
		if got, want := TagSlot(parts...), Slot("ratelimit:{"+strings.Join(parts, "")+"}:gc"); got != want {
			t.Errorf("TagSlot%q = %d, want %d", parts, got, want)
		}
	}
}

// The cluster tests' stacks must really span slots to test refunds: their
// rules' keys for one identity (prefix "stack", keys as package limiter
// names them, "<prefix>:{<rule>:<identity>}:...") fall in several.
func TestStacksOfTheClusterTestsSpanSlots(t *testing.T) {
	slots := map[uint16]bool{}
	for _, name := range []string{"fw", "sl", "sw", "tb", "lb", "gc", "gate"} {
		slots[Slot("stack:{"+name+":u}:x")] = true
	}
	if got := len(slots); got < 4 {
		t.Errorf("7 rules for one identity fall in %d slots, want several", got)
	}
}
