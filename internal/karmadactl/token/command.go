// Package token is karmadactl token: its flags and help; what it does is
// internal/registration/token (tokens), which karmada-local uses too.
package token

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/karmada-go/karmada/internal/karmadactl/options"
	tokens "github.com/karmada-go/karmada/internal/registration/token"
)

// NewCommand returns `karmadactl token`.
func NewCommand(g *options.Global, parent string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage bootstrap tokens, with which pull-mode members register",
		Long: `Manage the bootstrap tokens of the Karmada control plane. A token, given to
karmadactl register, lets a pull-mode member verify the control plane and ask
for its agent's credentials. Tokens are Kubernetes bootstrap tokens: Secrets
bootstrap-token-<id> in kube-system of the karmada-apiserver.`,
	}
	cmd.AddCommand(newCreateCommand(g, parent), newListCommand(g), newDeleteCommand(g))
	return cmd
}

func newCreateCommand(g *options.Global, parent string) *cobra.Command {
	o := tokens.CreateOptions{}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token",
		Long: `tokens.Create a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}, drawn at random,
and print it; with --print-register-command, print the whole karmadactl
register command that uses it, with the hash of the control plane's CA.`,
		Example: `  karmadactl token create --print-register-command --kubeconfig ~/.kube/karmada.config --karmada-context karmada-apiserver

  # A token that lasts an hour
  karmadactl token create --ttl 1h --description "member4 at the edge site"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			cfg, kc, err := g.KarmadaClientset()
			if err != nil {
				return err
			}
			token, err := tokens.Create(cmd.Context(), kc, o)
			if err != nil {
				return err
			}
			if !o.PrintRegisterCommand {
				fmt.Fprintln(cmd.OutOrStdout(), token)
				return nil
			}
			line, err := tokens.RegisterCommand(parent, cfg, token)
			if err != nil {
				return fmt.Errorf("token %s created, but: %w", token, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), line)
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.TTL, "ttl", tokens.DefaultTTL, "how long the token lasts before it expires and is deleted (e.g. 1s, 2m, 3h); 0: it never expires")
	f.StringVar(&o.Description, "description", "", "a human-friendly description of what the token is for")
	f.StringSliceVar(&o.Groups, "groups", []string{tokens.DefaultGroup}, `extra groups the token authenticates as; each must match "\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z"`)
	f.StringSliceVar(&o.Usages, "usages", []string{"signing", "authentication"}, "what the token may be used for: signing, authentication")
	f.BoolVar(&o.PrintRegisterCommand, "print-register-command", false, "print the whole 'karmadactl register' command that registers a member with this token, instead of the token alone")
	return cmd
}

func newListCommand(g *options.Global) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the bootstrap tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, kc, err := g.KarmadaClientset()
			if err != nil {
				return err
			}
			tokens, err := tokens.List(cmd.Context(), kc)
			if err != nil {
				return err
			}
			PrintList(cmd.OutOrStdout(), tokens, time.Now())
			return nil
		},
	}
}

func newDeleteCommand(g *options.Global) *cobra.Command {
	return &cobra.Command{
		Use:   "delete TOKEN_ID|TOKEN ...",
		Short: "Delete bootstrap tokens",
		Long:  "Delete bootstrap tokens, given by id ([a-z0-9]{6}) or whole ([a-z0-9]{6}.[a-z0-9]{16}).",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A malformed argument is refused before anything is reached.
			if _, err := tokens.TokenIDs(args); err != nil {
				return err
			}
			_, kc, err := g.KarmadaClientset()
			if err != nil {
				return err
			}
			return tokens.Delete(cmd.Context(), kc, args, cmd.OutOrStdout())
		},
	}
}

// PrintList writes the tokens as `token list` shows them.
func PrintList(out io.Writer, tokens []tokens.Info, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
	for _, t := range tokens {
		ttl, expires := "<forever>", "<never>"
		if t.Expires != nil {
			expires = t.Expires.UTC().Format(time.RFC3339)
			if left := t.Expires.Sub(now); left > 0 {
				ttl = duration.HumanDuration(left)
			} else {
				ttl = "<invalid>"
			}
		}
		desc := t.Description
		if desc == "" {
			desc = "<none>"
		}
		usages := strings.Join(t.Usages, ",")
		if usages == "" {
			usages = "<none>"
		}
		groups := strings.Join(t.Groups, ",")
		if groups == "" {
			groups = "<none>"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Token, ttl, expires, usages, desc, groups)
	}
	_ = w.Flush()
}
