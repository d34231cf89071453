package limiter

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"

	"github.com/seed-bff0c9e1/ratelimit"
)

// Two limiters of one process that name one rule with different
// algorithms, on the same state (one store, or one Redis client, and one
// prefix), would count each other's requests under their own limits: a
// limit of 5 filled by requests another limiter admitted under 100. The
// second is refused at construction. The same rule declared again with the
// same algorithm (an admin limiter beside a middleware's) is the point of
// naming it, and is fine.

// declaration is a rule name on one state.
type declaration struct {
	scope        any // what the state is shared by (see scopeOf)
	prefix, rule string
}

// declared is a declaration's algorithm and how many live limiters made it.
type declared struct {
	params    string
	algorithm string
	limiters  int
}

var declarations = struct {
	sync.Mutex
	m map[declaration]*declared
}{m: map[declaration]*declared{}}

// declare records l's rules on its store's state, or returns an ErrConfig
// naming a rule some live limiter declared with another algorithm. The
// records go when l is garbage collected.
func declare(l *Limiter) error {
	scope := scopeOf(l.store)
	if scope == nil {
		return nil
	}
	keys := make([]declaration, 0, len(l.rules))
	for name := range l.rules {
		keys = append(keys, declaration{scope, l.cfg.prefix, name})
	}
	declarations.Lock()
	defer declarations.Unlock()
	for _, k := range keys {
		if d := declarations.m[k]; d != nil && d.params != l.rules[k.rule].algo.params {
			return fmt.Errorf("%w: rule %q is %v here and %s in another limiter on the same store and prefix: they would share its counters; give one of them another name",
				ratelimit.ErrConfig, k.rule, l.rules[k.rule].algo.alg, d.algorithm)
		}
	}
	for _, k := range keys {
		d := declarations.m[k]
		if d == nil {
			r := l.rules[k.rule]
			d = &declared{params: r.algo.params, algorithm: r.algo.alg.String()}
			declarations.m[k] = d
		}
		d.limiters++
	}
	runtime.AddCleanup(l, release, keys)
	return nil
}

// release forgets the declarations of a limiter gone.
func release(keys []declaration) {
	declarations.Lock()
	defer declarations.Unlock()
	for _, k := range keys {
		if d := declarations.m[k]; d != nil {
			if d.limiters--; d.limiters == 0 {
				delete(declarations.m, k)
			}
		}
	}
}

// scopeOf is what a store's state is known to be shared by: a Remote
// store's client (two Redis stores on one client share it), or the store
// itself; nil when that cannot be a map key. Two clients of one server are
// two scopes: a server's address may be another server's in a later test,
// or after a restart.
func scopeOf(store Store) any {
	var scope any = store
	if r, ok := store.(Remote); ok {
		scope, _ = r.Remote()
	}
	if t := reflect.TypeOf(scope); t == nil || !t.Comparable() {
		return nil
	}
	return scope
}
