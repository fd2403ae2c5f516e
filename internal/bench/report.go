package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Settings are what a run ran under.
type Settings struct {
	Members     []string `json:"members"`
	Templates   int      `json:"templates"`
	Replicas    int32    `json:"replicas"`
	Mode        Mode     `json:"mode"`
	Concurrency int      `json:"concurrency"`
	// PerNamespace is how many templates went in one namespace.
	PerNamespace int            `json:"templatesPerNamespace,omitempty"`
	Client       ClientSettings `json:"client"`
	CPUs         int            `json:"cpus"`
	MemoryBytes  int64          `json:"memoryBytes,omitempty"`
}

// Requests are the API requests a run caused, from the API servers' own
// counters (watches excluded).
type Requests struct {
	// ControlPlane counts every request the karmada-apiserver served during
	// the run, the benchmark's own creates and reads included.
	ControlPlane RequestCounts `json:"controlPlane"`
	// Members counts requests to the members' deployments resource (not its
	// status), which only the control plane makes.
	Members RequestCounts `json:"members"`
	// Events counts the requests to events (included in ControlPlane): the
	// cost of the events the controllers record.
	Events RequestCounts `json:"events"`
	// PerTemplate is ControlPlane.Total divided by the templates.
	PerTemplate float64 `json:"perTemplate"`
	// WritesPerTemplate is ControlPlane.Mutating divided by the templates;
	// WritesPerTemplateWithoutEvents leaves the events' writes out.
	WritesPerTemplate              float64 `json:"writesPerTemplate"`
	WritesPerTemplateWithoutEvents float64 `json:"writesPerTemplateWithoutEvents"`
	// PerMemberCopy is Members.Total divided by the member copies.
	PerMemberCopy float64 `json:"perMemberCopy"`
}

// RestartFigures are the outcome of `restart`.
type RestartFigures struct {
	// Changed is the number of templates changed while the controller
	// manager was down, ChangedCopies their member copies.
	Changed       int `json:"changed"`
	ChangedCopies int `json:"changedCopies"`
	// Ready is how long the start command took (until the process is
	// healthy).
	Ready Duration `json:"ready"`
	// CaughtUp is from the start command until every change was seen in
	// every member.
	CaughtUp Duration `json:"caughtUp"`
	// MemberWrites counts the members' deployments writes from the kill to
	// the end of the settle period after catching up; Needless is what
	// exceeds one write per changed copy.
	MemberWrites       float64  `json:"memberWrites"`
	MemberWritesAtDone float64  `json:"memberWritesAtCaughtUp"`
	Needless           float64  `json:"needlessMemberWrites"`
	Settle             Duration `json:"settle"`
	// Resources are the processes' figures from just before the start
	// command to the end of the settle period: the restarted process's
	// peak RSS is that of its start and catch-up alone.
	Resources map[string]ProcessFigures `json:"resources,omitempty"`
}

// Report is the outcome of `propagate` or `restart`.
type Report struct {
	Kind      string    `json:"kind"`
	Started   time.Time `json:"started"`
	Namespace string    `json:"namespace"`
	// Namespaces are the namespaces the templates were in, when more than
	// one (Settings.PerNamespace each).
	Namespaces []string `json:"namespaces,omitempty"`
	Settings   Settings `json:"settings"`

	// Create is how long creating every template took; CreateRate is
	// templates per second.
	Create     Duration `json:"create"`
	CreateRate float64  `json:"createRate"`
	// Latencies from each template's create request.
	InEveryMember Summary `json:"inEveryMember"`
	Available     Summary `json:"available"`
	Aggregated    Summary `json:"aggregated"`
	Complete      int     `json:"complete"`
	Incomplete    int     `json:"incomplete"`
	// Wall is from the first create request to the last template complete;
	// Throughput is complete templates per second of Wall.
	Wall       Duration `json:"wall"`
	Throughput float64  `json:"throughput"`
	// Ceiling is the karmada-apiserver's raw create rate (apiserver-limit),
	// FractionOfCeiling is Throughput divided by it.
	Ceiling           float64 `json:"apiserverCeiling,omitempty"`
	FractionOfCeiling float64 `json:"fractionOfCeiling,omitempty"`
	// UserCreatesOfCeiling is CreateRate, the user's creates while the
	// control plane propagates the first of them, divided by Ceiling, the
	// same client's creates on an idle control plane: how much the
	// controllers' work slows a user's writes (TARGETS: at least 0.5).
	UserCreatesOfCeiling float64 `json:"userCreatesOfCeiling,omitempty"`

	Requests  Requests                  `json:"requests"`
	Resources map[string]ProcessFigures `json:"resources,omitempty"`
	Restart   *RestartFigures           `json:"restart,omitempty"`
	// Floor is the floor run just before on the same fleet
	// (propagate --floor).
	Floor   *FloorComparison `json:"floor,omitempty"`
	Cleanup CleanupResult    `json:"cleanup"`
	Error   string           `json:"error,omitempty"`
}

