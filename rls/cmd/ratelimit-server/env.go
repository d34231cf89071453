package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// settings are the reference server's environment variables this
// server honours so far.
type settings struct {
	grpcAddr       string // GRPC_HOST:GRPC_PORT
	httpAddr       string // HOST:PORT
	debugAddr      string // DEBUG_HOST:DEBUG_PORT
	redisURL       string // REDIS_URL: host:port; "" runs on miniredis
	configDir      string // RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config; "" without RUNTIME_ROOT
	ignoreDotfiles bool   // RUNTIME_IGNOREDOTFILES
}

// readEnv reads the settings from getenv, with the reference's defaults.
func readEnv(getenv func(string) string) (settings, error) {
	or := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	s := settings{
		grpcAddr:  net.JoinHostPort(or("GRPC_HOST", "0.0.0.0"), or("GRPC_PORT", "8081")),
		httpAddr:  net.JoinHostPort(or("HOST", "0.0.0.0"), or("PORT", "8080")),
		debugAddr: net.JoinHostPort(or("DEBUG_HOST", "0.0.0.0"), or("DEBUG_PORT", "6070")),
		redisURL:  getenv("REDIS_URL"),
	}
	if t := or("REDIS_TYPE", "single"); t != "single" {
		return s, fmt.Errorf("ratelimit: REDIS_TYPE %q is not supported yet (only single)", t)
	}
	if root := getenv("RUNTIME_ROOT"); root != "" {
		s.configDir = filepath.Join(root, getenv("RUNTIME_SUBDIRECTORY"), "config")
	}
	if v := getenv("RUNTIME_IGNOREDOTFILES"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("ratelimit: RUNTIME_IGNOREDOTFILES: %w", err)
		}
		s.ignoreDotfiles = b
	}
	return s, nil
}

// osEnv is the process's environment.
func osEnv(name string) string { return os.Getenv(name) }
