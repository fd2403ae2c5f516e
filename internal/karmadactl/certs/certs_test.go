package certs

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/helmchart"
)

// The Secrets the chart renders, as the API server stores them.
func chartSecrets(t *testing.T) []*corev1.Secret {
	t.Helper()
	ch, err := helmchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := helmchart.Render(context.Background(), ch, map[string]any{}, helmchart.DefaultRelease, helmchart.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	var out []*corev1.Secret
	for _, m := range r.Manifests {
		if !strings.Contains(m.Content, "kind: Secret") {
			continue
		}
		s := &corev1.Secret{}
		if err := yaml.Unmarshal([]byte(m.Content), s); err != nil {
			t.Fatal(err)
		}
		if s.Kind != "Secret" {
			continue
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
		out = append(out, s)
	}
	return out
}

func TestCheckListsEveryCertificateOfTheChart(t *testing.T) {
	kc := fake.NewClientset()
	for _, s := range chartSecrets(t) {
		if _, err := kc.CoreV1().Secrets(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	certs, err := Check(context.Background(), kc, helmchart.DefaultNamespace, now)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]certexpiry.Certificate{}
	for _, c := range certs {
		byPath[c.Path] = c
		if len(c.UsedBy) == 0 {
			t.Errorf("%s: no user", c.Path)
		}
		want := 365 * 24 * time.Hour
		if c.CA {
			want = 3650 * 24 * time.Hour
		}
		if c.Residual < want-48*time.Hour || c.Residual > want+time.Hour {
			t.Errorf("%s: %s left, want about %s", c.Path, c.Residual, want)
		}
	}
	ns := helmchart.DefaultNamespace
	for _, p := range []string{
		ns + "/karmada-cert:ca.crt", ns + "/karmada-cert:apiserver.crt", ns + "/karmada-cert:webhook.crt",
		ns + "/karmada-cert:etcd-server.crt", ns + "/karmada-cert:etcd-client.crt", ns + "/karmada-cert:front-proxy-client.crt",
		ns + "/karmada-controller-manager-kubeconfig:tls.crt", ns + "/karmada-scheduler-kubeconfig:tls.crt",
		ns + "/karmada-webhook-kubeconfig:tls.crt", ns + "/kube-controller-manager-kubeconfig:tls.crt",
		ns + "/karmada-kubeconfig:kubeconfig",
	} {
		if _, ok := byPath[p]; !ok {
			t.Errorf("%s not listed", p)
		}
	}
	if c := byPath[ns+"/karmada-controller-manager-kubeconfig:tls.crt"]; c.Subject != "system:karmada:karmada-controller-manager" || c.Issuer != "karmada-ca" {
		t.Errorf("the controller manager's client certificate: %+v", c)
	}
	if !certs[0].CA {
		t.Errorf("CAs are not listed first: %+v", certs[0])
	}
	var table, js bytes.Buffer
	if err := certexpiry.Write(&table, certs, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "RESIDUAL TIME") || !strings.Contains(table.String(), "karmada-apiserver (serving)") {
		t.Errorf("table:\n%s", table.String())
	}
	if err := certexpiry.Write(&js, certs, "json"); err != nil {
		t.Fatal(err)
	}
	var back []certexpiry.Certificate
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != len(certs) {
		t.Errorf("json round trip: %d of %d (%v)", len(back), len(certs), err)
	}
}

func TestCheckWithoutAnInstall(t *testing.T) {
	_, err := Check(context.Background(), fake.NewClientset(), "elsewhere", time.Now())
	if err == nil || !strings.Contains(err.Error(), "no Secret karmada-cert in namespace elsewhere") {
		t.Errorf("error %v, want one naming the namespace", err)
	}
}
