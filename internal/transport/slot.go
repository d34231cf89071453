package transport

import "strings"

// HashTag is what Redis Cluster and go-redis's Ring shard key by: the part
// between the first "{" and the next "}" when non-empty, else the whole key.
func HashTag(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key[open+1 : open+1+end]
		}
	}
	return key
}

// Slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag, modulo 16384.
func Slot(key string) uint16 {
	return TagSlot(HashTag(key))
}

// TagSlot is the hash slot of a key whose hash tag is parts, one after
// another: the slot of a key named in parts, without building its name.
func TagSlot(parts ...string) uint16 {
	var crc uint16
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			crc = crc<<8 ^ crcTable[byte(crc>>8)^p[i]]
		}
	}
	return crc % 16384
}

var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
