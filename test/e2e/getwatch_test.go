//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// karmadactl get -w lists the template and every member's copy, then
// prints each change as it comes, with the cluster it is in: a scale of the
// template shows in the control plane's row and in both members' rows.
func TestKarmadactlGetWatch(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("watched", 1)
	propagate(ctx, t, d, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}})
	waitMemberDeployment(ctx, t, "member1", "watched", 1)
	waitMemberDeployment(ctx, t, "member2", "watched", 1)

	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(wctx, filepath.Join(filepath.Dir(fleet.Bin), "karmadactl"), "get", "deployment", "watched", "-w",
		"--operation-scope", "all", "-C", "member1,member2", "--kubeconfig", fleet.Kubeconfig, "--karmada-context", "karmada-apiserver")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan string)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	// Rows: NAME CLUSTER READY UP-TO-DATE AVAILABLE AGE ADOPTION.
	row := func(cluster, ready, adoption string) *regexp.Regexp {
		return regexp.MustCompile(`^watched\s+` + cluster + `\s+` + ready + `\s+.*\s` + regexp.QuoteMeta(adoption) + `$`)
	}
	expect := func(what string, want ...*regexp.Regexp) {
		t.Helper()
		var seen []string
		left := append([]*regexp.Regexp(nil), want...)
		deadline := time.After(60 * time.Second)
		for len(left) > 0 {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("%s: karmadactl get -w ended; it printed:\n%s", what, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				for i, re := range left {
					if re.MatchString(l) {
						left = append(left[:i], left[i+1:]...)
						break
					}
				}
			case <-deadline:
				t.Fatalf("%s: not printed within 60s; karmadactl get -w printed:\n%s", what, strings.Join(seen, "\n"))
			}
		}
	}
	expect("the header and the listed rows",
		regexp.MustCompile(`^NAME\s+CLUSTER\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+ADOPTION$`),
		row("Karmada", `\d+/1`, "-"), row("member1", "1/1", "Y"), row("member2", "1/1", "Y"))

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return err
		}
		got.Spec.Replicas = ptr.To[int32](2)
		return c.Update(ctx, got)
	}); err != nil {
		t.Fatal(err)
	}
	expect("the scale-up in each member", row("member1", "2/2", "Y"), row("member2", "2/2", "Y"))
}
