package app

import (
	"slices"
	"testing"
)

// restart kills the component and works stops it; a shell command given
// replaces karmada-local's.
func TestComponentCommands(t *testing.T) {
	stop, start := componentCommands("kl", "/s", "karmada-controller-manager", "", "", true)
	if want := []string{"kl", "--state-dir", "/s", "component", "stop", "karmada-controller-manager", "--kill"}; !slices.Equal(stop, want) {
		t.Errorf("stop %v: want %v", stop, want)
	}
	if want := []string{"kl", "--state-dir", "/s", "component", "start", "karmada-controller-manager"}; !slices.Equal(start, want) {
		t.Errorf("start %v: want %v", start, want)
	}
	if stop, _ := componentCommands("kl", "/s", "c", "", "", false); slices.Contains(stop, "--kill") {
		t.Errorf("stop without kill: %v", stop)
	}
	stop, start = componentCommands("kl", "/s", "c", "systemctl stop x", "systemctl start x", true)
	if !slices.Equal(stop, []string{"/bin/sh", "-c", "systemctl stop x"}) || !slices.Equal(start, []string{"/bin/sh", "-c", "systemctl start x"}) {
		t.Errorf("shell commands: stop %v, start %v", stop, start)
	}
}