// relateToCeiling sets the figures that divide by the idle ceiling, when
// one was measured or given.
func (r *Report) relateToCeiling() {
	if r.Ceiling <= 0 {
		return
	}
	r.FractionOfCeiling = r.Throughput / r.Ceiling
	r.UserCreatesOfCeiling = r.CreateRate / r.Ceiling
}

// FloorComparison sets a propagation beside the floor run just before it on
// the same fleet: the same Deployments created directly in the members.
type FloorComparison struct {
	// Wall is the floor's wall time; WallRatio the propagation's wall
	// divided by it (the figure the floor is for).
	Wall      Duration `json:"wall"`
	WallRatio float64  `json:"wallRatio"`
	// CPUSeconds are of the processes the floor measured, and
	// PropagationCPUSeconds of those the propagation measured; they are
	// comparable when both measured the same processes (--measure-fleet).
	CPUSeconds            float64 `json:"cpuSeconds"`
	PropagationCPUSeconds float64 `json:"propagationCpuSeconds"`
	// Create is how long the floor's create requests took.
	Create Duration `json:"create"`
}

// CompareToFloor returns the comparison of r with the floor run f, or nil
// when either has no wall time (a run that failed).
func CompareToFloor(r *Report, f *FloorReport) *FloorComparison {
	if r.Wall <= 0 || f.Wall <= 0 {
		return nil
	}
	return &FloorComparison{
		Wall:                  f.Wall,
		WallRatio:             float64(r.Wall) / float64(f.Wall),
		CPUSeconds:            totalCPU(f.Resources),
		PropagationCPUSeconds: totalCPU(r.Resources),
		Create:                f.Create,
	}
}

// totalCPU adds the CPU time of the processes that were measured.
func totalCPU(resources map[string]ProcessFigures) float64 {
	var cpu float64
	for _, f := range resources {
		if f.Error == "" {
			cpu += f.CPUSeconds
		}
	}
	return cpu
}

// CeilingReport is the outcome of `apiserver-limit`.
type CeilingReport struct {
	Kind        string         `json:"kind"`
	Started     time.Time      `json:"started"`
	Objects     int            `json:"objects"`
	Concurrency int            `json:"concurrency"`
	Client      ClientSettings `json:"client"`
	Elapsed     Duration       `json:"elapsed"`
	// CreatesPerSecond is Objects divided by Elapsed.
	CreatesPerSecond float64 `json:"createsPerSecond"`
	Cleanup          bool    `json:"cleanedUp"`
	Error            string  `json:"error,omitempty"`
}

// machineSettings fills the machine's size.
func machineSettings(s *Settings) {
	s.CPUs = runtime.NumCPU()
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(strings.SplitN(string(data), "\n", 2)[0], "MemTotal: %d kB", &kb); err == nil {
			s.MemoryBytes = kb * 1024
		}
	}
}

