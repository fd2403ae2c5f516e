package localup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// Certificates lists every certificate of the fleet in stateDir, CAs first,
// each with the processes that use it.
func Certificates(stateDir, binDir string) ([]certexpiry.Certificate, error) {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return nil, err
	}
	steps, err := f.Steps()
	if err != nil {
		return nil, err
	}
	users := certificateUsers(steps)
	var out []certexpiry.Certificate
	now := time.Now()
	err = eachCertificate(stateDir, func(path string, cert *x509.Certificate) {
		rel, _ := filepath.Rel(stateDir, path)
		c := certexpiry.Describe(rel, cert, now, users[path])
		switch {
		case strings.HasSuffix(path, filepath.Join("pki", "admin.crt")):
			c.UsedBy = append(c.UsedBy, "kubeconfig "+f.Cfg.Kubeconfig)
		case path == f.Etcd.Root:
			c.UsedBy = append(c.UsedBy, "karmada-local (etcd users and roles)")
		}
		out = append(out, c)
	})
	if err != nil {
		return nil, err
	}
	certexpiry.Sort(out)
	return out, nil
}

// eachCertificate calls fn with every certificate file (*.crt) under dir;
// a file that holds no certificate is not one of ours and is passed over.
func eachCertificate(dir string, fn func(path string, cert *x509.Certificate)) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".crt") {
			return err
		}
		if cert, _, err := pki.ReadCert(path); err == nil {
			fn(path, cert)
		}
		return nil
	})
}

// certificateUsers maps each certificate file to the processes that read
// it: named by a flag (--tls-cert-file=..., --cert-dir with
// --tls-cert-file-name) or by a kubeconfig a flag names.
func certificateUsers(steps []*process.Step) map[string][]string {
	users := map[string][]string{}
	add := func(path, step string) {
		for _, u := range users[path] {
			if u == step {
				return
			}
		}
		users[path] = append(users[path], step)
	}
	for _, s := range steps {
		if !s.IsProcess() {
			continue
		}
		flags := map[string]string{}
		for _, a := range s.Args {
			name, value, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			flags[name] = value
			for _, v := range strings.Split(value, ",") {
				switch {
				case !filepath.IsAbs(v):
					// A file name (--tls-cert-file-name): with --cert-dir below.
				case strings.HasSuffix(v, ".crt"):
					add(v, s.Name)
				case strings.Contains(name, "kubeconfig"):
					cfg, err := clientcmd.LoadFromFile(v)
					if err != nil {
						continue
					}
					for _, ai := range cfg.AuthInfos {
						if ai.ClientCertificate != "" {
							add(ai.ClientCertificate, s.Name)
						}
					}
					for _, cl := range cfg.Clusters {
						if cl.CertificateAuthority != "" {
							add(cl.CertificateAuthority, s.Name)
						}
					}
				}
			}
		}
		if dir, ok := flags["--cert-dir"]; ok && flags["--tls-cert-file-name"] != "" {
			add(filepath.Join(dir, flags["--tls-cert-file-name"]), s.Name)
		}
	}
	return users
}

// RenewOptions are certs renew's.
type RenewOptions struct {
	// Timeout bounds the wait for every server to present its renewed
	// certificate.
	Timeout time.Duration
}

// RenewCertificates issues every leaf certificate of the fleet again, with
// the lifetime up was given (the CAs are kept, so everything they signed
// stays trusted), writes the user's kubeconfig with the new admin
// certificates, and waits until every running server presents its renewed
// serving certificate: the processes reload their files, none is restarted
// but the members' kwoks (simulators that read their certificate only at
// start).
// Client certificates are picked up as clients reconnect (client-go reads
// them again every five minutes); the old ones stay valid until they expire.
func RenewCertificates(ctx context.Context, stateDir, binDir string, opts RenewOptions, out io.Writer) error {
	rec, err := readState(stateDir)
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("no fleet in %s: run `karmada-local up` first", stateDir)
	}
	cfg := rec.config(stateDir, binDir)
	cfg.Renew = true
	began := time.Now()
	f := plan.NewFleet(cfg)
	if err := f.Prepare(); err != nil {
		return err
	}
	if err := f.WriteUserKubeconfig(); err != nil {
		return err
	}
	// The serial numbers of the certificates issued now: what each server
	// must present.
	renewed := map[string]bool{}
	err = eachCertificate(stateDir, func(_ string, cert *x509.Certificate) {
		if !cert.IsCA && !cert.NotBefore.Before(began.Add(-pki.Backdate-time.Second)) {
			renewed[cert.SerialNumber.String()] = true
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Renewed %d certificates (valid until %s); the CAs are kept.\n", len(renewed), began.Add(cfg.Validity().LeafLifetime()).UTC().Format(time.RFC3339))
	steps, err := f.Steps()
	if err != nil {
		return err
	}
	running, err := process.Running(stateDir)
	if err != nil {
		return err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	// What reads its serving certificate only when it starts (the members'
	// kwoks, which keep no state) is restarted.
	for _, s := range steps {
		if _, ok := running[s.Name]; !ok || !s.RestartToRenew {
			continue
		}
		if err := ComponentStop(stateDir, binDir, s.Name, false, io.Discard); err != nil {
			return err
		}
		if err := ComponentStart(ctx, stateDir, binDir, s.Name, io.Discard); err != nil {
			return err
		}
		if running, err = process.Running(stateDir); err != nil {
			return err
		}
	}
	var failed []string
	for _, s := range steps {
		if _, ok := running[s.Name]; !ok || s.Probe == nil || !strings.HasPrefix(s.Probe.URL, "https://") {
			continue
		}
		took, err := waitServing(ctx, s.Probe, renewed)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", s.Name, err))
			continue
		}
		fmt.Fprintf(out, "  %-45s serves its renewed certificate (after %s, same pid %d)\n", s.Name, took.Round(100*time.Millisecond), running[s.Name].PID)
	}
	if len(failed) > 0 {
		return fmt.Errorf("renewed, but not every server presents its new certificate yet (restart them with `karmada-local component restart`):\n  %s", strings.Join(failed, "\n  "))
	}
	return nil
}

// waitServing waits until the server behind probe presents one of the
// renewed certificates (by serial number).
func waitServing(ctx context.Context, probe *process.Probe, renewed map[string]bool) (time.Duration, error) {
	u, err := url.Parse(probe.URL)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var last error
	for {
		leaf, err := presented(ctx, u.Host, probe.TLS)
		if err == nil && renewed[leaf.SerialNumber.String()] {
			return time.Since(start), nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("still presents the certificate issued %s", leaf.NotBefore.Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return 0, last
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// presented returns the leaf certificate the server at addr presents.
func presented(ctx context.Context, addr string, base *tls.Config) (*x509.Certificate, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		cfg = base.Clone()
	}
	var leaf *x509.Certificate
	// Only the certificate is wanted: it is read whatever the chain.
	cfg.InsecureSkipVerify = true //nolint:gosec // nothing is sent; the presented certificate is only read
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) > 0 {
			leaf = cs.PeerCertificates[0]
		}
		return nil
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = conn.Close()
	if leaf == nil {
		return nil, fmt.Errorf("no certificate presented")
	}
	return leaf, nil
}
