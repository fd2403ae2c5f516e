// Package images assembles the OCI images of the binaries we ship, without
// Docker: a base layer we write ourselves (passwd, group, nsswitch, a /tmp
// and the non-root user's home), one layer holding the static binary, and a
// config that runs it as that user. Every timestamp, owner and order is
// fixed, so the same binaries always give the same digests.
package images

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user and group every image runs as (distroless' nonroot).
const NonRoot = 65532

// Labels are the OCI annotation keys an image's config carries.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelTitle    = "org.opencontainers.image.title"
	LabelCreated  = "org.opencontainers.image.created"
	LabelLicenses = "org.opencontainers.image.licenses"
)

// Spec is one image: a binary and where it goes.
type Spec struct {
	// Name is the image's name without registry or tag
	// (karmada-controller-manager).
	Name string
	// Binary is the file to put in the image.
	Binary string
	// Path is where the binary goes in the image (/bin/<name>); it is the
	// entrypoint unless Entrypoint is set.
	Path string
	// Entrypoint overrides the default [Path].
	Entrypoint []string
	// Root runs the image as root; only images that cannot work otherwise
	// (none of the control plane's) set it.
	Root bool
}

// Options are what every image of a build shares.
type Options struct {
	// Version, Revision and Source become the OCI labels.
	Version, Revision, Source string
	// Created is the time recorded in the config and on every file;
	// the revision's commit time keeps builds reproducible.
	Created time.Time
	// OS and Architecture of the binaries (linux, amd64).
	OS, Architecture string
}

// file is one entry of a layer.
type file struct {
	name     string
	mode     int64
	uid, gid int
	dir      bool
	link     string
	data     []byte
	// src is read when data is nil and the entry is a regular file.
	src string
}

// BaseFiles are the base layer's entries: enough of a root file system for
// a static Go binary to run as NonRoot and resolve names through DNS.
func baseFiles() []file {
	home := "/home/nonroot"
	return []file{
		{name: "/bin", mode: 0o755, dir: true},
		{name: "/etc", mode: 0o755, dir: true},
		{name: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\nnogroup:x:65534:\n")},
		{name: "/etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:" + home + ":/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")},
		{name: "/home", mode: 0o755, dir: true},
		{name: home, mode: 0o700, dir: true, uid: NonRoot, gid: NonRoot},
		{name: "/root", mode: 0o700, dir: true},
		{name: "/tmp", mode: 0o1777, dir: true},
		{name: "/usr", mode: 0o755, dir: true},
		{name: "/usr/local", mode: 0o755, dir: true},
		{name: "/usr/local/bin", mode: 0o755, dir: true},
		{name: "/var", mode: 0o755, dir: true},
		{name: "/var/run", mode: 0o755, link: "/run"},
		{name: "/run", mode: 0o755, dir: true},
	}
}

// layer writes files as an uncompressed tar with fixed times and owners,
// in the order given.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:    strings.TrimPrefix(f.name, "/"),
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.gid,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		data := f.data
		switch {
		case f.dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case f.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.link
		default:
			h.Typeflag = tar.TypeReg
			if data == nil {
				b, err := os.ReadFile(f.src)
				if err != nil {
					return nil, err
				}
				data = b
			}
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// parents lists the directories above p that the base layer lacks, top
// first, so that a binary's layer is a valid tree by itself.
func parents(p string, have map[string]bool) []file {
	var out []file
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		if !have[d] {
			out = append([]file{{name: d, mode: 0o755, dir: true}}, out...)
		}
	}
	return out
}

// Build assembles the image of spec.
func Build(spec Spec, o Options) (v1.Image, error) {
	if spec.Name == "" || spec.Binary == "" || !path.IsAbs(spec.Path) {
		return nil, fmt.Errorf("image %q: a name, a binary and an absolute path in the image are required (binary %q, path %q)", spec.Name, spec.Binary, spec.Path)
	}
	if _, err := os.Stat(spec.Binary); err != nil {
		return nil, fmt.Errorf("image %s: %w (run make build first)", spec.Name, err)
	}
	if err := checkStatic(spec.Binary); err != nil {
		return nil, fmt.Errorf("image %s: %w", spec.Name, err)
	}
	mtime := o.Created.UTC()
	base := baseFiles()
	have := map[string]bool{}
	for _, f := range base {
		have[f.name] = true
	}
	baseLayer, err := layer(base, mtime)
	if err != nil {
		return nil, err
	}
	binFiles := append(parents(spec.Path, have), file{name: spec.Path, mode: 0o755, src: spec.Binary})
	binLayer, err := layer(binFiles, mtime)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), baseLayer, binLayer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = o.OS, o.Architecture
	cf.Created = v1.Time{Time: mtime}
	cf.Config.Entrypoint = spec.Entrypoint
	if len(cf.Config.Entrypoint) == 0 {
		cf.Config.Entrypoint = []string{spec.Path}
	}
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/nonroot"}
	cf.Config.WorkingDir = "/"
	cf.Config.User = fmt.Sprintf("%d:%d", NonRoot, NonRoot)
	if spec.Root {
		cf.Config.User, cf.Config.Env[1] = "0:0", "HOME=/root"
	}
	cf.Config.Labels = map[string]string{
		LabelTitle:    spec.Name,
		LabelVersion:  o.Version,
		LabelRevision: o.Revision,
		LabelSource:   o.Source,
		LabelCreated:  mtime.Format(time.RFC3339),
		LabelLicenses: "Apache-2.0",
	}
	// History entries would record build times; there is one per layer,
	// fixed.
	cf.History = []v1.History{
		{Created: v1.Time{Time: mtime}, CreatedBy: "karmada-go images: base (passwd, group, nsswitch.conf, /tmp, nonroot home)", Comment: "base"},
		{Created: v1.Time{Time: mtime}, CreatedBy: "karmada-go images: " + spec.Path, Comment: spec.Name},
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return img, nil
}

// checkStatic refuses an ELF binary that needs a dynamic loader: the base
// holds no libc, so it could not start ("exec: no such file or directory").
// Files that are not ELF (the tests' stand-ins) are taken as they are.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked, and the image has no C library: build it with CGO_ENABLED=0 (make build does)", path)
		}
	}
	return nil
}

// Ref is an image's full reference: registry/repository:tag.
func Ref(registry, name, tag string) string {
	r := name + ":" + tag
	if registry != "" {
		r = strings.TrimSuffix(registry, "/") + "/" + r
	}
	return r
}
