package root

import _ "example.com/root/internal/secret"
