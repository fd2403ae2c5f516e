// Command images writes the OCI image of every binary we ship, and of the
// pinned upstream binaries the chart runs, as OCI layout tarballs
// (`make images`). It needs no Docker and downloads nothing: the images are
// assembled from bin/ by internal/images.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/karmada-go/karmada/internal/images"
)

func main() {
	var (
		binDir   = flag.String("bin-dir", "bin", "directory of our static binaries")
		upDir    = flag.String("upstream-bin-dir", "", "directory of the upstream ones: kube-apiserver, kube-controller-manager, etcd, coredns (default: --bin-dir)")
		out      = flag.String("output", "_output/images", "directory the tarballs are written to")
		registry = flag.String("registry", "docker.io/karmada-go", "registry and organisation of the images' names")
		tag      = flag.String("tag", "", "tag of every image (required)")
		version  = flag.String("version", "", "org.opencontainers.image.version (default: the tag)")
		revision = flag.String("revision", "", "org.opencontainers.image.revision: the commit built")
		source   = flag.String("source", "https://github.com/karmada-go/karmada", "org.opencontainers.image.source")
		epoch    = flag.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "time of every file and of the config, in seconds since 1970 (the commit's time keeps builds reproducible)")
		only     = flag.String("only", "", "comma-separated names of the images to write (default: all)")
	)
	flag.Parse()
	if *upDir == "" {
		*upDir = *binDir
	}
	if err := run(*binDir, *upDir, *out, *registry, *tag, *version, *revision, *source, *epoch, *only); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(binDir, upDir, out, registry, tag, version, revision, source, epoch, only string) error {
	if tag == "" {
		return fmt.Errorf("--tag is required")
	}
	if version == "" {
		version = tag
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("--source-date-epoch=%q: must be seconds since 1970 (git log -1 --format=%%ct)", epoch)
	}
	o := images.Options{Version: version, Revision: revision, Source: source, Created: time.Unix(secs, 0), OS: "linux", Architecture: "amd64"}
	var want []string
	if only != "" {
		want = strings.Split(only, ",")
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tDIGEST\tSIZE")
	for _, spec := range images.Catalog(binDir, upDir) {
		if want != nil && !slices.Contains(want, spec.Name) {
			continue
		}
		img, err := images.Build(spec, o)
		if err != nil {
			return err
		}
		ref := images.Ref(registry, spec.Name, tag)
		file := filepath.Join(out, spec.Name+".tar")
		digest, err := images.WriteLayoutTar(file, img, ref, tag, o.Created)
		if err != nil {
			return fmt.Errorf("writing %s: %w", file, err)
		}
		st, err := os.Stat(file)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f MB\n", ref, digest, float64(st.Size())/1e6)
	}
	return tw.Flush()
}
