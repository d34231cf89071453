package root

import _ "example.com/root/internal/testkit/harness"
