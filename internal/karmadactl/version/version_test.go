package version

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/karmada-go/karmada/internal/version"
)

func TestPrint(t *testing.T) {
	info := version.Info{GitVersion: "v1.2.3", GitCommit: "abc", BuildDate: "2026-11-27T00:00:00Z", GoVersion: "go1.26", Compiler: "gc", Platform: "linux/amd64"}
	var b bytes.Buffer
	if err := Print(&b, "karmadactl", "", info); err != nil {
		t.Fatal(err)
	}
	if want := `karmadactl version: version.Info{GitVersion:"v1.2.3", GitCommit:"abc", BuildDate:"2026-11-27T00:00:00Z", GoVersion:"go1.26", Compiler:"gc", Platform:"linux/amd64"}` + "\n"; b.String() != want {
		t.Errorf("default output %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := Print(&b, "karmadactl", "json", info); err != nil {
		t.Fatal(err)
	}
	var got version.Info
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || got != info {
		t.Errorf("json %s: %v", b.String(), err)
	}
	b.Reset()
	if err := Print(&b, "kubectl karmada", "yaml", info); err != nil || !strings.Contains(b.String(), "gitVersion: v1.2.3\n") {
		t.Errorf("yaml %q: %v", b.String(), err)
	}
	if err := Print(&b, "karmadactl", "wide", info); err == nil || !strings.Contains(err.Error(), "--output") {
		t.Errorf("an unknown output: %v", err)
	}
}
