package config_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// ExampleLoad loads examples/config/ratelimit.yaml (shown in the README)
// and wires its stack "api" on a route: 20 requests a minute per client
// IP, then 429.
func ExampleLoad() {
	store := memstore.Must() // or redisstore.New(rdb)
	limits, err := config.Load("../examples/config/ratelimit.yaml", store)
	if err != nil {
		fmt.Println(err) // every problem of the file, with its line and column
		return
	}
	defer limits.Close()
	mux := http.NewServeMux()
	mux.Handle("GET /api/items/{id}", limits.Middleware("api")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))

	codes := map[int]int{}
	for range 21 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/items/1", nil))
		codes[w.Code]++
	}
	fmt.Println(codes[http.StatusOK], "allowed,", codes[http.StatusTooManyRequests], "refused")
	// Output: 20 allowed, 1 refused
}

// TestReadmeShowsTheExampleFile: the README's file is
// examples/config/ratelimit.yaml, which ExampleLoad loads (its comments
// aside).
func TestReadmeShowsTheExampleFile(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Rules in a file")
	_, block, _ := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	file, err := os.ReadFile("../examples/config/ratelimit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.SplitAfter(string(file), "\n") {
		if !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	if want := strings.Join(lines, ""); block != want {
		t.Errorf("README shows\n%s\nthe file is\n%s", block, want)
	}
}
