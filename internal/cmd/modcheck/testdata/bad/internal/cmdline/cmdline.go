package cmdline

import _ "example.com/root/internal/testkit/harness"
