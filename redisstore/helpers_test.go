package redisstore_test

import "context"

var ctx = context.Background()
