package process

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Args is the flags a process starts with, in the order given: a typed
// set instead of hand-formatted "--name=value" strings. Set gives a flag
// its value (a second Set of the same flag replaces the value where the
// flag first stood, so a later layer overrides a default without the
// process seeing the flag twice), On adds a flag that takes no value, and
// Strings renders them as the process runs with them. The zero Args is
// empty and ready to use.
type Args struct {
	flags []arg
}

type arg struct {
	name, value string
	// bare is a flag without a value (--client-cert-auth).
	bare bool
}

// NewArgs returns an empty set, for chaining.
func NewArgs() *Args { return &Args{} }

// Set gives flag name (without its dashes) value, formatted as fmt.Sprint
// formats it; a []string is joined with commas, as Kubernetes' list flags
// take it.
func (a *Args) Set(name string, value any) *Args {
	v := ""
	switch x := value.(type) {
	case string:
		v = x
	case []string:
		v = strings.Join(x, ",")
	default:
		v = fmt.Sprint(x)
	}
	return a.put(arg{name: name, value: v})
}

// On adds flag name without a value.
func (a *Args) On(name string) *Args { return a.put(arg{name: name, bare: true}) }

func (a *Args) put(f arg) *Args {
	if strings.HasPrefix(f.name, "-") || f.name == "" {
		panic(fmt.Sprintf("process.Args: flag %q: give the name without dashes", f.name))
	}
	for i := range a.flags {
		if a.flags[i].name == f.name {
			a.flags[i] = f
			return a
		}
	}
	a.flags = append(a.flags, f)
	return a
}

// Merge sets each flag of b, in b's order, as Set and On do; a nil b
// adds nothing.
func (a *Args) Merge(b *Args) *Args {
	if b != nil {
		for _, f := range b.flags {
			a.put(f)
		}
	}
	return a
}

// Strings renders the flags, --name=value (--name for On), in order.
func (a *Args) Strings() []string {
	out := make([]string, 0, len(a.flags))
	for _, f := range a.flags {
		if f.bare {
			out = append(out, "--"+f.name)
		} else {
			out = append(out, "--"+f.name+"="+f.value)
		}
	}
	return out
}

// KubeComponent is what kube-controller-manager and kube-scheduler are
// both started with: one kubeconfig for the API and for delegated
// authentication and authorization, and their secure port on 127.0.0.1
// with the serving certificate <pkiDir>/<name>-serving.crt (and .key).
func KubeComponent(kubeconfig string, port int, pkiDir, name string) *Args {
	return NewArgs().
		Set("kubeconfig", kubeconfig).
		Set("authentication-kubeconfig", kubeconfig).
		Set("authorization-kubeconfig", kubeconfig).
		Set("bind-address", "127.0.0.1").
		Set("secure-port", port).
		Set("tls-cert-file", filepath.Join(pkiDir, name+"-serving.crt")).
		Set("tls-private-key-file", filepath.Join(pkiDir, name+"-serving.key"))
}
