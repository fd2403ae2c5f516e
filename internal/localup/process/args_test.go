package process

import (
	"slices"
	"testing"
)

// TestArgsRenderInOrderAndReplaceInPlace: flags render as the process
// takes them, in the order first given; setting a flag again replaces its
// value where it stood, never repeats it.
func TestArgsRenderInOrderAndReplaceInPlace(t *testing.T) {
	a := NewArgs().
		Set("name", "etcd-0").
		Set("secure-port", 31000).
		Set("leader-elect", false).
		On("client-cert-auth").
		Set("controllers", []string{"*", "-ttl"}).
		Set("v", 1)
	a.Set("secure-port", 31010).Set("v", "2")
	want := []string{"--name=etcd-0", "--secure-port=31010", "--leader-elect=false", "--client-cert-auth", "--controllers=*,-ttl", "--v=2"}
	if got := a.Strings(); !slices.Equal(got, want) {
		t.Fatalf("rendered %q, want %q", got, want)
	}
	var zero Args
	if got := zero.Strings(); len(got) != 0 {
		t.Errorf("the zero Args renders %q", got)
	}
}

// TestArgsRefuseDashedNames: a name given with its dashes is a bug of the
// caller, said at once rather than rendered as ----name.
func TestArgsRefuseDashedNames(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Set(\"--v\") did not panic")
		}
	}()
	NewArgs().Set("--v", 1)
}
