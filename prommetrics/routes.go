package prommetrics

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// The route label's bound (see the package doc): at most maxRoutes
// distinct values, each of at most maxRouteLen bytes; any other route is
// counted as otherRoute, which no route can be (an HTTP pattern or a gRPC
// full method has a "/").
const (
	maxRoutes   = 1000
	maxRouteLen = 256
	otherRoute  = "other"
)

// routeSet is the routes a Collector labels series by: the first
// maxRoutes distinct ones it sees, each kept for the Collector's life, as
// its series are.
type routeSet struct {
	mu   sync.RWMutex
	seen map[string]bool
}

// label is route's label value: route, its bytes that are not UTF-8
// replaced by U+FFFD (WithLabelValues panics on them), when the set keeps
// it; otherRoute when it is too long or the set is full without it.
func (s *routeSet) label(route string) string {
	if !utf8.ValidString(route) {
		route = strings.ToValidUTF8(route, "\uFFFD")
	}
	if len(route) > maxRouteLen {
		return otherRoute
	}
	s.mu.RLock()
	kept, full := s.seen[route], len(s.seen) >= maxRoutes
	s.mu.RUnlock()
	switch {
	case kept:
		return route
	case full:
		return otherRoute
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.seen[route] && len(s.seen) >= maxRoutes {
		return otherRoute
	}
	s.seen[route] = true
	return route
}
