package config

import (
	"context"
	"os"
	"time"
)

// fingerprint identifies a version of the file without reading it: the
// file the path leads to (after symlinks), its size and its modification
// time. A Kubernetes ConfigMap update swaps the ..data symlink to a new
// directory, and an editor's save renames a new file over the old: either
// way the path leads to another file. An in-place write changes the size
// or the time (a write that keeps the size within the file system's
// timestamp resolution, rare on today's nanosecond file systems, waits for
// the next change or a Reload).
type fingerprint struct {
	info os.FileInfo
}

// stat is the fingerprint of the file at path.
func stat(path string) (fingerprint, error) {
	info, err := os.Stat(path)
	return fingerprint{info: info}, err
}

// same reports whether fp and other are one version of the file.
func (fp fingerprint) same(other fingerprint) bool {
	a, b := fp.info, other.info
	if a == nil || b == nil {
		return a == b
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Watch checks the file every interval (a second, say) until ctx ends or
// the Limits are closed (it returns at once then, not at its next tick),
// and reloads it when it leads to another file or the file changed (see
// Reload): a Kubernetes ConfigMap's symlink swap, an editor's rename over
// the old file, a write in place. A change that is
// not valid is logged and reported to the reload hook once, and the old
// rules stay in force until a valid version appears; a file that cannot
// be read is read again at every tick, reported once. The hook is called
// on another goroutine: one that blocks or panics does not stop Watch
// (see WithReloadHook). An interval under a millisecond means a second.
// Run it in a goroutine of its own.
func (l *Limits) Watch(ctx context.Context, interval time.Duration) {
	if interval < time.Millisecond {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.done:
			return
		case <-t.C:
		}
		if !l.poll() {
			return
		}
	}
}

// poll reloads the file if it changed since it was last read, and reports
// whether watching goes on (the Limits are not closed).
func (l *Limits) poll() bool {
	l.mu.Lock()
	defer l.unlockAndReport(false)
	if l.closed {
		return false
	}
	fp, err := stat(l.path)
	if err == nil && fp.same(l.seen) {
		return true
	}
	if err != nil && l.seen.info == nil {
		return true // still missing: reported once
	}
	var data []byte
	if err == nil {
		if fp, data, err = readFile(l.path); err != nil {
			// Unreadable (a file briefly at mode 000, say): read again at
			// the next tick, whatever its fingerprint, reported once.
			if !fp.same(l.unread) {
				l.unread = fp
				_ = l.reload(nil, err)
			}
			return true
		}
	}
	l.seen, l.unread = fp, fingerprint{}
	_ = l.reload(data, err)
	return true
}
