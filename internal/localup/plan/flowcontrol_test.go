package plan

import (
	"io/fs"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/deploy"
	"github.com/karmada-go/karmada/internal/names"
)

// The flow schema of deploy/flowcontrol covers every Karmada component's
// identity (a component added later without it would compete with users),
// and nothing else: users are not put in the controllers' level.
func TestFlowSchemaCoversEveryComponent(t *testing.T) {
	data, err := fs.ReadFile(deploy.FlowControl, "flowcontrol/karmada-controllers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var schema *flowcontrolv1.FlowSchema
	var level *flowcontrolv1.PriorityLevelConfiguration
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "FlowSchema":
			schema = &flowcontrolv1.FlowSchema{}
			err = yaml.UnmarshalStrict([]byte(doc), schema)
		case "PriorityLevelConfiguration":
			level = &flowcontrolv1.PriorityLevelConfiguration{}
			err = yaml.UnmarshalStrict([]byte(doc), level)
		}
		if err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
	}
	if schema == nil || level == nil {
		t.Fatal("want one FlowSchema and one PriorityLevelConfiguration")
	}
	if schema.Spec.PriorityLevelConfiguration.Name != level.Name || level.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited {
		t.Fatalf("flow schema points at %q; level %q is %s", schema.Spec.PriorityLevelConfiguration.Name, level.Name, level.Spec.Type)
	}
	want := map[string]bool{"Group/" + names.AgentGroup: true}
	for _, c := range karmadaComponents {
		want["User/"+KarmadaUser(c)] = true
	}
	got := map[string]bool{}
	for _, r := range schema.Spec.Rules {
		for _, s := range r.Subjects {
			switch s.Kind {
			case flowcontrolv1.SubjectKindUser:
				got["User/"+s.User.Name] = true
			case flowcontrolv1.SubjectKindGroup:
				got["Group/"+s.Group.Name] = true
			default:
				got[string(s.Kind)] = true
			}
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("flow schema karmada-controllers does not match %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("flow schema karmada-controllers matches %s, which is not a Karmada component", k)
		}
	}
}
