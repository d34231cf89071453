package script

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Script is an assembled script, its SHA-1, and its driver (which names
// its function in the Library).
type Script struct {
	src, hash, driver string
	srcArg, hashArg   any // src and hash, boxed once for command lines
}

func newScript(src, driver string) *Script {
	sum := sha1.Sum([]byte(src))
	hash := hex.EncodeToString(sum[:])
	return &Script{src: src, hash: hash, driver: driver, srcArg: src, hashArg: hash}
}

// Source is the script's text.
func (s *Script) Source() string { return s.src }

// Hash is the script's SHA-1, as EVALSHA names it.
func (s *Script) Hash() string { return s.hash }

// processor is implemented by every go-redis client kind: Client,
// ClusterClient, Ring, the failover client and AutoPipeliner.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// noRetry is a command go-redis never sends a second time once it was
// written: a script whose reply was lost may have run, and running it
// again would decide (and consume) twice. go-redis still re-sends it when
// it was never written (a dial failure, a closed connection), which is
// safe.
type noRetry struct{ *redis.Cmd }

// NoRetry tells go-redis not to retry the command after it was written.
func (noRetry) NoRetry() bool { return true }

// Run runs s with EVALSHA, and with EVAL when the server answers NOSCRIPT
// (after a restart, a failover or SCRIPT FLUSH; the script did not run),
// so nothing needs loading up front. On clients that take commands through
// Process (every go-redis client kind), a script that may have run is
// never re-sent by go-redis's own retries. Error replies are cleaned of
// the arguments Redis quotes back (see Clean).
func (s *Script) Run(ctx context.Context, rdb redis.Scripter, call Call) (any, error) {
	return s.run(ctx, time.Time{}, rdb, call)
}

// run is Run with the EVAL after NOSCRIPT sent within deadline, the first
// send's (none when zero; see Caller).
func (s *Script) run(ctx context.Context, deadline time.Time, rdb redis.Scripter, call Call) (any, error) {
	v, err := run(ctx, rdb, "evalsha", s.hashArg, call)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		ctx, cancel := within(ctx, deadline)
		v, err = run(ctx, rdb, "eval", s.srcArg, call)
		cancel()
	}
	return v, Clean(err)
}

// Call is a script call's command line, built once for every way it may be
// sent: three places for the verb, the script or function and the key count
// (filled in when it is sent), the keys, then the arguments.
type Call struct {
	line []any
	keys int
}

// NewCall returns an empty Call with room for keys keys and args arguments.
func NewCall(keys, args int) Call { return NewCallOn(make([]any, 0, 3+keys+args)) }

// NewCallOn returns an empty Call built in line, whose capacity holds the
// three places, the keys and the arguments: a caller can allocate it with
// something else.
func NewCallOn(line []any) Call { return Call{line: line[:3]} }

// CallOf is a Call of keys and args.
func CallOf(keys []string, args ...any) Call {
	c := NewCall(len(keys), len(args))
	for _, k := range keys {
		c.Key(k)
	}
	c.Arg(args...)
	return c
}

// Key adds a key; every key comes before the first argument.
func (c *Call) Key(key string) {
	c.line = append(c.line, key)
	c.keys++
}

// Arg adds arguments.
func (c *Call) Arg(args ...any) { c.line = append(c.line, args...) }

// run sends call with verb ("evalsha", "eval" or "fcall") and its script
// (its SHA-1 or its source) or function name, strings boxed once (see
// Script, FunctionLibrary), so that the command line costs no allocation
// for them. A call is sent again (another verb) only once its last
// sending has its reply.
func run(ctx context.Context, rdb redis.Scripter, verb, script any, call Call) (any, error) {
	line := call.line
	p, ok := rdb.(processor)
	if !ok {
		keys := make([]string, call.keys)
		for i := range keys {
			keys[i] = line[3+i].(string)
		}
		args := line[3+call.keys:]
		switch verb {
		case "eval":
			return rdb.Eval(ctx, script.(string), keys, args...).Result()
		case "evalsha":
			return rdb.EvalSha(ctx, script.(string), keys, args...).Result()
		}
		return nil, cleaned{msg: "ERR unknown command: this client cannot send fcall"} // scripts only
	}
	line[0], line[1], line[2] = verb, script, call.keys
	cmd := redis.NewCmd(ctx, line...)
	if call.keys == 0 {
		cmd.SetFirstKeyPos(0)
	}
	if err := p.Process(ctx, noRetry{cmd}); err != nil {
		return nil, err // cmd may still be in a coalesced batch: not read
	}
	return cmd.Result()
}

// Clean returns err without what a Redis error reply may quote of the
// call: its arguments ("unknown command 'evalsha', with args beginning
// with: ..." quotes the keys), or the key an ACL refused (Redis 7.2:
// "NOPERM User app has no permissions to access the '<key>' key"), either
// of which carries client identities: an error that reaches a log must
// not carry an identity.
func Clean(err error) error {
	if err == nil {
		return nil
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		return err
	}
	msg := reply.Error()
	if i := strings.Index(msg, ", with args beginning with"); i >= 0 {
		return cleaned{msg: msg[:i]}
	}
	if i := strings.Index(msg, refusedKey); i >= 0 && strings.HasPrefix(msg, "NOPERM") {
		return cleaned{msg: msg[:i] + " to access a key"}
	}
	return err
}

// refusedKey is where an ACL's refusal of a key starts to quote it (Redis
// 7.2; 7.0 quotes none).
const refusedKey = " to access the '"

// cleaned is a Redis error reply with its quoted arguments cut off.
type cleaned struct{ msg string }

func (e cleaned) Error() string { return e.msg }

// RedisError marks it as a Redis reply (as redis.Error does), so it is not
// taken for a network failure.
func (cleaned) RedisError() {}
