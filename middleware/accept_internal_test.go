package middleware

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Reading Accept for a refusal costs no more for a megabyte of media
// ranges (what net/http lets a client send) than for a few dozen: a
// client over its limit cannot make each refusal expensive. A real
// client's ranges are all read.
func TestAcceptIsReadBoundedly(t *testing.T) {
	accept := func(ranges int) float64 {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", strings.Repeat("text/x-a;q=0.5,", ranges))
		return testing.AllocsPerRun(3, func() { acceptsJSON(r) })
	}
	if few, many := accept(64), accept(1<<20/len("text/x-a;q=0.5,")); many > few {
		t.Errorf("%v allocations for a megabyte of media ranges, %v for 64", many, few)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7")
	r.Header.Add("Accept", "application/problem+json")
	if !acceptsJSON(r) {
		t.Error("a browser's ranges, then problem+json: not JSON")
	}
}
