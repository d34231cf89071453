package config

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
)

// The reload hook is the program's code, which may panic or block. The
// reloads it is to hear are queued in Limits.pending and handed to it in
// order, one at a time, by one goroutine at a time (Limits.hooking).

// unlockAndReport releases l.mu, then hands the reloads made under it to
// the hook, which may itself call Reload or Middleware, unless another
// goroutine is handing reloads over (it hands these too, and no reload
// waits for another's hook). With wait (Reload) it hands them over on this
// goroutine; without (Watch), on a new one, so that a hook that blocks
// holds up neither Watch nor Close.
func (l *Limits) unlockAndReport(wait bool) {
	if l.set.onReload == nil {
		l.pending = nil
	}
	claimed := !l.hooking && len(l.pending) > 0
	if claimed {
		l.hooking = true
	}
	l.mu.Unlock()
	switch {
	case !claimed:
	case wait:
		l.handOver()
	default:
		go l.handOver()
	}
}

// handOver passes the queued reloads to the hook until none is left; its
// caller set l.hooking, which it clears then.
func (l *Limits) handOver() {
	for {
		l.mu.Lock()
		pending := l.pending
		l.pending = nil
		l.hooking = len(pending) > 0
		l.mu.Unlock()
		if len(pending) == 0 {
			return
		}
		for _, err := range pending {
			l.callHook(err)
		}
	}
}

// callHook passes err to the hook. A panic is recovered and logged with
// what it was (the value's type, or a runtime error's message) and where
// (the stack), not the value itself, which may hold anything the program
// has.
func (l *Limits) callHook(err error) {
	defer func() {
		if p := recover(); p != nil {
			what := fmt.Sprintf("%T", p)
			if re, ok := p.(runtime.Error); ok {
				what = re.Error()
			}
			slog.Error("ratelimit: the reload hook panicked; reloads go on", "file", l.path, "panic", what, "stack", string(debug.Stack()))
		}
	}()
	l.set.onReload(err)
}
