package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// redisTLSVars configure TLS to Redis; they count only with REDIS_TLS=true.
var redisTLSVars = []string{"REDIS_TLS_CLIENT_CERT", "REDIS_TLS_CLIENT_KEY", "REDIS_TLS_CACERT", "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION"}

// redisConn is how the server reaches Redis, from the reference's
// variables: REDIS_TYPE, REDIS_AUTH, REDIS_SENTINEL_AUTH, REDIS_TLS and
// its files, REDIS_POOL_SIZE and REDIS_TIMEOUT (REDIS_SOCKET_TYPE and
// REDIS_URL are settings.redisNetwork and settings.redisURL).
type redisConn struct {
	typ                string // single, sentinel or cluster
	auth, sentinelAuth string // user:password or password; "" for none
	tls                *tls.Config
	poolSize           int           // 0: go-redis's default
	timeout            time.Duration // the store's; 0: its default
	// health is REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: the server is
	// healthy only while Redis answers (redishealth.go).
	health bool
}

// readRedis reads the Redis variables for REDIS_URL url ("" runs on
// miniredis, which takes none of them).
func readRedis(getenv func(string) string, url string) (redisConn, error) {
	c := redisConn{typ: strings.ToLower(getenv("REDIS_TYPE")), auth: getenv("REDIS_AUTH"), sentinelAuth: getenv("REDIS_SENTINEL_AUTH")}
	if c.typ == "" {
		c.typ = "single"
	}
	if c.typ != "single" && c.typ != "sentinel" && c.typ != "cluster" {
		return c, fmt.Errorf("ratelimit: REDIS_TYPE %q: allowed: single, sentinel, cluster", getenv("REDIS_TYPE"))
	}
	on, err := boolean(getenv, "REDIS_TLS")
	if err != nil {
		return c, err
	}
	if url == "" {
		for _, name := range []string{"REDIS_AUTH", "REDIS_SENTINEL_AUTH"} {
			if getenv(name) != "" {
				return c, fmt.Errorf("ratelimit: %s needs REDIS_URL (without it the server runs on an in-process miniredis)", name)
			}
		}
		if on || c.typ != "single" {
			return c, fmt.Errorf("ratelimit: REDIS_TYPE=%s, REDIS_TLS=%t need REDIS_URL (without it the server runs on an in-process miniredis)", c.typ, on)
		}
	}
	if c.typ == "sentinel" && len(strings.Split(url, ",")) < 2 {
		return c, errors.New("ratelimit: REDIS_URL: REDIS_TYPE=sentinel wants the master's name and the sentinels: name,host:port,host:port")
	}
	if on {
		if c.tls, err = redisTLS(getenv); err != nil {
			return c, err
		}
	}
	if v := getenv("REDIS_POOL_SIZE"); v != "" {
		if c.poolSize, err = strconv.Atoi(v); err != nil || c.poolSize < 0 {
			return c, fmt.Errorf("ratelimit: REDIS_POOL_SIZE %q: want a number of connections (0: the client's default)", v)
		}
	}
	if c.health, err = boolean(getenv, "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION"); err != nil {
		return c, err
	}
	if v := getenv("REDIS_TIMEOUT"); v != "" {
		if c.timeout, err = time.ParseDuration(v); err != nil || c.timeout < 0 {
			return c, fmt.Errorf("ratelimit: REDIS_TIMEOUT %q: want a duration such as 100ms", v)
		}
	}
	return c, nil
}

// unused names the Redis variables set that c does not use, each with why.
func (c redisConn) unused(getenv func(string) string) []string {
	var set []string
	if c.tls == nil {
		set = notes(getenv, redisTLSVars, "REDIS_TLS is not true: Redis is reached in plain text")
	}
	if c.typ != "sentinel" {
		set = append(set, notes(getenv, []string{"REDIS_SENTINEL_AUTH"}, "REDIS_TYPE is not sentinel")...)
	}
	return set
}

// redisTLS is the TLS configuration to Redis: its CA REDIS_TLS_CACERT
// (the system's CAs without it), a client certificate
// REDIS_TLS_CLIENT_CERT and REDIS_TLS_CLIENT_KEY if set, and with
// REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true, the server's certificate
// verified against the CA but not against the address dialled.
func redisTLS(getenv func(string) string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var err error
	if cfg.RootCAs, err = caPool(getenv, "REDIS_TLS_CACERT", false); err != nil {
		return nil, err
	}
	cert, err := keyPair(getenv, "REDIS_TLS_CLIENT_CERT", "REDIS_TLS_CLIENT_KEY")
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	skip, err := boolean(getenv, "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION")
	if err != nil || !skip {
		return cfg, err
	}
	// Go verifies the chain and the name together: skip both, and verify
	// the chain here.
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("ratelimit: redis presented no certificate")
		}
		opts := x509.VerifyOptions{Roots: cfg.RootCAs, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
	return cfg, nil
}

