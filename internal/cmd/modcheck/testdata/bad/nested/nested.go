package nested

import _ "example.com/root/internal/secret"
