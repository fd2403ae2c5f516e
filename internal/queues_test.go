package internal_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	makesController = regexp.MustCompile(`NewControllerManagedBy\(|controller\.NewTyped(\[[A-Za-z.]+\])?\(|controller\.New\(`)
	takesQueue      = regexp.MustCompile(`queues\.(Options\(|TypedOptions\[|NewPriority\()`)
)

// TestControllersTakeTheirQueueFromQueues fails on a file that makes more
// controllers than it takes options from internal/queues (queues.Options,
// queues.TypedOptions or queues.NewPriority): with ControllerPriorityQueue,
// controller-runtime's own priority queue would keep such a controller's
// workers, and its manager, waiting at shutdown.
func TestControllersTakeTheirQueueFromQueues(t *testing.T) {
	found := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "queues/") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		n := len(makesController.FindAllStringIndex(src, -1))
		if n == 0 {
			return nil
		}
		found += n
		if takes := len(takesQueue.FindAllStringIndex(src, -1)); takes < n {
			t.Errorf("%s makes %d controllers and takes %d queue options from internal/queues: each controller needs its own", path, n, takes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 25 {
		t.Errorf("only %d controllers found: the scan is broken", found)
	}
}
