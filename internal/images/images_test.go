package images

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func testOptions() Options {
	return Options{Version: "v1.2.3", Revision: "0123abc", Source: "https://example.com/src", Created: time.Unix(1700000000, 0), OS: "linux", Architecture: "amd64"}
}

func writeBinary(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "karmada-scheduler")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// untar extracts an OCI layout tarball into a directory.
func untar(t *testing.T, file string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// layerEntries maps a layer's entries to "mode uid:gid content".
func layerEntries(t *testing.T, rc io.ReadCloser) map[string]string {
	t.Helper()
	defer rc.Close()
	out := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = fmt.Sprintf("%s %d:%d %s", h.FileInfo().Mode(), h.Uid, h.Gid, b)
		if !h.ModTime.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s: mtime %v, want the build's fixed time", h.Name, h.ModTime)
		}
	}
}

func TestBuildIsReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := writeBinary(t, dir, "#!binary v1")
	spec := Spec{Name: "karmada-scheduler", Binary: bin, Path: "/bin/karmada-scheduler"}
	var digests, files []string
	for i := range 2 {
		img, err := Build(spec, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "out", strconv.Itoa(i), "karmada-scheduler.tar")
		d, err := WriteLayoutTar(file, img, "example.com/k/karmada-scheduler:v1.2.3", "v1.2.3", testOptions().Created)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		digests, files = append(digests, d.String()), append(files, string(b))
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same binary gave %s and %s", digests[0], digests[1])
	}
	if files[0] != files[1] {
		t.Errorf("two builds of the same binary gave different tarballs")
	}

	// Another binary gives another image; another time too.
	bin2 := writeBinary(t, t.TempDir(), "#!binary v2")
	img, err := Build(Spec{Name: "karmada-scheduler", Binary: bin2, Path: "/bin/karmada-scheduler"}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d.String() == digests[0] {
		t.Errorf("a changed binary kept the digest %s", d)
	}
	o := testOptions()
	o.Created = o.Created.Add(time.Second)
	img, err = Build(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d.String() == digests[0] {
		t.Errorf("a changed build time kept the digest %s", d)
	}
}

func TestLayoutTarIsAnOCILayout(t *testing.T) {
	dir := t.TempDir()
	bin := writeBinary(t, dir, "#!binary")
	img, err := Build(Spec{Name: "karmada-scheduler", Binary: bin, Path: "/bin/karmada-scheduler"}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "img.tar")
	digest, err := WriteLayoutTar(file, img, "example.com/k/karmada-scheduler:v1.2.3", "v1.2.3", testOptions().Created)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(untar(t, file))
	if err != nil {
		t.Fatalf("the tarball is not an OCI layout: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest {
		t.Fatalf("index %+v, want one manifest %s", im.Manifests, digest)
	}
	if diff := cmp.Diff(map[string]string{
		"org.opencontainers.image.ref.name": "v1.2.3",
		"io.containerd.image.name":          "example.com/k/karmada-scheduler:v1.2.3",
	}, im.Manifests[0].Annotations); diff != "" {
		t.Errorf("index annotations (-want,+got):\n%s", diff)
	}
	got, err := idx.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want the non-root 65532:65532", cf.Config.User)
	}
	if diff := cmp.Diff([]string{"/bin/karmada-scheduler"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{
		LabelTitle: "karmada-scheduler", LabelVersion: "v1.2.3", LabelRevision: "0123abc",
		LabelSource: "https://example.com/src", LabelCreated: "2023-11-14T22:13:20Z", LabelLicenses: "Apache-2.0",
	}, cf.Config.Labels); diff != "" {
		t.Errorf("labels (-want,+got):\n%s", diff)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("layers %d (%v), want 2: base and binary", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	base := layerEntries(t, rc)
	for name, want := range map[string]string{
		"etc/passwd":        "nonroot:x:65532:65532",
		"tmp/":              "dtrwxrwxrwx",
		"home/nonroot/":     "65532:65532",
		"etc/group":         "nonroot:x:65532:",
		"etc/nsswitch.conf": "hosts: files dns",
	} {
		if !strings.Contains(base[name], want) {
			t.Errorf("base layer %s = %q, want it to contain %q", name, base[name], want)
		}
	}
	rc, err = layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	bins := layerEntries(t, rc)
	if e := bins["bin/karmada-scheduler"]; !strings.HasPrefix(e, "-rwxr-xr-x") || !strings.HasSuffix(e, " 0:0 #!binary") {
		t.Errorf("binary layer entry %q, want an executable owned by root with the binary's bytes", e)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x", Binary: "/nonexistent/x", Path: "/bin/x"}, "run make build first"},
		{Spec{Name: "x", Binary: "/bin/sh", Path: "bin/x"}, "absolute path"},
		{Spec{Binary: "/bin/sh", Path: "/bin/x"}, "a name"},
	} {
		if _, err := Build(tc.spec, testOptions()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build(%+v) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

// A binary that needs the dynamic loader could not start in an image
// without libc: the build refuses it, naming the fix.
func TestBuildRefusesDynamicBinaries(t *testing.T) {
	dynamic := ""
	for _, p := range []string{"/bin/ls", "/usr/bin/ls", "/bin/sh"} {
		if f, err := elf.Open(p); err == nil {
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					dynamic = p
				}
			}
			f.Close()
		}
		if dynamic != "" {
			break
		}
	}
	if dynamic == "" {
		t.Fatal("no dynamically linked binary on this machine to test with")
	}
	_, err := Build(Spec{Name: "x", Binary: dynamic, Path: "/bin/x"}, testOptions())
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("Build(%s) = %v, want a refusal naming CGO_ENABLED=0", dynamic, err)
	}
	// The test binary itself is static or not depending on how it was
	// built; a static one passes.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if checkStatic(self) == nil {
		if _, err := Build(Spec{Name: "x", Binary: self, Path: "/bin/x"}, testOptions()); err != nil {
			t.Errorf("a static binary: %v", err)
		}
	}
}

func TestParentsOfAPathOutsideTheBase(t *testing.T) {
	have := map[string]bool{"/usr": true}
	got := parents("/usr/lib/k/bin", have)
	var names []string
	for _, f := range got {
		names = append(names, f.name)
	}
	if diff := cmp.Diff([]string{"/usr/lib", "/usr/lib/k"}, names); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

// BenchmarkBuild assembles and writes the image of a 40 MB binary (the
// size of karmada-controller-manager), compression included.
func BenchmarkBuild(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "bin")
	data := make([]byte, 40<<20)
	// Binary-like content: mostly compressible, some not.
	for i := range data {
		data[i] = byte(i * 7 % 251)
		if i%3 == 0 {
			data[i] = byte(i >> 5)
		}
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.Fatal(err)
	}
	o := testOptions()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		img, err := Build(Spec{Name: "x", Binary: bin, Path: "/bin/x"}, o)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := WriteLayoutTar(filepath.Join(dir, "x.tar"), img, "example.com/x:v1", "v1", o.Created); err != nil {
			b.Fatal(err)
		}
	}
}
