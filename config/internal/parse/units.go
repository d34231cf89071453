package parse

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/duration"
)

// kind is one algorithm as a file writes it: its field, the words its value
// takes after the rate, the form an error shows, and how the parts make
// the algorithm.
type kind struct {
	field string
	// words are the optional words after the head ("burst", "anchored"):
	// true when the word takes a value.
	words map[string]bool
	form  string
	// head reads the value's first word: a rate (n per period), or, for a
	// concurrency limit, a count.
	rate bool
	make func(n int, period time.Duration, w words) algorithms.Algorithm
}

// words are the optional parts of a value, as read: a count, a duration,
// or a flag.
type words struct {
	counts    map[string]int
	durations map[string]time.Duration
	flags     map[string]bool
}

// orDefault is the count of word w, or def when the value does not say.
func (w words) orDefault(name string, def int) int {
	if n, ok := w.counts[name]; ok {
		return n
	}
	return def
}

// kinds are every algorithm of package algorithms, in the order the
// documentation lists them.
var kinds = []kind{
	{field: "fixed_window", words: map[string]bool{"anchored": false}, rate: true,
		form: `"<n>/<period>", optionally followed by "anchored" (e.g. "100/1m", "10/1h anchored")`,
		make: func(n int, p time.Duration, w words) algorithms.Algorithm {
			return algorithms.FixedWindow{Limit: n, Window: p, Anchored: w.flags["anchored"]}
		}},
	{field: "sliding_window", rate: true, form: `"<n>/<period>" (e.g. "100/1m")`,
		make: func(n int, p time.Duration, _ words) algorithms.Algorithm {
			return algorithms.SlidingWindow{Limit: n, Window: p}
		}},
	{field: "sliding_log", rate: true, form: `"<n>/<period>" (e.g. "100/1m")`,
		make: func(n int, p time.Duration, _ words) algorithms.Algorithm {
			return algorithms.SlidingLog{Limit: n, Window: p}
		}},
	{field: "token_bucket", words: map[string]bool{"burst": true}, rate: true,
		form: `"<n>/<period>", optionally followed by "burst <n>" (e.g. "5000/s burst 10000"; the burst is n when not given)`,
		make: func(n int, p time.Duration, w words) algorithms.Algorithm {
			return algorithms.TokenBucket{Capacity: w.orDefault("burst", n), Rate: n, Period: p}
		}},
	{field: "leaky_bucket", words: map[string]bool{"burst": true}, rate: true,
		form: `"<n>/<period>", optionally followed by "burst <n>" (e.g. "10/s burst 20"; the burst is n when not given)`,
		make: func(n int, p time.Duration, w words) algorithms.Algorithm {
			return algorithms.LeakyBucket{Capacity: w.orDefault("burst", n), Rate: n, Period: p}
		}},
	{field: "gcra", words: map[string]bool{"burst": true}, rate: true,
		form: `"<n>/<period>", optionally followed by "burst <n>" (e.g. "5000/s burst 10000"; the burst is n when not given)`,
		make: func(n int, p time.Duration, w words) algorithms.Algorithm {
			return algorithms.GCRA{Rate: n, Period: p, Burst: w.orDefault("burst", n)}
		}},
	{field: "queue", words: map[string]bool{"max_delay": true}, rate: true,
		form: `"<n>/<period>", optionally followed by "max_delay <duration>" (e.g. "10/s max_delay 2s"; no delay when not given)`,
		make: func(n int, p time.Duration, w words) algorithms.Algorithm {
			return algorithms.Queue{Rate: n, Period: p, MaxDelay: w.durations["max_delay"]}
		}},
	{field: "concurrency", words: map[string]bool{"ttl": true},
		form: `"<n> ttl <duration>" (e.g. "50 ttl 30s")`,
		make: func(n int, _ time.Duration, w words) algorithms.Algorithm {
			return algorithms.Concurrency{Limit: n, TTL: w.durations["ttl"]}
		}},
}

// kindFields are the algorithm fields, as an error lists them.
var kindFields = func() []string {
	var f []string
	for _, k := range kinds {
		f = append(f, k.field)
	}
	return f
}()

