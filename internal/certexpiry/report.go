package certexpiry

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Certificate is one certificate as `certs check` commands list it.
type Certificate struct {
	// Path is where it is: a file (relative to a state directory) or a
	// Secret's key (namespace/name:key).
	Path     string    `json:"path"`
	Subject  string    `json:"subject"`
	Issuer   string    `json:"issuer"`
	CA       bool      `json:"ca,omitempty"`
	NotAfter time.Time `json:"notAfter"`
	// Residual is the time left at the listing; negative once expired.
	Residual time.Duration `json:"residual"`
	// UsedBy are the components that use it.
	UsedBy []string `json:"usedBy,omitempty"`
}

// Describe is cert at path as of now.
func Describe(path string, cert *x509.Certificate, now time.Time, usedBy []string) Certificate {
	return Certificate{Path: path, Subject: cert.Subject.CommonName, Issuer: cert.Issuer.CommonName, CA: cert.IsCA,
		NotAfter: cert.NotAfter, Residual: cert.NotAfter.Sub(now).Round(time.Minute), UsedBy: usedBy}
}

// Sort orders certificates CAs first, then by path.
func Sort(certs []Certificate) {
	sort.SliceStable(certs, func(i, j int) bool {
		if certs[i].CA != certs[j].CA {
			return certs[i].CA
		}
		return certs[i].Path < certs[j].Path
	})
}

// CheckOutput validates a `certs check` command's --output.
func CheckOutput(output string) error {
	if output != "" && output != "json" {
		return fmt.Errorf("--output=%q: must be json, or empty for a table", output)
	}
	return nil
}

// Write writes certs as output says: json, or (empty) a table.
func Write(out io.Writer, certs []Certificate, output string) error {
	if output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(certs)
	}
	Print(out, certs)
	return nil
}

// Print writes the table, as kubeadm's `certs check-expiration` shows one.
func Print(out io.Writer, certs []Certificate) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CERTIFICATE\tSUBJECT\tEXPIRES\tRESIDUAL TIME\tCERTIFICATE AUTHORITY\tUSED BY")
	for _, c := range certs {
		issuer := c.Issuer
		if c.CA {
			issuer = "(CA)"
		}
		used := strings.Join(c.UsedBy, ", ")
		if used == "" {
			used = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Path, c.Subject, c.NotAfter.UTC().Format("Jan 02, 2006 15:04 MST"), Residual(c.Residual), issuer, used)
	}
	_ = tw.Flush()
}

// Residual shows time left as kubeadm does: 364d, 23h, 59m, or expired.
func Residual(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}
