package tokenrenewal

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"
)

func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(payload) + ".c2ln"
}

func TestParseToken(t *testing.T) {
	tok := jwt(t, map[string]any{"iat": 1000, "exp": 1000 + 86400, "sub": "system:serviceaccount:karmada-cluster:karmada-member1"})
	c, ok := ParseToken(tok)
	if !ok {
		t.Fatal("a service account token was not read")
	}
	ns, name, ok := c.ServiceAccount()
	if !ok || ns != "karmada-cluster" || name != "karmada-member1" {
		t.Errorf("ServiceAccount() = %q, %q, %t", ns, name, ok)
	}
	// Renewed at 80% of the lifetime.
	if got, want := c.RenewTime(), time.Unix(1000+69120, 0); !got.Equal(want) {
		t.Errorf("RenewTime() = %s, want %s", got, want)
	}
	// nbf stands in for a missing iat.
	c, _ = ParseToken(jwt(t, map[string]any{"nbf": 0, "exp": 600}))
	if got := c.RenewTime(); !got.Equal(time.Unix(0, 0)) {
		// iat and nbf 0: renewed 10 minutes before expiry.
		t.Errorf("RenewTime() without iat = %s", got)
	}
	for name, tok := range map[string]string{
		"legacy token without exp": jwt(t, map[string]any{"sub": "system:serviceaccount:karmada-cluster:karmada-member1"}),
		"not a JWT":                "abcdef",
		"bad payload":              "a.!!!.c",
	} {
		if _, ok := ParseToken(tok); ok {
			t.Errorf("%s: read as an expiring token", name)
		}
	}
	if _, _, ok := (Claims{Subject: "system:node:n1"}).ServiceAccount(); ok {
		t.Error("a node identity was read as a service account")
	}
}
