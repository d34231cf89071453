package main

import (
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/examples/internal/demotest"
)

func TestExample(t *testing.T) { demotest.Run(t, newHandler) }
