// Package store is the contract between a limiter.Limiter and the stores
// that keep its state: Store, the checks it decides, the results it
// writes, and the refunds it takes. Package redisstore implements it on
// Redis with Lua scripts, package memstore in process with the
// algorithms' Go models; both give the same results for the same inputs.
//
// A store knows keys, not rules: the Limiter names the rules, builds the
// keys (see the limiter package's Keys), encodes each algorithm once
// (Check.Params), and turns what a store writes into a limiter.Decision.
// Most programs never call a Store themselves; they pass one to
// limiter.New.
package store
