package script

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
)

// sent counts the commands a client sends, by name.
type sent struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *sent) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *sent) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.mu.Lock()
		s.n[cmd.Name()]++
		s.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (s *sent) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// since returns the counts of fcall and evalsha since the last call.
func (s *sent) since() (fcall, evalsha int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fcall, evalsha = s.n["fcall"], s.n["evalsha"]
	s.n = map[string]int{}
	return fcall, evalsha
}

// userClient creates an ACL user with rules on s and returns a client
// logged in as it, whose commands are counted.
func userClient(t *testing.T, s *redistest.Server, user string, rules ...string) (*redis.Client, *sent) {
	t.Helper()
	acl := func(rules ...string) {
		args := []any{"ACL", "SETUSER", user}
		for _, r := range rules {
			args = append(args, r)
		}
		if err := s.Client.Do(context.Background(), args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	acl(append([]string{"reset", "on", ">pw"}, rules...)...)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Username: user, Password: "pw", MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	counted := &sent{n: map[string]int{}}
	rdb.AddHook(counted)
	return rdb, counted
}

// deleteOne is a call of delete.lua that deletes one key and leaves no
// mark.
func deleteOne() Call { return CallOf([]string{"rl:{x}:k"}, "", 1) }

// An ACL that refuses FCALL and FUNCTION makes the Caller run scripts; once
// the ACL allows them, the Caller goes back to functions at its next retry
// (not before), and stays there.
func TestFunctionsRefusedThenAllowed(t *testing.T) {
	s := redistest.Start(t)
	rdb, counted := userClient(t, s, "app", "+@all", "-fcall", "-function", "~*")
	c := NewCaller(rdb, Auto, 0)
	run := func() {
		t.Helper()
		if _, err := c.Run(context.Background(), Delete(), deleteOne()); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if fcall, evalsha := counted.since(); fcall != 1 || evalsha != 1 || c.state.Load() != useScripts {
		t.Fatalf("FCALL refused: %d FCALLs, %d EVALSHAs, state %d; want one of each, then scripts", fcall, evalsha, c.state.Load())
	}
	if err := s.Client.Do(context.Background(), "ACL", "SETUSER", "app", "+fcall", "+function").Err(); err != nil {
		t.Fatal(err)
	}
	run() // the retry is not due
	if fcall, evalsha := counted.since(); fcall != 0 || evalsha != 1 {
		t.Fatalf("before the retry: %d FCALLs, %d EVALSHAs; want scripts only", fcall, evalsha)
	}
	c.retryAt.Store(0) // the retry is due
	run()
	run()
	if fcall, evalsha := counted.since(); fcall != 3 || evalsha != 0 || c.state.Load() != useFunctions {
		t.Errorf("after the retry: %d FCALLs, %d EVALSHAs, state %d; want functions again (the first FCALL answered Function not found)", fcall, evalsha, c.state.Load())
	}
}

// An ACL that refuses the keys is an error, not a reason to leave
// functions: once it is fixed, decisions run as functions at once.
func TestKeysRefusedKeepFunctions(t *testing.T) {
	s := redistest.Start(t)
	rdb, counted := userClient(t, s, "app", "+@all", "~other:*")
	c := NewCaller(rdb, Auto, 0)
	_, err := c.Run(context.Background(), Delete(), deleteOne())
	if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") || c.state.Load() == useScripts {
		t.Fatalf("keys refused: %v, state %d; want the NOPERM error, functions kept", err, c.state.Load())
	}
	if err := s.Client.Do(context.Background(), "ACL", "SETUSER", "app", "allkeys").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), Delete(), deleteOne()); err != nil {
		t.Fatal(err)
	}
	if _, evalsha := counted.since(); evalsha != 0 || c.state.Load() != useFunctions {
		t.Errorf("%d EVALSHAs, state %d; want functions only", evalsha, c.state.Load())
	}
}

// Which answers mean "no functions here" (the texts of Redis 6, 7.0, 7.2
// and miniredis).
func TestUnsupported(t *testing.T) {
	for msg, want := range map[string]bool{
		"ERR unknown command 'fcall', with args beginning with: ":                         true,
		"ERR unknown command `fcall`, with args beginning with: ":                         true,
		"ERR unknown subcommand 'load'. Try FUNCTION HELP.":                               true,
		"NOPERM this user has no permissions to run the 'fcall' command":                  true,
		"NOPERM this user has no permissions to run the 'function|load' command":          true,
		"NOPERM User app has no permissions to run the 'fcall' command":                   true,
		"NOPERM this user has no permissions to access one of the keys used as arguments": false,
		"NOPERM No permissions to access a key":                                           false,
		"NOPERM User app has no permissions to access the 'rl:{'fcall}:k' key":            false, // 7.2 quotes the key
		"ERR Function not found":                                  false,
		"OOM command not allowed when used memory > 'maxmemory'.": false,
	} {
		if got := unsupported(proto(msg)); got != want {
			t.Errorf("%q: unsupported %v, want %v", msg, got, want)
		}
	}
	if unsupported(errors.New("NOPERM this user has no permissions to run the 'fcall' command")) {
		t.Error("an error that is not a Redis reply taken for one")
	}
}

// proto is a Redis error reply.
type proto string

func (e proto) Error() string { return string(e) }
func (proto) RedisError()     {}
