package overridemanager

import (
	"fmt"
	"strings"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// Image is a container image reference split into the parts an
// imageOverrider changes: [registry/]repository[:tag][@digest].
type Image struct {
	Registry   string
	Repository string
	Tag        string
	Digest     string
}

// ParseImage splits an image reference. The first path component is a
// registry when it looks like a host (has a dot or a port, or is
// localhost).
func ParseImage(s string) Image {
	var img Image
	if i := strings.Index(s, "@"); i >= 0 {
		s, img.Digest = s[:i], s[i+1:]
	}
	if i := strings.LastIndex(s, ":"); i >= 0 && !strings.Contains(s[i+1:], "/") {
		s, img.Tag = s[:i], s[i+1:]
	}
	if i := strings.Index(s, "/"); i >= 0 {
		first := s[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" {
			img.Registry, s = first, s[i+1:]
		}
	}
	img.Repository = s
	return img
}

// String joins the parts again.
func (i Image) String() string {
	var b strings.Builder
	if i.Registry != "" {
		b.WriteString(i.Registry)
		b.WriteString("/")
	}
	b.WriteString(i.Repository)
	if i.Tag != "" {
		b.WriteString(":")
		b.WriteString(i.Tag)
	}
	if i.Digest != "" {
		b.WriteString("@")
		b.WriteString(i.Digest)
	}
	return b.String()
}

// Override changes one part: add appends value to the registry or the
// repository (and sets a tag), replace sets the part, remove clears it.
func (i *Image) Override(c policyv1alpha1.ImageComponent, op policyv1alpha1.OverriderOperator, value string) error {
	var part *string
	switch c {
	case policyv1alpha1.Registry:
		part = &i.Registry
	case policyv1alpha1.Repository:
		part = &i.Repository
	case policyv1alpha1.Tag:
		part = &i.Tag
	default:
		return fmt.Errorf("component %q: must be Registry, Repository or Tag", c)
	}
	switch op {
	case policyv1alpha1.OverriderOpAdd:
		if c == policyv1alpha1.Tag {
			*part = value
		} else {
			*part += value
		}
	case policyv1alpha1.OverriderOpReplace:
		*part = value
	case policyv1alpha1.OverriderOpRemove:
		*part = ""
	default:
		return fmt.Errorf("operator %q: must be add, remove or replace", op)
	}
	if i.Repository == "" {
		return fmt.Errorf("the image would have no repository")
	}
	return nil
}
