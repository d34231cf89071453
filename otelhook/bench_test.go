package otelhook_test

import (
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/seed-bff0c9e1/ratelimit/internal/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/otelhook"
)

// The middleware's cost without and with the recorder, on the SDK's
// providers (a manual reader, and spans sampled but exported nowhere).
func BenchmarkHook(b *testing.B) {
	rec, err := otelhook.New(otelhook.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		TracerProvider: sdktrace.NewTracerProvider(),
	})
	if err != nil {
		b.Fatal(err)
	}
	mwtest.BenchHook(b, rec.Hook)
}
