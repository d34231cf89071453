package transport

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
)

func TestFirstKey(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []any
		want string
		ok   bool
	}{
		{[]any{"fcall", "rl_stack_x", 2, "k1", "k2", "", "1"}, "k1", true},
		{[]any{"evalsha", "abc", 1, "k", "a"}, "k", true},
		{[]any{"eval", "return 1", 1, "k"}, "k", true},
		{[]any{"fcall", "f", 0, "arg"}, "", false},
		{[]any{"get", "k", 1, "x"}, "", false},
		{[]any{"function", "load", "src"}, "", false},
	} {
		got, ok := firstKey(redis.NewCmd(ctx, tc.args...))
		if got != tc.want || ok != tc.ok {
			t.Errorf("firstKey(%v) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}

// replyError is a Redis error reply.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

func TestRedirected(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{replyError("MOVED 3999 127.0.0.1:7001"), true},
		{replyError("ASK 3999 127.0.0.1:7001"), true},
		{replyError("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{replyError("CLUSTERDOWN The cluster is down"), true},
		{replyError("CROSSSLOT Keys in request don't hash to the same slot"), true},
		{replyError("ERR Script attempted to access a non local key in a cluster node script: rl_slots_x"), true},
		{fmt.Errorf("shared: %w", fault.Shared(replyError("MOVED 1 127.0.0.1:7002"), &fault.RoundTrip{})), true},
		{replyError("ERR ratelimit: unknown algorithm"), false},
		{replyError("NOSCRIPT No matching script"), false},
		{errors.New("MOVED 1 127.0.0.1:7002"), false}, // not a reply: a network error says nothing ran
		{context.DeadlineExceeded, false},
		{nil, false},
	} {
		if got := redirected(tc.err); got != tc.want {
			t.Errorf("redirected(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
