// Package version tells which build a binary is: stamped by the Makefile
// (-ldflags -X) with the version, the commit and the commit's date, and
// shown by every binary's --version and in its image's labels.
package version

import (
	"fmt"
	"runtime"
)

// Set at link time by the Makefile.
var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = ""
	buildDate  = ""
)

// Info is a build's identity, with Karmada's field names.
type Info struct {
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	BuildDate  string `json:"buildDate"`
	GoVersion  string `json:"goVersion"`
	Compiler   string `json:"compiler"`
	Platform   string `json:"platform"`
}

// Get returns this binary's build.
func Get() Info {
	return Info{GitVersion: gitVersion, GitCommit: gitCommit, BuildDate: buildDate,
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// String is the one line --version prints.
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s, %s, %s)", i.GitVersion, orUnknown(i.GitCommit), orUnknown(i.BuildDate), i.GoVersion, i.Platform)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
