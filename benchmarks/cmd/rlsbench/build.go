package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ourServer is the package path of this project's server, built from
// this checkout (go.work binds the rls module to it).
const ourServer = "github.com/seed-bff0c9e1/ratelimit/rls/cmd/ratelimit-server"

// referenceModule and referenceMain are the reference server's module and
// command; its version is the -refversion flag.
const (
	referenceModule = "github.com/envoyproxy/ratelimit"
	referenceMain   = referenceModule + "/src/service_cmd"
)

// buildOurs builds this checkout's server into dir.
func buildOurs(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "ratelimit-server")
	return out, goBuild(ctx, "", nil, out, ourServer)
}

// buildReference builds the reference server at version into dir, from
// a scratch module that requires it: its dependencies resolve as its own
// go.mod says, from the module cache when they are there (offline) or
// from GOPROXY.
func buildReference(ctx context.Context, dir, version string) (string, error) {
	mod := filepath.Join(dir, "reference-module")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return "", err
	}
	gomod := fmt.Sprintf("module rlsbench/reference\n\ngo 1.26.0\n\nrequire %s %s\n", referenceModule, version)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "reference-server")
	return out, goBuild(ctx, mod, []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, out, referenceMain)
}

// goBuild runs go build -o out pkg in dir ("" for the current one) with
// env added to this process's environment.
func goBuild(ctx context.Context, dir string, env []string, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
