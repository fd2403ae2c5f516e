// Package tokenrenewal renews the member tokens of push-mode Clusters.
// karmadactl join stores a bound, expiring ServiceAccount token of the
// member in the Cluster's credentials Secret; before it expires (at 80% of
// its lifetime) this controller asks the member for a new one, with the
// current token (join grants the identity the right to request tokens for
// itself only), and writes it into the Secret. The clients of the member
// pick it up without reconnecting.
package tokenrenewal

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name --controllers knows it by.
const ControllerName = "tokenRenewal"

// RenewAt is the part of a token's lifetime after which it is renewed.
const RenewAt = 0.8

// recheck bounds how long a Cluster goes without its Secret being read
// again: a join that stored a shorter-lived token meanwhile is noticed in
// time (the shortest lifetime, 10 minutes, is renewed 2 minutes before it
// ends).
const recheck = time.Minute

var expiryGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "karmada_cluster_token_expiration_timestamp_seconds",
	Help: "When the member token of a push-mode cluster expires (Unix seconds); absent for tokens that do not expire.",
}, []string{"member_cluster"})

func init() { metrics.Registry.MustRegister(expiryGauge) }

// Reconciler renews member tokens.
type Reconciler struct {
	// Client writes the Secrets; Reader reads them (uncached: caching every
	// Secret of the control plane to read a few would cost far more).
	Client   client.Client
	Reader   client.Reader
	Members  *clusterclient.Cache
	Recorder record.EventRecorder
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock

	// moved: the Clusters (by UID) whose impersonator renews its own token.
	moved sync.Map
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(queues.Options(1)).
		Complete(r)
}

// tokenKind is which of a Cluster's tokens is renewed (its words name it in
// events).
type tokenKind string

const (
	// memberToken (spec.secretRef) is renewed with itself; its expiry is
	// the cluster's karmada_cluster_token_expiration_timestamp_seconds.
	memberToken tokenKind = "member token"
	// impersonatorToken (spec.impersonatorSecretRef) is renewed with
	// itself too: the member identity may not request it.
	impersonatorToken tokenKind = "impersonator token"
)

// Claims are the parts of a ServiceAccount token's payload used here.
type Claims struct {
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf"`
	Expiry    int64  `json:"exp"`
	Subject   string `json:"sub"`
}

// ParseToken reads the payload of a JWT without verifying it (the member
// verifies it; here it only tells when to renew and for whom). A token that
// is not a JWT, or has no expiry, gives ok false.
func ParseToken(token string) (c Claims, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, false
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.Expiry == 0 {
		return c, false
	}
	if c.IssuedAt == 0 {
		c.IssuedAt = c.NotBefore
	}
	return c, true
}

// ServiceAccount returns the namespace and name of the ServiceAccount the
// token is of.
func (c Claims) ServiceAccount() (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(c.Subject, "system:serviceaccount:")
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok && namespace != "" && name != ""
}

// RenewTime is when a token is due for renewal.
func (c Claims) RenewTime() time.Time {
	exp := time.Unix(c.Expiry, 0)
	if c.IssuedAt == 0 || c.IssuedAt >= c.Expiry {
		return exp.Add(-10 * time.Minute)
	}
	life := time.Duration(c.Expiry-c.IssuedAt) * time.Second
	return time.Unix(c.IssuedAt, 0).Add(time.Duration(float64(life) * RenewAt))
}

