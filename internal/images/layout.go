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
	manifest, digest, indexJSON, err := layoutIndex(img, ref, tag)
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
	lw := &layoutWriter{tw: tar.NewWriter(f), mtime: mtime.UTC()}
	if err := lw.file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return v1.Hash{}, err
	}
	if err := lw.file("index.json", indexJSON); err != nil {
		return v1.Hash{}, err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := lw.entry(d, -1, nil); err != nil {
			return v1.Hash{}, err
		}
	}
	if err := lw.file(blobPath(digest), manifest); err != nil {
		return v1.Hash{}, err
	}
	if err := lw.imageBlobs(img); err != nil {
		return v1.Hash{}, err
	}
	if err := lw.tw.Close(); err != nil {
		return v1.Hash{}, err
	}
	if err := f.Close(); err != nil {
		return v1.Hash{}, err
	}
	return digest, os.Rename(tmp, file)
}

// layoutIndex is the image's manifest and digest, and the layout's
// index.json naming it by tag (org.opencontainers.image.ref.name) and by
// reference (io.containerd.image.name).
func layoutIndex(img v1.Image, ref, tag string) (manifest []byte, digest v1.Hash, indexJSON []byte, err error) {
	if manifest, err = img.RawManifest(); err != nil {
		return nil, v1.Hash{}, nil, err
	}
	if digest, err = img.Digest(); err != nil {
		return nil, v1.Hash{}, nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, v1.Hash{}, nil, err
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
	indexJSON, err = json.Marshal(index)
	return manifest, digest, indexJSON, err
}

// layoutWriter writes the entries of an OCI layout tarball, all with one
// modification time.
type layoutWriter struct {
	tw    *tar.Writer
	mtime time.Time
}

// entry writes a file of size bytes from body, or a directory when size
// is negative.
func (lw *layoutWriter) entry(name string, size int64, body func(io.Writer) error) error {
	h := &tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: lw.mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if size < 0 {
		h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
	}
	if err := lw.tw.WriteHeader(h); err != nil {
		return err
	}
	if body == nil {
		return nil
	}
	return body(lw.tw)
}

func (lw *layoutWriter) file(name string, b []byte) error {
	return lw.entry(name, int64(len(b)), func(out io.Writer) error { _, err := out.Write(b); return err })
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// imageBlobs writes the image's config and its compressed layers as
// blobs.
func (lw *layoutWriter) imageBlobs(img v1.Image) error {
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configDigest, err := img.ConfigName()
	if err != nil {
		return err
	}
	if err := lw.file(blobPath(configDigest), config); err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		size, err := l.Size()
		if err != nil {
			return err
		}
		if err := lw.entry(blobPath(d), size, func(out io.Writer) error {
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
			return err
		}
	}
	return nil
}
