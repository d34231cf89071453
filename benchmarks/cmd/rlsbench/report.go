package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// result is one server's outcome of every phase.
type result struct {
	name   string
	closed []load // one per -callers
	open   load
	hot    hot
	outage outage
}

// loadPhase names a load phase and finds its outcome in a result.
type loadPhase struct {
	label string
	get   func(result) load
}

// loadPhases are the closed-loop phases, then the open loop; the hot key
// last, whose calls are a load too.
func loadPhases(s settings) []loadPhase {
	var ps []loadPhase
	for i, n := range s.callers {
		ps = append(ps, loadPhase{fmt.Sprintf("closed loop, %d callers", n), func(r result) load { return r.closed[i] }})
	}
	return append(ps, loadPhase{fmt.Sprintf("open loop, %d/s", s.rate), func(r result) load { return r.open }})
}

// row is a line of the table: a figure for each server, shown by format.
type row struct {
	name   string
	v      [2]float64 // ours, reference; NaN: not known
	format func(float64) string
}

// report prints the table of both servers' results, ours first, with
// the ratio ours/reference of each figure.
func report(w io.Writer, s settings, ours, ref result) {
	var rows []row
	add := func(name string, f func(result) float64, format func(float64) string) {
		rows = append(rows, row{name, [2]float64{f(ours), f(ref)}, format})
	}
	phase := func(label string, get func(result) load) {
		add(label+": requests/s", func(r result) float64 { return get(r).rate() }, count)
		add(label+": p50", func(r result) float64 { return float64(get(r).p50) }, duration)
		add(label+": p99", func(r result) float64 { return float64(get(r).p99) }, duration)
		add(label+": errors", func(r result) float64 { return float64(get(r).errs) }, count)
		add(label+": admitted", func(r result) float64 { return share(get(r).admitted, get(r).decided) }, percent)
		add(label+": Redis CPU/request (INFO cpu)", func(r result) float64 { return float64(get(r).cost.redisCPU) }, duration)
		add(label+": Redis commands sent/request", func(r result) float64 { return get(r).cost.redisCommands }, decimal)
		add(label+": Redis command time/request (commandstats)", func(r result) float64 { return float64(get(r).cost.redisCommandTime) }, duration)
		add(label+": server CPU/request", func(r result) float64 { return float64(get(r).cost.serverCPU) }, duration)
		add(label+": load generator CPU/request", func(r result) float64 { return float64(get(r).cost.clientCPU) }, duration)
	}
	for _, p := range loadPhases(s) {
		phase(p.label, p.get)
	}
	add(fmt.Sprintf("hot key: admitted of %d (%d callers, %d calls)", s.hotLimit, s.hotCallers, 2*s.hotLimit),
		func(r result) float64 { return float64(r.hot.admitted) }, count)
	add("hot key: errors", func(r result) float64 { return float64(r.hot.errs) }, count)
	dl := s.outage.deadline
	add(fmt.Sprintf("outage: answered within %v while Redis is down", dl), func(r result) float64 {
		return share(r.outage.downAnswered, r.outage.downCalls)
	}, percent)
	add(fmt.Sprintf("outage: answered within %v, whole phase", dl), func(r result) float64 {
		return share(r.outage.answered, r.outage.calls)
	}, percent)
	moments := []struct {
		name string
		get  func(outage) snapshot
	}{
		{"before", func(o outage) snapshot { return o.before }},
		{"during", func(o outage) snapshot { return o.during }},
		{fmt.Sprintf("%v after", s.outage.after), func(o outage) snapshot { return o.after }},
	}
	for _, m := range moments {
		add("outage: goroutines "+m.name, func(r result) float64 { return known(float64(m.get(r.outage).goroutines)) }, count)
	}
	for _, m := range moments {
		add("outage: RSS "+m.name, func(r result) float64 { return known(float64(m.get(r.outage).rss)) }, mebibytes)
	}
	add("outage: recovery (Redis back to first OK)", func(r result) float64 { return known(float64(r.outage.recovery)) }, duration)
	add("SIGTERM: time to exit", func(r result) float64 {
		if !r.outage.exited {
			return math.Inf(1)
		}
		return float64(r.outage.exit)
	}, func(v float64) string {
		if math.IsInf(v, 1) {
			return fmt.Sprintf("none in %v (killed)", s.outage.termWait)
		}
		return duration(v)
	})

	fmt.Fprintf(w, "\n| | %s | %s | %s/%s |\n|---|---:|---:|---:|\n", ours.name, ref.name, ours.name, ref.name)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.name, show(r.format, r.v[0]), show(r.format, r.v[1]), ratio(r.v[0], r.v[1]))
	}
}

// share is n of total, NaN without any.
func share(n, total int64) float64 {
	if total == 0 {
		return math.NaN()
	}
	return float64(n) / float64(total)
}

// known is v, or NaN for a negative (not known) one.
func known(v float64) float64 {
	if v < 0 {
		return math.NaN()
	}
	return v
}

// show formats v, or n/a.
func show(format func(float64) string, v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return format(v)
}

// ratio is a/b, or – when it means nothing.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) || b == 0 {
		return "–"
	}
	if r := a / b; r < 0.1 && r != 0 {
		return strconv.FormatFloat(r, 'g', 2, 64)
	}
	return decimal(a / b)
}

func decimal(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func count(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

func mebibytes(v float64) string { return strconv.FormatFloat(v/(1<<20), 'f', 1, 64) + " MiB" }

// duration shows a duration in ns with three significant digits or so.
func duration(v float64) string {
	d := time.Duration(v)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return d.String()
}
