package nested

import (
	_ "example.com/root/nested/internal/own"
	_ "example.com/root/public"
)
