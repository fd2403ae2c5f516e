// Package registration is the home of a pull-mode member's identity in the
// control plane: the agent's client certificate, requested by karmadactl
// register and renewed by karmada-agent (agentcert), and its approval and
// rights, bound to one registration's key (agentcsr, a controller of the
// controller manager). The names of the identity (user, groups) are in
// internal/names.
package registration
