package main

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// debugClient asks the servers' debug ports, briefly.
var debugClient = &http.Client{Timeout: 2 * time.Second}

// goroutines is the number of goroutines a server reports on its debug
// port (/debug/pprof/goroutine?debug=1, "goroutine profile: total N"),
// -1 when it does not answer.
func goroutines(debugAddr string) int {
	res, err := debugClient.Get("http://" + debugAddr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(io.LimitReader(res.Body, 4096)).ReadString('\n')
	if err != nil && line == "" {
		return -1
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutine profile: total ")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}
