package main

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
)

// xdsSettings are the reference server's CONFIG_GRPC_XDS_* and
// XDS_CLIENT_* variables this server honours, read when
// CONFIG_TYPE=GRPC_XDS_SOTW.
type xdsSettings struct {
	serverURL string       // CONFIG_GRPC_XDS_SERVER_URL
	node      *corev3.Node // CONFIG_GRPC_XDS_NODE_ID and CONFIG_GRPC_XDS_NODE_METADATA
	// retry is the first wait before connecting again once the stream
	// failed (CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL); each further
	// failure doubles it, up to maxRetry (XDS_CLIENT_BACKOFF_MAX_INTERVAL).
	retry, maxRetry time.Duration
	headers         metadata.MD // CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS, sent on the stream
	maxMsgSize      int         // XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES; 0: gRPC's default
	tls             *tls.Config // CONFIG_GRPC_XDS_SERVER_USE_TLS and its files; nil: plain text
	// forceStart serves before the first version arrives, on no
	// configuration (FORCE_START_WITHOUT_INITIAL_CONFIG, settings.forceStart).
	forceStart bool
}

// readXDS reads the xDS client's variables, with the reference's defaults.
func readXDS(getenv func(string) string) (xdsSettings, error) {
	or := func(name, def string) string { return orDefault(getenv, name, def) }
	x := xdsSettings{
		serverURL: or("CONFIG_GRPC_XDS_SERVER_URL", "localhost:18000"),
		node: &corev3.Node{Id: or("CONFIG_GRPC_XDS_NODE_ID", "default"),
			Metadata: &structpb.Struct{Fields: pairs(getenv("CONFIG_GRPC_XDS_NODE_METADATA"), "=", structpb.NewStringValue)}},
		headers: metadata.New(pairs(getenv("CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS"), ":", func(v string) string { return v })),
	}
	var err error
	if x.retry, err = positive(or("CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", "3s"), "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL"); err != nil {
		return x, err
	}
	if x.maxRetry, err = positive(or("XDS_CLIENT_BACKOFF_MAX_INTERVAL", "60s"), "XDS_CLIENT_BACKOFF_MAX_INTERVAL"); err != nil {
		return x, err
	}
	x.maxRetry = max(x.maxRetry, x.retry)
	if v := getenv("XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES"); v != "" {
		if x.maxMsgSize, err = strconv.Atoi(v); err != nil || x.maxMsgSize <= 0 {
			return x, fmt.Errorf("ratelimit: XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES %q: allowed: a positive number of bytes", v)
		}
	}
	useTLS, err := boolean(getenv, "CONFIG_GRPC_XDS_SERVER_USE_TLS")
	if err != nil || !useTLS {
		return x, err
	}
	x.tls, err = xdsTLS(getenv)
	return x, err
}

// pairs reads "k1<sep>v1,k2<sep>v2" as the reference does: an entry
// without sep is skipped, and a value keeps any further sep.
func pairs[V any](list, sep string, value func(string) V) map[string]V {
	m := map[string]V{}
	for entry := range strings.SplitSeq(list, ",") {
		if k, v, ok := strings.Cut(entry, sep); ok {
			m[k] = value(v)
		}
	}
	return m
}

// positive reads a duration variable that must be more than zero.
func positive(v, name string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("ratelimit: %s %q: allowed: a positive duration such as 3s", name, v)
	}
	return d, nil
}

// xdsTLS is the TLS the xDS client connects with: the server verified on
// the system's roots and CONFIG_GRPC_XDS_SERVER_TLS_CACERT's certificates
// (when given), by the name CONFIG_GRPC_XDS_SERVER_TLS_SAN (when given) or
// the URL's host; the client certificate CONFIG_GRPC_XDS_CLIENT_TLS_CERT
// and its key CONFIG_GRPC_XDS_CLIENT_TLS_KEY presented when given.
func xdsTLS(getenv func(string) string) (*tls.Config, error) {
	c := &tls.Config{ServerName: getenv("CONFIG_GRPC_XDS_SERVER_TLS_SAN"), MinVersion: tls.VersionTLS12}
	cert, err := keyPair(getenv, "CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "CONFIG_GRPC_XDS_CLIENT_TLS_KEY")
	if err != nil {
		return nil, err
	}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	if c.RootCAs, err = caPool(getenv, "CONFIG_GRPC_XDS_SERVER_TLS_CACERT", true); err != nil {
		return nil, err
	}
	return c, nil
}
