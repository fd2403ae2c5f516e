package setup

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// --aggregated-apiserver-url names where the karmada-apiserver dials
// karmada-aggregated-apiserver; anything else is refused naming the flag.
func TestAggregatedAPIServerURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://karmada-aggregated-apiserver.karmada-system.svc.cluster.local:443": "karmada-aggregated-apiserver.karmada-system.svc.cluster.local:443",
		"https://localhost:7443": "localhost:7443",
		"https://a.example":      "a.example:443",
	} {
		a, err := aggregatedAPIServer(raw)
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if got := fmt.Sprintf("%s:%d", a.Host, a.Port); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
	for _, raw := range []string{"http://a:443", "https://:443", "https://a:0", "https://a:99999", "https://a/path", "a:443"} {
		if _, err := aggregatedAPIServer(raw); err == nil || !strings.Contains(err.Error(), "--aggregated-apiserver-url") {
			t.Errorf("%s: %v, want an error naming the flag", raw, err)
		}
	}
	o := Options{WebhookURL: "https://w:443", Timeout: time.Minute, AggregatedCAFile: "ca.crt"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--aggregated-apiserver-url") {
		t.Errorf("a CA without a URL: %v", err)
	}
}
