package limiter

import _ "example.com/root/internal/testkit/harness"
