package yamlnode

import (
	"fmt"
	"io"
	"os"

	"github.com/seed-bff0c9e1/ratelimit"
)

// MaxFileSize is the most bytes a rules file may hold (4 MiB; a file of
// 1,000 rules in 100 stacks holds about 100 KB). A file is parsed whole,
// its parse taking some fifty times its size in memory, so a larger one is
// refused before it is parsed.
const MaxFileSize = 4 << 20

// ReadFile reads a rules file of either format whole, as config's Load,
// Reload and Check and envoy.LoadDir do: a file of more than
// MaxFileSize bytes, or one that cannot be read, is an error wrapping
// ratelimit.ErrConfig.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s: found more than %d bytes; allowed: at most %d (4 MiB)", ratelimit.ErrConfig, path, MaxFileSize, MaxFileSize)
	}
	return data, nil
}