// Reconcile renews the tokens of one Cluster when they are due: the
// member token (spec.secretRef), asked for with the member token, and the
// impersonator's (spec.impersonatorSecretRef), asked for with the
// impersonator's token.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		expiryGauge.DeleteLabelValues(req.Name)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ref := cluster.Spec.SecretRef
	if cluster.Spec.SyncMode != clusterv1alpha1.Push || ref == nil || ref.Namespace != names.ClusterNamespace || !cluster.DeletionTimestamp.IsZero() {
		expiryGauge.DeleteLabelValues(cluster.Name)
		return ctrl.Result{}, nil
	}
	wait, err := r.renewSecret(ctx, cluster, ref, memberToken)
	if err != nil || wait == 0 {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	if imp := cluster.Spec.ImpersonatorSecretRef; imp != nil && imp.Namespace == names.ClusterNamespace {
		r.moveImpersonatorRenewal(ctx, cluster)
		impWait, err := r.renewSecret(ctx, cluster, imp, impersonatorToken)
		if err != nil {
			return ctrl.Result{}, err
		}
		if impWait > 0 {
			wait = min(wait, impWait)
		}
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// renewSecret renews the token of the Secret ref when it is due, and says
// when to look again (0: never, the token does not expire).
func (r *Reconciler) renewSecret(ctx context.Context, cluster *clusterv1alpha1.Cluster, ref *clusterv1alpha1.LocalSecretReference, what tokenKind) (time.Duration, error) {
	gauge := what == memberToken
	secret := &corev1.Secret{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	claims, ok := ParseToken(string(secret.Data[clusterclient.SecretTokenKey]))
	if !ok {
		// A token that does not expire (an earlier join, or one made by
		// hand) is left as it is.
		if gauge {
			expiryGauge.DeleteLabelValues(cluster.Name)
		}
		return 0, nil
	}
	expiry := time.Unix(claims.Expiry, 0)
	if gauge {
		expiryGauge.WithLabelValues(cluster.Name).Set(float64(claims.Expiry))
	}
	now := r.Clock.Now()
	if due := claims.RenewTime(); now.Before(due) {
		return min(due.Sub(now), recheck), nil
	}
	if !now.Before(expiry) {
		events.Warning(r.Recorder, cluster, events.TokenRenewFailed,
			"The %s expired at %s and can no longer be renewed: run karmadactl join %s again", what, expiry.UTC().Format(time.RFC3339), cluster.Name)
		return recheck, nil
	}
	token, newExpiry, err := r.renew(ctx, cluster, claims, what, string(secret.Data[clusterclient.SecretTokenKey]))
	if err != nil {
		events.Warning(r.Recorder, cluster, events.TokenRenewFailed, "Renewing the %s (it expires at %s): %v", what, expiry.UTC().Format(time.RFC3339), err)
		return 0, err
	}
	secret.Data[clusterclient.SecretTokenKey] = []byte(token)
	// The Secret read above, with its resourceVersion: a join that wrote
	// it meanwhile wins, and this is retried with its token.
	if err := r.Client.Update(ctx, secret); err != nil {
		return 0, fmt.Errorf("writing the renewed token into %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	if gauge {
		expiryGauge.WithLabelValues(cluster.Name).Set(float64(newExpiry.Unix()))
	}
	klog.FromContext(ctx).V(2).Info("Renewed a token", "cluster", cluster.Name, "token", what, "expires", newExpiry)
	events.Normal(r.Recorder, cluster, events.TokenRenewed, "Renewed the %s; it expires at %s", what, newExpiry.UTC().Format(time.RFC3339))
	return recheck, nil
}

// renew asks the member, with the current token, for a new token of the
// same ServiceAccount and lifetime: the member token with the member token,
// the impersonator's with the impersonator's own token (current), which
// alone may request it.
func (r *Reconciler) renew(ctx context.Context, cluster *clusterv1alpha1.Cluster, claims Claims, what tokenKind, current string) (string, time.Time, error) {
	ns, name, ok := claims.ServiceAccount()
	if !ok {
		return "", time.Time{}, fmt.Errorf("the token is not a ServiceAccount token (subject %q)", claims.Subject)
	}
	if ns != names.ClusterNamespace {
		return "", time.Time{}, fmt.Errorf("the token is of ServiceAccount %s/%s; karmadactl join makes them in %s only", ns, name, names.ClusterNamespace)
	}
	m, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return "", time.Time{}, err
	}
	life := claims.Expiry - claims.IssuedAt
	if claims.IssuedAt == 0 || life <= 0 {
		return "", time.Time{}, errors.New("the token has no issue time")
	}
	kc := m.Kube
	if what == impersonatorToken {
		// The member's connection (endpoint, CA, proxy), the token's own
		// credentials.
		cfg := rest.CopyConfig(m.Config)
		cfg.BearerToken = current
		if kc, err = kubernetes.NewForConfig(cfg); err != nil {
			return "", time.Time{}, err
		}
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(life)}}
	tr, err = kc.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("requesting a token for ServiceAccount %s/%s in the member: %w", ns, name, err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}

// moveImpersonatorRenewal moves a member joined by an earlier version, whose
// member identity could request the impersonator's tokens, to the
// impersonator renewing its own: it grants the impersonator that right (the
// member identity still holds it, so Kubernetes lets it grant it), then
// narrows the member identity's own Role to its own token. Once per
// Cluster and process; a member where it cannot (RBAC kinds not among
// --propagate-kinds) gets a warning to join it again.
func (r *Reconciler) moveImpersonatorRenewal(ctx context.Context, cluster *clusterv1alpha1.Cluster) {
	if _, done := r.moved.Load(cluster.UID); done {
		return
	}
	err := r.narrow(ctx, cluster)
	if err != nil {
		klog.FromContext(ctx).Info("Could not move the impersonator's token renewal", "cluster", cluster.Name, "err", err)
		events.Warning(r.Recorder, cluster, events.TokenRenewFailed,
			"The member identity of %s may still request the impersonator's tokens, and narrowing it failed: %v; run karmadactl join %s again", cluster.Name, err, cluster.Name)
		return
	}
	r.moved.Store(cluster.UID, true)
}

func (r *Reconciler) narrow(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	m, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return err
	}
	roles := m.Kube.RbacV1().Roles(join.MemberNamespace)
	own, err := roles.Get(ctx, join.ClusterRoleName(cluster.Name), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading its own Role: %w", err)
	}
	narrowed := join.SelfTokenRules(cluster.Name)
	if equality.Semantic.DeepEqual(own.Rules, narrowed) {
		return nil
	}
	if err := join.EnsureImpersonatorSelfRenewal(ctx, m.Kube, cluster.Name); err != nil {
		return err
	}
	own.Rules = narrowed
	if _, err := roles.Update(ctx, own, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("narrowing its own Role: %w", err)
	}
	klog.FromContext(ctx).Info("Moved the impersonator's token renewal to the impersonator", "cluster", cluster.Name)
	return nil
}
