package images

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations an OCI layout's index gives its image, read by containerd's
// import (`ctr images import`) and by skopeo/podman.
const (
	annotationRefName        = "org.opencontainers.image.ref.name"
	annotationContainerdName = "io.containerd.image.name"
)

// WriteLayoutTar writes img, named ref (registry/repository:tag), as an OCI
// image layout in a tar file: oci-layout, index.json and the blobs, in a
// fixed order with fixed times, so the same image always gives the same
// file. It returns the manifest's digest.
func WriteLayoutTar(file string, img v1.Image, ref, tag string, mtime time.Time) (v1.Hash, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return v1.Hash{}, err
	}
	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType:   mt,
			Size:        int64(len(manifest)),
			Digest:      digest,
			Annotations: map[string]string{annotationRefName: tag, annotationContainerdName: ref},
		}},
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return v1.Hash{}, err
	}

	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return v1.Hash{}, err
	}
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	w := func(name string, size int64, body func(io.Writer) error) error {
		h := &tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: mtime.UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if size < 0 {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if body == nil {
			return nil
		}
		return body(tw)
	}
	bytesOf := func(b []byte) func(io.Writer) error {
		return func(out io.Writer) error { _, err := out.Write(b); return err }
	}
	layoutFile := []byte(`{"imageLayoutVersion":"1.0.0"}`)
	if err := w("oci-layout", int64(len(layoutFile)), bytesOf(layoutFile)); err != nil {
		return v1.Hash{}, err
	}
	if err := w("index.json", int64(len(indexJSON)), bytesOf(indexJSON)); err != nil {
		return v1.Hash{}, err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := w(d, -1, nil); err != nil {
			return v1.Hash{}, err
		}
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	if err := w(blob(digest), int64(len(manifest)), bytesOf(manifest)); err != nil {
		return v1.Hash{}, err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := w(blob(configDigest), int64(len(config)), bytesOf(config)); err != nil {
		return v1.Hash{}, err
	}
	layers, err := img.Layers()
	if err != nil {
		return v1.Hash{}, err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return v1.Hash{}, err
		}
		size, err := l.Size()
		if err != nil {
			return v1.Hash{}, err
		}
		if err := w(blob(d), size, func(out io.Writer) error {
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			defer rc.Close()
			n, err := io.Copy(out, rc)
			if err == nil && n != size {
				err = fmt.Errorf("layer %s: wrote %d bytes, its descriptor says %d", d, n, size)
			}
			return err
		}); err != nil {
			return v1.Hash{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return v1.Hash{}, err
	}
	if err := f.Close(); err != nil {
		return v1.Hash{}, err
	}
	return digest, os.Rename(tmp, file)
}
