module github.com/seed-bff0c9e1/ratelimit/grpclimit

go 1.26.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/go-chi/chi/v5 v5.5.0
	github.com/grpc-ecosystem/go-grpc-middleware/v2 v2.3.4
	github.com/redis/go-redis/v9 v9.23.0
	github.com/seed-bff0c9e1/ratelimit v0.0.0-20261124002345-fbd8e58f95aa
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/yuin/gopher-lua v1.1.2 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)