// algorithm reads the one algorithm field of m (a rule, or a plan's value,
// read at n), reporting none, several, or a value that does not parse or
// validate.
func (p *parser) algorithm(n *yaml.Node, m map[string]*yaml.Node, field string) algorithms.Algorithm {
	var given []kind
	for _, k := range kinds {
		if _, ok := m[k.field]; ok {
			given = append(given, k)
		}
	}
	// The first in the file is the algorithm; any later one is the mistake.
	slices.SortFunc(given, func(a, b kind) int {
		na, nb := m[a.field], m[b.field]
		return cmp.Or(cmp.Compare(na.Line, nb.Line), cmp.Compare(na.Column, nb.Column))
	})
	var alg algorithms.Algorithm
	var first string
	for _, k := range given {
		v := m[k.field]
		if first != "" {
			p.fail(v, join(field, k.field), "found a second algorithm (%s is set); allowed: one of %s", first, strings.Join(kindFields, ", "))
			continue
		}
		first = k.field
		alg = p.kindValue(k, v, join(field, k.field))
	}
	if first == "" {
		p.fail(n, field, "found no algorithm; required: one of %s", strings.Join(kindFields, ", "))
	}
	return alg
}

// kindValue reads the value of algorithm field k.
func (p *parser) kindValue(k kind, n *yaml.Node, field string) algorithms.Algorithm {
	s, ok := p.str(n, field, k.form)
	if !ok {
		return nil
	}
	alg, err := parseKind(k, s)
	if err == nil {
		err = alg.Validate()
	}
	if err != nil {
		p.fail(n, field, "found %q: %s; allowed: %s", s, strings.TrimPrefix(err.Error(), algorithms.ErrInvalid.Error()+": "), k.form)
		return nil
	}
	return alg
}

// parseKind reads s as algorithm k's value.
func parseKind(k kind, s string) (algorithms.Algorithm, error) {
	toks := strings.Fields(s)
	if len(toks) == 0 {
		return nil, errors.New("nothing to read")
	}
	var n int
	var period time.Duration
	var err error
	if k.rate {
		n, period, err = parseRate(toks[0])
	} else {
		n, err = parseCount(toks[0])
	}
	if err != nil {
		return nil, err
	}
	w := words{counts: map[string]int{}, durations: map[string]time.Duration{}, flags: map[string]bool{}}
	for i := 1; i < len(toks); i++ {
		word := toks[i]
		takes, ok := k.words[word]
		switch {
		case !ok:
			return nil, fmt.Errorf("unexpected %q", word)
		case w.flags[word] || hasWord(w, word):
			return nil, fmt.Errorf("%q given twice", word)
		case !takes:
			w.flags[word] = true
			continue
		case i+1 == len(toks):
			return nil, fmt.Errorf("%q without its value", word)
		}
		i++
		if word == "burst" {
			w.counts[word], err = parseCount(toks[i])
		} else {
			w.durations[word], err = duration.Parse(toks[i])
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", word, err)
		}
	}
	if k.field == "concurrency" && !hasWord(w, "ttl") {
		return nil, errors.New(`no "ttl"`)
	}
	return k.make(n, period, w), nil
}

// hasWord reports whether w has a value for word.
func hasWord(w words, word string) bool {
	_, c := w.counts[word]
	_, d := w.durations[word]
	return c || d
}

// parseRate reads "<n>/<period>": a count per a unit ("s", "minute") or a
// duration ("1m", "90s").
func parseRate(s string) (int, time.Duration, error) {
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not <n>/<period>", s)
	}
	n, err := parseCount(num)
	if err != nil {
		return 0, 0, err
	}
	if d, ok := units[per]; ok {
		return n, d, nil
	}
	d, err := duration.Parse(per)
	if err != nil {
		return 0, 0, fmt.Errorf("period: %w", err)
	}
	return n, d, nil
}

// units are the periods a rate may name by a word alone ("100/minute").
var units = map[string]time.Duration{
	"ms": time.Millisecond,
	"s":  time.Second, "sec": time.Second, "second": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute,
	"h": time.Hour, "hour": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour,
}

// parseCount reads a positive whole number.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}

// duration reads a duration field.
func (p *parser) duration(n *yaml.Node, field string) time.Duration {
	const allowed = "a duration (e.g. 1m, 1h30m, 250ms, 7d)"
	s, ok := p.str(n, field, allowed)
	if !ok {
		return 0
	}
	d, err := duration.Parse(s)
	if err != nil || d < 0 {
		p.bad(n, field, allowed)
		return 0
	}
	return d
}
