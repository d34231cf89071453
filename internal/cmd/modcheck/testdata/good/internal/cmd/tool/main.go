package main

import _ "example.com/root/internal/testkit/harness"
