package rls

import (
	"sync"
	"testing"
)

// TestSeries: each label value's series is made once, whoever asks first,
// and every caller gets that one.
func TestSeries(t *testing.T) {
	var mu sync.Mutex
	made := map[string]int{}
	s := newSeries(func(v ...string) *string {
		mu.Lock()
		defer mu.Unlock()
		made[v[0]]++
		return &v[0]
	})
	labels := []string{"a", "b", "c", "d"}
	got := make([][]*string, 8)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for _, v := range labels {
				got[g] = append(got[g], s.of(v))
			}
		})
	}
	wg.Wait()
	for i, v := range labels {
		if made[v] != 1 {
			t.Errorf("%s: made %d times, want once", v, made[v])
		}
		for g := range got {
			if got[g][i] != got[0][i] || *got[g][i] != v {
				t.Errorf("%s: caller %d got another series", v, g)
			}
		}
	}
}
