package process

import (
	"fmt"
	"strings"
)

// StartError says a component died or never became ready while starting.
type StartError struct {
	Step    string
	Reason  string
	LogPath string
	LogTail string
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("%s %s; its log is %s", e.Step, e.Reason, e.LogPath)
	if e.LogTail != "" {
		msg += ", ending with:\n" + indent(e.LogTail, "    ")
	}
	return msg
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
