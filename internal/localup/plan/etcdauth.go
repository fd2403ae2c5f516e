package plan

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdRootUser is the etcd user that administers etcd auth (the CN of the
// root client certificate).
const EtcdRootUser = "root"

// EtcdUser is the etcd user an API server acts as: the CN of its client
// certificate.
func EtcdUser(cluster string) string { return "kube-apiserver-" + cluster }

// EtcdPrefix is where an API server keeps its objects.
func EtcdPrefix(cluster string) string { return "/registry-" + cluster }

// prefixEnd is the end of the key range of every key that starts with p.
func prefixEnd(p string) string {
	b := []byte(p)
	b[len(b)-1]++
	return string(b)
}

// isolateAPIServers turns etcd authentication on, with one user per API
// server (its certificate's CN) allowed its own key prefix only, and root.
// It can run again: what exists is kept. (gRPC, not etcd's JSON gateway:
// the gateway ignores client certificates once authentication is on.)
func (f *Fleet) isolateAPIServers(root *tls.Config) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: f.etcdEndpoints(), TLS: root,
			DialTimeout: 10 * time.Second, Context: ctx, Logger: zap.NewNop(),
		})
		if err != nil {
			return fmt.Errorf("connecting to etcd: %w", err)
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		exists := func(what string, err error) error {
			if err != nil && !strings.Contains(err.Error(), "already exists") {
				return fmt.Errorf("etcd %s: %w", what, err)
			}
			return nil
		}
		noPassword := &clientv3.UserAddOptions{NoPassword: true}
		_, err = cli.UserAddWithOptions(ctx, EtcdRootUser, "", noPassword)
		if err := exists("adding user root", err); err != nil {
			return err
		}
		_, err = cli.RoleAdd(ctx, "root")
		if err := exists("adding role root", err); err != nil {
			return err
		}
		if _, err := cli.UserGrantRole(ctx, EtcdRootUser, "root"); err != nil {
			return fmt.Errorf("etcd granting root: %w", err)
		}
		type tenant struct{ user, prefix string }
		var tenants []tenant
		for _, c := range f.Clusters {
			tenants = append(tenants, tenant{EtcdUser(c.Name), EtcdPrefix(c.Name)})
		}
		tenants = append(tenants, tenant{AggregatedAPIServerEtcdUser, AggregatedAPIServerEtcdPrefix}, tenant{SearchEtcdUser, SearchEtcdPrefix})
		for _, t := range tenants {
			user := t.user
			_, err := cli.RoleAdd(ctx, user)
			if err := exists("adding role "+user, err); err != nil {
				return err
			}
			prefix := t.prefix + "/"
			perms := []struct {
				key, end string
				perm     clientv3.PermissionType
			}{
				{prefix, prefixEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite)},
				// Every API server compacts etcd and records it here.
				{"compact_rev_key", "", clientv3.PermissionType(clientv3.PermReadWrite)},
				// The API server's etcd health check reads this key.
				{"health", "", clientv3.PermissionType(clientv3.PermRead)},
			}
			for _, p := range perms {
				if _, err := cli.RoleGrantPermission(ctx, user, p.key, p.end, p.perm); err != nil {
					return fmt.Errorf("etcd granting %s %q: %w", user, p.key, err)
				}
			}
			_, err = cli.UserAddWithOptions(ctx, user, "", noPassword)
			if err := exists("adding user "+user, err); err != nil {
				return err
			}
			if _, err := cli.UserGrantRole(ctx, user, user); err != nil {
				return fmt.Errorf("etcd granting %s its role: %w", user, err)
			}
		}
		if _, err := cli.AuthEnable(ctx); err != nil {
			return fmt.Errorf("etcd enabling authentication: %w", err)
		}
		return nil
	}
}
