package demo

import _ "example.com/root/internal/testkit/harness"