// client is a client of the Redis at url as c says, over network for a
// single Redis.
func (c redisConn) client(network, url string) redis.UniversalClient {
	user, password := userPassword(c.auth)
	switch c.typ {
	case "sentinel":
		addrs := strings.Split(url, ",")
		sentinelUser, sentinelPassword := userPassword(c.sentinelAuth)
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: addrs[0], SentinelAddrs: addrs[1:],
			SentinelUsername: sentinelUser, SentinelPassword: sentinelPassword,
			Username: user, Password: password, TLSConfig: c.tls, PoolSize: c.poolSize})
	case "cluster":
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(url, ","),
			Username: user, Password: password, TLSConfig: c.tls, PoolSize: c.poolSize})
	}
	return redis.NewClient(&redis.Options{Network: network, Addr: url,
		Username: user, Password: password, TLSConfig: c.tls, PoolSize: c.poolSize})
}

// userPassword reads REDIS_AUTH as the reference does: "user:password",
// or a password alone.
func userPassword(auth string) (user, password string) {
	if user, password, ok := strings.Cut(auth, ":"); ok {
		return user, password
	}
	return "", auth
}

// storeOptions are the store's options c chooses.
func (c redisConn) storeOptions() []redisstore.Option {
	var opts []redisstore.Option
	if c.timeout > 0 {
		opts = append(opts, redisstore.WithTimeout(c.timeout))
	}
	if c.typ == "cluster" {
		opts = append(opts, redisstore.WithCluster())
	}
	return opts
}

// pingFor bounds the ping at start.
const pingFor = 5 * time.Second

// check pings rdb, a client of the Redis at addr over network as client
// made it, once at start. A refused password or a TLS handshake that
// fails is a setting to fix, and an error; Redis unreachable is logged,
// and the server starts all the same (its calls fail until Redis
// answers).
func (c redisConn) check(ctx context.Context, rdb redis.UniversalClient, network, addr string, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingFor) // a stop at start waits for it
	defer cancel()
	err := rdb.Ping(ctx).Err()
	if err != nil && c.tls != nil && !isTLSFailure(err) {
		err = cmp.Or(c.tlsRefusal(ctx, network, addr), err)
	}
	switch {
	case err == nil:
		return nil
	case redis.IsAuthError(err), redis.HasErrorPrefix(err, "ERR AUTH"), redis.HasErrorPrefix(err, "ERR invalid password"):
		names := "REDIS_AUTH"
		if c.typ == "sentinel" {
			names = "REDIS_AUTH or REDIS_SENTINEL_AUTH"
		}
		return fmt.Errorf("ratelimit: redis refused the credentials of %s: %w", names, err)
	case isTLSFailure(err):
		return fmt.Errorf("ratelimit: TLS to redis (REDIS_TLS and its files) failed: %w", err)
	}
	log.Warn("ratelimit: redis does not answer yet; calls fail until it does", "err", err)
	return nil
}

// tlsRefusal is the TLS alert with which the Redis at addr (a cluster's
// first node; none is looked for behind sentinels) refuses c's TLS, or
// nil. Under TLS 1.3 a server that refuses the client's certificate says
// so after the handshake is over for the client: a client that writes
// first, as go-redis does, can meet the connection reset instead of the
// alert, a failure that looks like Redis unreachable. Redis says nothing
// unasked, so a connection of its own that only reads, for a moment,
// meets the alert when there is one.
func (c redisConn) tlsRefusal(ctx context.Context, network, addr string) error {
	switch c.typ {
	case "sentinel":
		return nil
	case "cluster":
		addr, _, _ = strings.Cut(addr, ",")
	}
	cfg := c.tls.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil && cfg.ServerName == "" {
		cfg.ServerName = host
	}
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, network, addr)
	if err == nil {
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(tlsListen))
		_, err = conn.Read(make([]byte, 1))
	}
	if isTLSFailure(err) {
		return err
	}
	return nil
}

// tlsListen is how long tlsRefusal waits for an alert.
const tlsListen = 250 * time.Millisecond

// isTLSFailure says whether err is a TLS handshake's failure: a
// certificate that does not verify, an alert from the peer, or a peer
// that does not speak TLS.
func isTLSFailure(err error) bool {
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	var op *net.OpError
	return errors.As(err, &verify) || errors.As(err, &header) || errors.As(err, &op) && op.Op == "remote error"
}
