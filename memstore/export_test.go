package memstore

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/model"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Len is the number of entries st (a memstore) holds, expired ones not yet swept
// included, for the tests of package memstore_test.
func Len(st store.Store) int {
	s := st.(*memStore)
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// LiveAt is the number of entries live at now, for the tests of package
// memstore_test.
func LiveAt(st store.Store, now time.Time) int {
	s := st.(*memStore)
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, e := range sh.entries {
			if e.expires > now.UnixMicro() {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// StateAt is the live state at key, named as on Redis, at now (a missing
// key's is the zero State), for the tests of package memstore_test.
func StateAt(st store.Store, key string, now time.Time) model.State {
	s := st.(*memStore)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k := range sh.entries {
			if k.String() == key {
				defer sh.mu.Unlock()
				return s.state(i, k, now.UnixMicro())
			}
		}
		sh.mu.Unlock()
	}
	return model.State{}
}
