package fault

import (
	"errors"
	"testing"
)

// TestNotRunIsUnsent: a failure the server answered with a refusal that
// proves the call did not run (NotRun: READONLY, LOADING) is unsent, so
// that a slot's release refused so is sent again; several failures
// joined, of which one may have run, are not.
func TestNotRunIsUnsent(t *testing.T) {
	refused := errors.New("READONLY You can't write against a read only replica.")
	if Unsent(refused) {
		t.Fatal("an unmarked reply taken for unsent")
	}
	marked := NotRun(refused)
	if !Unsent(marked) || marked.Error() != refused.Error() || !errors.Is(marked, refused) {
		t.Errorf("NotRun(%v): unsent %v, %q", refused, Unsent(marked), marked)
	}
	if Unsent(errors.Join(marked, errors.New("i/o timeout"))) {
		t.Error("a NotRun joined with another failure taken for unsent")
	}
	if NotRun(nil) != nil {
		t.Error("NotRun(nil) is not nil")
	}
}
