package kubectlcmds

import "regexp"

var kubectlWord = regexp.MustCompile(`(?m)(^|\s)kubectl(\s)`)

// replaceKubectl writes kubectl's examples with karmadactl's name.
func replaceKubectl(example, parent string) string {
	return kubectlWord.ReplaceAllString(example, "${1}"+parent+"${2}")
}
