package limiter

import "sync"

// resultsChunk is rule results allocated together and handed out a few at
// a time, each slot once: a decision's Results is a part of a chunk, so
// that deciding allocates once per chunkResults rules decided rather than
// once per decision. A chunk lives as long as any of its decisions does.
type resultsChunk struct {
	results [chunkResults]RuleResult
	used    int
}

const chunkResults = 32

var resultsChunks = sync.Pool{New: func() any { return new(resultsChunk) }}

// newResults returns n zero rule results no other decision holds.
func newResults(n int) []RuleResult {
	if n > chunkResults/4 {
		return make([]RuleResult, n)
	}
	c := resultsChunks.Get().(*resultsChunk)
	if c.used+n > chunkResults {
		c = new(resultsChunk)
	}
	r := c.results[c.used : c.used+n : c.used+n]
	c.used += n
	resultsChunks.Put(c)
	return r
}
