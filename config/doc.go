// Package config keeps rate limits in a file, YAML or JSON with one schema
// (docs/config.md; schema.json for editors), and reloads them without a
// restart:
//
//	limits, err := config.Load("ratelimit.yaml", store) // store: redisstore.New(rdb), or memstore.Must()
//	r.Use(limits.Middleware("api"))                     // chi: a stack by name
//	http.ListenAndServe(addr, limits.Handler(mux))      // ServeMux: stacks by pattern
//	go limits.Watch(ctx, time.Second)                   // reload on change
//
// A file names rules (a name, an identity, an algorithm with its
// parameters as people write them, "100/1m", "5000/s burst 10000"; a
// lease, a penalty, an alternative key, plans chosen by a header) and
// stacks of them, each wired by name with Middleware or matched by
// http.ServeMux patterns with Handler. Load and Check report every problem
// of a file at once, each with the file, line and column, the field, what
// was found and what is allowed; unknown fields are problems. Each is a
// *Problem: errors.As finds the first, Problems lists them all.
//
// # Operators
//
// Status, Reset, Block and Unblock reach what the rules in force keep for
// a client, by the rule's name and the identity an operator knows (the
// API key itself, an address), read as the rule's key reads a request;
// cmd/ratelimit runs them from a shell.
//
// # Reloads
//
// Reload (and Watch, when the file changes: a Kubernetes ConfigMap's
// symlink swap, an editor's rename, a write) builds the new rules beside
// the old and swaps them in at once: requests under way finish on the rules
// they started with, later ones see the new rules, and none waits or is
// decided by none. A rule that keeps its name keeps its clients' counts,
// which live in the store under the rule's name and algorithm (see "Keys"
// in package limiter); the old rules' limiters are closed, which gives back
// their leased units. A file with problems changes nothing: the error is
// returned, logged and passed to the reload hook (WithReloadHook).
//
// # Trust model
//
// The file is trusted, as code is: it chooses every limit. Identities come
// from requests, as in package keyfunc: "ip" believes forwarding headers
// only from client_ip.trusted_proxies, and only the field client_ip.header
// names (left unnamed, the proxies must strip the forwarding fields they
// do not set, or a client chooses its address); header identities are
// hashed. A
// plan chosen by a header takes the header's raw value: a client can send
// any value, so use a header that a proxy in front sets and strips from
// clients (or a func the program registers, over what it authenticated).
package config
