// Package process is the fleet's process room: the plan's unit (Step, with
// its Probe and LeaderProbe) and the DAG runner that starts steps in
// dependency order; the supervision of the processes karmada-local starts
// (Start, pid Records that survive the invocation and are trusted only with
// the process's start time, Stop, Running, WaitReady); the ports they need
// (free, and outside the kernel's ephemeral range); and Drift, what makes
// `up` restart a healthy process that no longer runs what its step says.
// It knows nothing of Karmada: localup builds the steps.
package process
