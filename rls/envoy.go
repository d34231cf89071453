package rls

import (
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Config is one domain's limits in the reference server's format (see
// package config/envoy, where it is parsed and validated).
type Config = envoy.Config

// Parse parses and validates one file of the reference server's
// configuration: envoy.Parse.
func Parse(file string, data []byte) (*Config, error) { return envoy.Parse(file, data) }

// LoadDir parses every .yaml and .yml file directly in dir, one domain
// each: envoy.LoadDir.
func LoadDir(dir string, ignoreDotfiles bool) ([]*Config, error) {
	return envoy.LoadDir(dir, ignoreDotfiles)
}

// LoadDirMerged is LoadDir with the files of one domain merged, as the
// reference's MERGE_DOMAIN_CONFIG=true merges them: envoy.LoadDirMerged.
func LoadDirMerged(dir string, ignoreDotfiles bool) ([]*Config, error) {
	return envoy.LoadDirMerged(dir, ignoreDotfiles)
}

// Limits returns the limiter rules of configs, to build the Server's
// limiter.Limiter on: envoy.Limits.
func Limits(configs ...*Config) []limiter.Rule { return envoy.Limits(configs...) }

// Dump writes each configured rate_limit of configs, one a line, as the
// reference server's /rlconfig page does: envoy.Dump.
func Dump(configs ...*Config) string { return envoy.Dump(configs...) }