// WriteJSON writes v, indented, to path.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Print writes the report for a reader.
func (r *Report) Print(out io.Writer) {
	s := r.Settings
	fmt.Fprintf(out, "\n%s: %d templates x %d replica(s), %s, over %d member(s) (%s)\n", r.Kind, s.Templates, s.Replicas, s.Mode, len(s.Members), strings.Join(s.Members, ","))
	fmt.Fprintf(out, "client: qps %.0f, burst %d, concurrency %d; machine: %d CPUs, %d GiB\n", s.Client.QPS, s.Client.Burst, s.Concurrency, s.CPUs, s.MemoryBytes>>30)
	fmt.Fprintf(out, "created in %s (%.1f/s)\n", r.Create, r.CreateRate)
	if r.UserCreatesOfCeiling > 0 {
		fmt.Fprintf(out, "the user's creates while propagating: %.1f/s, %.1f%% of the idle ceiling (%.1f/s)\n", r.CreateRate, 100*r.UserCreatesOfCeiling, r.Ceiling)
	}
	printMilestones(out, []milestone{{"in every member", r.InEveryMember}, {"available in members", r.Available}, {"aggregated status", r.Aggregated}})
	fmt.Fprintf(out, "complete: %d, incomplete: %d; wall %s; throughput %.1f templates/s\n", r.Complete, r.Incomplete, r.Wall, r.Throughput)
	if r.Ceiling > 0 {
		fmt.Fprintf(out, "apiserver ceiling %.1f creates/s; propagation reached %.1f%% of it\n", r.Ceiling, 100*r.FractionOfCeiling)
	}
	q := r.Requests
	fmt.Fprintf(out, "requests: karmada-apiserver %.0f (%.1f per template, %.0f writes, %.0f conflicts); members' deployments %.0f (%.1f per copy, %.0f writes)\n",
		q.ControlPlane.Total, q.PerTemplate, q.ControlPlane.Mutating, q.ControlPlane.Conflicts, q.Members.Total, q.PerMemberCopy, q.Members.Mutating)
	fmt.Fprintf(out, "writes per template: %.2f with events, %.2f without (%.0f event writes)\n", q.WritesPerTemplate, q.WritesPerTemplateWithoutEvents, q.Events.Mutating)
	PrintResources(out, r.Resources)
	if rf := r.Restart; rf != nil {
		fmt.Fprintf(out, "restart: %d templates (%d member copies) changed while down; ready in %s, caught up %s after start\n", rf.Changed, rf.ChangedCopies, rf.Ready, rf.CaughtUp)
		fmt.Fprintf(out, "  member writes: %.0f at catch-up, %.0f after %s more; needless: %.0f\n", rf.MemberWritesAtDone, rf.MemberWrites, rf.Settle, rf.Needless)
		for _, name := range sortedNames(rf.Resources) {
			if f := rf.Resources[name]; f.Error == "" {
				fmt.Fprintf(out, "  %s from the start: peak RSS %d MiB, CPU %.1f s\n", name, f.PeakRSSBytes>>20, f.CPUSeconds)
			}
		}
	}
	if fc := r.Floor; fc != nil {
		fmt.Fprintf(out, "floor on this fleet just before: wall %s (created in %s), CPU %.1f s; wall / floor wall = %.2f (CPU %.1f s against %.1f s)\n",
			fc.Wall, fc.Create, fc.CPUSeconds, fc.WallRatio, fc.PropagationCPUSeconds, fc.CPUSeconds)
	}
	if r.Cleanup.Complete {
		fmt.Fprintf(out, "cleaned up; members clean %s after deleting the templates\n", r.Cleanup.MembersClean)
	} else {
		fmt.Fprintf(out, "clean-up incomplete: %s\n", strings.Join(r.Cleanup.Problems, "; "))
	}
}

// milestone is one row of the latency table.
type milestone struct {
	name string
	s    Summary
}

func printMilestones(out io.Writer, rows []milestone) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MILESTONE\tCOUNT\tP50\tP90\tP99\tMAX")
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", row.name, row.s.Count, row.s.P50, row.s.P90, row.s.P99, row.s.Max)
	}
	tw.Flush()
}

// PrintResources writes each measured process's figures, and their CPU
// total when there are more than the two controllers.
func PrintResources(out io.Writer, resources map[string]ProcessFigures) {
	for _, name := range sortedNames(resources) {
		f := resources[name]
		if f.Error != "" {
			fmt.Fprintf(out, "%s: not measured (%s)\n", name, f.Error)
			continue
		}
		fmt.Fprintf(out, "%s: peak RSS %d MiB, CPU %.1f s\n", name, f.PeakRSSBytes>>20, f.CPUSeconds)
		if strings.HasPrefix(name, "karmada-") && len(f.Args) > 1 {
			fmt.Fprintf(out, "  flags: %s\n", strings.Join(f.Args[1:], " "))
		}
	}
	if len(resources) > 2 {
		fmt.Fprintf(out, "CPU of the measured processes: %.1f s\n", totalCPU(resources))
	}
}

// Print writes the ceiling report for a reader.
func (r *CeilingReport) Print(out io.Writer) {
	fmt.Fprintf(out, "\napiserver-limit: %d Deployments created in %s with %d workers (qps %.0f, burst %d): %.1f creates/s\n",
		r.Objects, r.Elapsed, r.Concurrency, r.Client.QPS, r.Client.Burst, r.CreatesPerSecond)
}
