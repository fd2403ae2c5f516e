package token

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/karmada-go/karmada/internal/testenv"
)

func TestCreateOptionsValidate(t *testing.T) {
	ok := CreateOptions{TTL: time.Hour, Groups: []string{DefaultGroup}, Usages: []string{"signing", "authentication"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	for _, c := range []struct {
		o    CreateOptions
		want string
	}{
		{CreateOptions{TTL: -time.Second, Usages: []string{"signing"}}, "--ttl"},
		{CreateOptions{Usages: []string{"signing", "everything"}}, "--usages"},
		{CreateOptions{Usages: []string{"authentication"}, Groups: []string{"system:masters"}}, "--groups"},
		{CreateOptions{Usages: []string{"signing"}, Groups: []string{DefaultGroup}}, "authentication"},
	} {
		if err := c.o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error naming %s", c.o, err, c.want)
		}
	}
}

// The hash is of the CA's public key, computed here the other way round
// (marshalling the key again) to check the one register compares with.
func TestCACertHash(t *testing.T) {
	caPEM := testenv.SelfSignedCA(t)
	block, _ := pem.Decode(caPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	want := "sha256:" + hex.EncodeToString(sum[:])
	got, err := CACertHash(caPEM)
	if err != nil || got != want {
		t.Fatalf("CACertHash = %q (%v), want %q", got, err, want)
	}
	line, err := RegisterCommand("karmadactl", &rest.Config{Host: "https://127.0.0.1:31000", TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}, "abcdef.0123456789abcdef")
	if err != nil || line != "karmadactl register 127.0.0.1:31000 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "+want {
		t.Errorf("RegisterCommand = %q (%v)", line, err)
	}
	if _, err := RegisterCommand("karmadactl", &rest.Config{Host: "https://127.0.0.1:31000"}, "abcdef.0123456789abcdef"); err == nil {
		t.Error("a register command without the CA's hash was printed")
	}
	if _, err := CACertHash([]byte("not a certificate")); err == nil {
		t.Error("garbage hashed")
	}
}
