package transport

// TagSlot is the Redis Cluster hash slot of a key whose hash tag (the part
// of its name between the first "{" and the next "}", when not empty) is
// parts, one after another: CRC16 (XMODEM) of the tag, modulo 16384,
// without building the key's name.
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
