//go:build race

package main_test

// Under the race detector, the load tests' server is built with it too
// (see buildForLoad).
func init() { raceFlags = []string{"-race"} }
