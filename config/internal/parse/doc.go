// Package parse reads a rules file of package config, YAML or JSON: the
// document is checked value by value, each problem reported with its
// file, line and column, the field, what was found and what is allowed,
// and every problem of a file is reported at once (Read). What it returns
// is the file as read (File: rules, stacks, and the identities they name
// as Key), with what the limiter would refuse of each rule already
// checked.
//
// It builds nothing: no limiter, no middleware, no key function, and it
// reads no file from disk and watches none. Package config's build
// package turns a File into the doors' stacks, and package config keeps
// them in force.
package parse
