package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// A propagation is set beside its floor by wall time, and each run's CPU is
// the sum of what it measured (a process it could not measure adds
// nothing); a failed run has nothing to compare.
func TestCompareToFloor(t *testing.T) {
	r := &Report{Wall: Duration(150 * time.Second), Resources: map[string]ProcessFigures{
		"karmada-controller-manager": {CPUSeconds: 20},
		"member1/kube-apiserver":     {CPUSeconds: 30.5},
		"member2/kube-apiserver":     {Error: "no such process", CPUSeconds: 99},
	}}
	f := &FloorReport{Wall: Duration(60 * time.Second), Create: Duration(20 * time.Second), Resources: map[string]ProcessFigures{
		"member1/kube-apiserver": {CPUSeconds: 20},
		"member2/kube-apiserver": {CPUSeconds: 21},
	}}
	c := CompareToFloor(r, f)
	if c == nil {
		t.Fatal("no comparison")
	}
	if math.Abs(c.WallRatio-2.5) > 1e-9 || c.Wall != f.Wall || c.Create != f.Create {
		t.Errorf("ratio %v, wall %v, create %v: want 2.5, 1m0s, 20s", c.WallRatio, c.Wall, c.Create)
	}
	if c.CPUSeconds != 41 || c.PropagationCPUSeconds != 50.5 {
		t.Errorf("CPU %v against %v: want 50.5 against 41", c.PropagationCPUSeconds, c.CPUSeconds)
	}
	r.Floor = c
	var out bytes.Buffer
	r.Print(&out)
	if !strings.Contains(out.String(), "wall / floor wall = 2.50") {
		t.Errorf("report does not give the ratio:\n%s", out.String())
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Floor struct {
			Wall      float64 `json:"wall"`
			WallRatio float64 `json:"wallRatio"`
		} `json:"floor"`
	}
	if err := json.Unmarshal(data, &back); err != nil || back.Floor.Wall != 60 || back.Floor.WallRatio != 2.5 {
		t.Errorf("JSON floor %+v (%v): want wall 60, ratio 2.5", back.Floor, err)
	}

	if CompareToFloor(&Report{}, f) != nil || CompareToFloor(r, &FloorReport{}) != nil {
		t.Error("a run without a wall time was compared")
	}
}

// The user's creates while propagating are set beside the idle ceiling and
// printed as the headline figure; without a ceiling there is no ratio.
func TestUserCreatesAgainstTheCeiling(t *testing.T) {
	r := &Report{Kind: "propagate", CreateRate: 34, Throughput: 3.7, Ceiling: 500}
	r.relateToCeiling()
	if math.Abs(r.UserCreatesOfCeiling-0.068) > 1e-9 || math.Abs(r.FractionOfCeiling-0.0074) > 1e-9 {
		t.Errorf("user creates %v, propagation %v of the ceiling: want 0.068 and 0.0074", r.UserCreatesOfCeiling, r.FractionOfCeiling)
	}
	var out bytes.Buffer
	r.Print(&out)
	if want := "the user's creates while propagating: 34.0/s, 6.8% of the idle ceiling (500.0/s)"; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
	none := &Report{CreateRate: 34}
	none.relateToCeiling()
	if none.UserCreatesOfCeiling != 0 {
		t.Errorf("a ratio without a ceiling: %v", none.UserCreatesOfCeiling)
	}
}
