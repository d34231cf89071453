package main

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// TestRedisEnvErrors: a Redis setting that cannot be honoured stops the
// server at start, naming its variable, and never shows a password.
func TestRedisEnvErrors(t *testing.T) {
	url := "REDIS_URL=127.0.0.1:6379"
	for _, c := range []struct {
		name string
		vars []string
	}{
		{"REDIS_TYPE", []string{url, "REDIS_TYPE=ring"}},
		{"REDIS_TYPE", []string{"REDIS_TYPE=cluster"}}, // no REDIS_URL: miniredis
		{"REDIS_TLS", []string{"REDIS_TLS=true"}},
		{"REDIS_AUTH", []string{"REDIS_AUTH=s3cret"}},
		{"REDIS_SENTINEL_AUTH", []string{"REDIS_SENTINEL_AUTH=s3cret"}},
		{"REDIS_URL", []string{url, "REDIS_TYPE=sentinel"}},
		{"REDIS_TLS", []string{url, "REDIS_TLS=maybe"}},
		{"REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", []string{url, "REDIS_TLS=true", "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=maybe"}},
		{"REDIS_TLS_CLIENT_KEY", []string{url, "REDIS_TLS=true", "REDIS_TLS_CLIENT_CERT=/nowhere/cert.pem"}},
		{"REDIS_TLS_CACERT", []string{url, "REDIS_TLS=true", "REDIS_TLS_CACERT=/nowhere/ca.pem"}},
		{"REDIS_POOL_SIZE", []string{url, "REDIS_POOL_SIZE=-1"}},
		{"REDIS_POOL_SIZE", []string{url, "REDIS_POOL_SIZE=many"}},
		{"REDIS_TIMEOUT", []string{url, "REDIS_TIMEOUT=10"}},
		{"REDIS_TIMEOUT", []string{url, "REDIS_TIMEOUT=-1s"}},
	} {
		_, err := readEnv(env(c.vars...))
		if err == nil || !strings.Contains(err.Error(), c.name) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: %v, want an error naming %s (and no password)", c.vars, err, c.name)
		}
	}
}

// TestRedisClients: REDIS_TYPE chooses the client, REDIS_AUTH its
// credentials as the reference reads them, REDIS_POOL_SIZE its pool,
// REDIS_TIMEOUT the store's timeout (100 ms unset).
func TestRedisClients(t *testing.T) {
	read := func(vars ...string) redisConn {
		t.Helper()
		s, err := readEnv(env(vars...))
		if err != nil {
			t.Fatal(err)
		}
		return s.redis
	}
	single := read("REDIS_URL=127.0.0.1:1", "REDIS_AUTH=alice:pw:with:colons", "REDIS_POOL_SIZE=7")
	c := single.client("tcp", "127.0.0.1:1").(*redis.Client)
	defer c.Close()
	if o := c.Options(); o.Username != "alice" || o.Password != "pw:with:colons" || o.PoolSize != 7 || o.TLSConfig != nil {
		t.Errorf("single: user %q password %q pool %d TLS %v", o.Username, o.Password, o.PoolSize, o.TLSConfig != nil)
	}
	// 0 is the client's default, as the reference's client reads it.
	zero := read("REDIS_URL=127.0.0.1:1", "REDIS_POOL_SIZE=0").client("tcp", "127.0.0.1:1").(*redis.Client)
	defer zero.Close()
	if o := zero.Options(); o.PoolSize != 10*runtime.GOMAXPROCS(0) {
		t.Errorf("REDIS_POOL_SIZE=0: pool %d, want go-redis's default, %d", o.PoolSize, 10*runtime.GOMAXPROCS(0))
	}
	cluster := read("REDIS_TYPE=CLUSTER", "REDIS_URL=127.0.0.1:1,127.0.0.1:2", "REDIS_AUTH=pw", "REDIS_TIMEOUT=250ms", "REDIS_TLS=true")
	cc := cluster.client("tcp", "127.0.0.1:1,127.0.0.1:2").(*redis.ClusterClient)
	defer cc.Close()
	if o := cc.Options(); len(o.Addrs) != 2 || o.Username != "" || o.Password != "pw" || o.TLSConfig == nil {
		t.Errorf("cluster: seeds %q user %q password %q TLS %v", o.Addrs, o.Username, o.Password, o.TLSConfig != nil)
	}
	for _, c := range []struct {
		conn redisConn
		rdb  redis.UniversalClient
		want time.Duration
	}{{single, c, 100 * time.Millisecond}, {cluster, cc, 250 * time.Millisecond}} {
		st, err := redisstore.New(c.rdb, c.conn.storeOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.(store.Remote).Remote(); got != c.want {
			t.Errorf("%s: the store's timeout is %v, want %v", c.conn.typ, got, c.want)
		}
	}
	sentinel := read("REDIS_TYPE=sentinel", "REDIS_URL=rl,127.0.0.1:1", "REDIS_SENTINEL_AUTH=sam:spw", "REDIS_TLS_CACERT=/nowhere/ca.pem")
	if sentinel.sentinelAuth != "sam:spw" || sentinel.tls != nil {
		t.Errorf("sentinel: %+v", sentinel)
	}
	if got := strings.Join(sentinel.unused(env("REDIS_TLS_CACERT=x", "REDIS_SENTINEL_AUTH=y")), "\n"); got != "REDIS_TLS_CACERT: REDIS_TLS is not true: Redis is reached in plain text" {
		t.Errorf("sentinel's unused variables: %q", got)
	}
	if got := single.unused(env("REDIS_SENTINEL_AUTH=y")); len(got) != 1 || !strings.HasPrefix(got[0], "REDIS_SENTINEL_AUTH: ") {
		t.Errorf("single's unused variables: %q", got)
	}
}
