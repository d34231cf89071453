package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/PID/stat's utime and stime (USER_HZ,
// 100 on Linux whatever the kernel's HZ).
const clockTick = 10 * time.Millisecond

// cpuTime is the CPU time the process has used so far, user and system
// (/proc/PID/stat utime+stime).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which may hold spaces and
	// parentheses: state is field 3, utime 14 and stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// rss is the process's resident set size in bytes (/proc/PID/status
// VmRSS), -1 when it cannot be read.
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

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
