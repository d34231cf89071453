// Package compile makes what a version of a rules file of package config
// describes (a file as package parse read it): one limiter of the rules
// its stacks use, the HTTP stacks' middlewares and the mux of their
// patterns (New), the gRPC stacks' guards (NewCalls), the Envoy stacks'
// rules by descriptor keys (Version.Descriptor), and the identity an
// operator's value names (Version.Identity).
//
// It neither reads the file (package parse does) nor keeps a version in
// force: package config loads, reloads and watches the file, swaps
// versions, and closes the old ones.
package compile
