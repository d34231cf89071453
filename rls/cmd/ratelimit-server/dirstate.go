package main

import (
	"os"
	"path/filepath"
)

// dirState identifies a version of the runtime directory without reading
// its files: for each .yaml or .yml entry, the file its path leads to
// after every symlink, its size and its modification time. Whatever way
// a new version arrives, the state differs: an edit in place changes the
// size or the time; an editor's save renames a new file over the old one;
// a Kubernetes ConfigMap swaps its "..data" symlink, so that each file's
// link leads to a file of another directory; a swap of a symlinked
// RUNTIME_ROOT leads every path elsewhere at once. An edit that keeps the
// size within the file system's timestamp resolution waits for the next
// change.
type dirState struct {
	files map[string]os.FileInfo // by entry name
	err   string                 // the directory could not be read
}

// statDir is the state of dir.
func statDir(dir string) dirState {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dirState{err: err.Error()}
	}
	s := dirState{files: map[string]os.FileInfo{}}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext != ".yaml" && ext != ".yml" {
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			s.files[e.Name()] = info // a dangling link counts as absent, as rls.LoadDir skips it
		}
	}
	return s
}

// same reports whether s and o are one version of the directory.
func (s dirState) same(o dirState) bool {
	if s.err != o.err || len(s.files) != len(o.files) {
		return false
	}
	for name, a := range s.files {
		b, ok := o.files[name]
		if !ok || !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
			return false
		}
	}
	return true
}
