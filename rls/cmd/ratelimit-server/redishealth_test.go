package main_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/rls/internal/testredis"
)

// healthStatus is /healthcheck's status code at addr (HOST:PORT).
func healthStatus(t *testing.T, addr string) int {
	t.Helper()
	res, err := http.Get("http://" + addr + "/healthcheck")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// awaitHealth polls /healthcheck at addr until it answers want, failing
// the test after 20 s.
func awaitHealth(t *testing.T, addr string, want int, when string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); healthStatus(t, addr) != want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: /healthcheck never answered %d", when, want)
		}
	}
}

// TestRedisHealthCheck: with REDIS_HEALTH_CHECK_ACTIVE_CONNECTION, as in
// the reference, the server is unhealthy while Redis does not answer and
// healthy again once it does; without it, Redis's state does not change
// the server's health.
func TestRedisHealthCheck(t *testing.T) {
	redis := testredis.StartServer(t)
	_, env := runtimeDir(t, map[string]string{"mine.yaml": "domain: mine\ndescriptors:\n  - key: user\n    rate_limit: {unit: day, requests_per_unit: 1}\n"})
	env = append(env, "REDIS_URL="+redis.Addr)
	bin := build(t)
	cmd, checked, rest := start(t, bin, append(env, "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION=true")...)
	defer stop(t, cmd, rest)
	plainCmd, plain, plainRest := start(t, bin, env...)
	defer stop(t, plainCmd, plainRest)

	awaitHealth(t, checked.http, http.StatusOK, "Redis up")
	redis.Stop(t)
	awaitHealth(t, checked.http, http.StatusInternalServerError, "Redis down")
	if got := healthStatus(t, plain.http); got != http.StatusOK {
		t.Errorf("without the variable, Redis down: /healthcheck %d, want 200", got)
	}
	redis.Restart(t)
	awaitHealth(t, checked.http, http.StatusOK, "Redis back")
}
