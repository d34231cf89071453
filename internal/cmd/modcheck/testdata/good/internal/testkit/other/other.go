package other

import _ "example.com/root/internal/testkit/harness"
