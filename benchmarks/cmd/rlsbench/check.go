package main

import "fmt"

// hotCheck is an error unless r's server admitted exactly the hot key's
// limit: more is a count that let requests through, fewer without an
// error a count that refused too early. Fewer with errors (calls that
// could not be decided) is not an error of counting.
func hotCheck(r result) error {
	h := r.hot
	switch {
	case h.admitted > int64(h.limit):
		return fmt.Errorf("%s admitted %d on the hot key, over its limit of %d", r.name, h.admitted, h.limit)
	case h.admitted < int64(h.limit) && h.errs == 0:
		return fmt.Errorf("%s admitted %d on the hot key, under its limit of %d, with no error", r.name, h.admitted, h.limit)
	}
	return nil
}
