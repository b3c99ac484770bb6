package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// sumsFile is the name of the checksum file, in the format sha256sum -c
// reads.
const sumsFile = "SHA256SUMS"

// dockerDir is the directory of dist with what the Dockerfile copies
// besides the binary: the CA certificates and the empty data directory.
const dockerDir = "docker"

// releaseArchive matches the archives' names.
var releaseArchive = regexp.MustCompile(`^linkbolt_.+\.(tar\.gz|zip)$`)

// isReleaseEntry reports whether name is one the release command writes
// into its output directory, so an earlier release may be replaced and
// anything else is left alone.
func isReleaseEntry(name string) bool {
	if name == sumsFile || name == dockerDir || releaseArchive.MatchString(name) {
		return true
	}
	return slices.ContainsFunc(allTargets, func(t target) bool { return t.dir() == name })
}

// prepareOut makes out an empty directory. One holding an earlier release
// (only names the command writes) is emptied; one holding anything else is
// refused rather than emptied, since --out might name the wrong place.
func prepareOut(out string) error {
	entries, err := os.ReadDir(out)
	if os.IsNotExist(err) {
		return os.MkdirAll(out, 0o755)
	} else if err != nil {
		return fmt.Errorf("--out %s: %w", out, err)
	}
	for _, e := range entries {
		if !isReleaseEntry(e.Name()) {
			return fmt.Errorf("--out %s holds %s, which is not part of a linkbolt release: choose a new or empty directory", out, e.Name())
		}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// An archiveFile is a file packed into a target's archive.
type archiveFile struct {
	name string      // the name in the archive, below its directory
	src  string      // the file it is read from
	mode fs.FileMode // 0o755 for the binary, 0o644 for the rest
}

// archiveFiles are the files of t's archive: the binary, the README, the
// manual's pages (docs/*.md, under docs/, so the README's links to them
// work offline; not the screenshots), the example configuration and, for
// Linux, the systemd unit.
func (r *release) archiveFiles(t target) ([]archiveFile, error) {
	files := []archiveFile{
		{t.exe(), filepath.Join(r.out, t.dir(), t.exe()), 0o755},
		{"README.md", filepath.Join(r.root, "README.md"), 0o644},
	}
	pages, err := manualPages(r.root)
	if err != nil {
		return nil, err
	}
	for _, name := range pages {
		files = append(files, archiveFile{path.Join(docsDir, name), filepath.Join(r.root, docsDir, name), 0o644})
	}
	files = append(files, archiveFile{"config.example.yaml", filepath.Join(r.root, "config.example.yaml"), 0o644})
	if t.os == "linux" {
		for _, name := range deployFiles {
			files = append(files, archiveFile{name, filepath.Join(r.root, "deploy", name), 0o644})
		}
	}
	return files, nil
}

// deployFiles are the files of deploy/ a Linux archive carries: the
// systemd unit of one instance, the template unit of several and nginx's
// configuration in front of them.
var deployFiles = []string{"linkbolt.service", "linkbolt@.service", "nginx-linkbolt.conf"}

// docsDir is the directory of the manual's pages, in the repository and in
// an archive.
const docsDir = "docs"

// manualPages are the names of the manual's pages in root's docs
// directory, sorted: its Markdown files, without the screenshots or the
// test of the pages beside them.
func manualPages(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, docsDir))
	if err != nil {
		return nil, fmt.Errorf("the manual: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the manual: no Markdown page in %s", filepath.Join(root, docsDir))
	}
	return names, nil
}

// pack writes t's archive to dst: its files in a directory named as the
// archive, every entry dated at the commit's time so the same commit packs
// the same bytes.
func (r *release) pack(t target, dst string) (err error) {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriter(f)
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(dst), ".zip"), ".tar.gz")
	files, err := r.archiveFiles(t)
	if err != nil {
		return err
	}
	if t.os == "windows" {
		err = r.writeZip(w, base, files)
	} else {
		err = r.writeTarGz(w, base, files)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

func (r *release) writeTarGz(w io.Writer, base string, files []archiveFile) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeDir, Name: base + "/", Mode: 0o755, ModTime: r.modTime, Format: tar.FormatPAX,
	}); err != nil {
		return err
	}
	dirs := map[string]bool{".": true} // the directories written: base's own
	for _, af := range files {
		if dir := path.Dir(af.name); !dirs[dir] {
			dirs[dir] = true
			if err := tw.WriteHeader(&tar.Header{
				Typeflag: tar.TypeDir, Name: path.Join(base, dir) + "/", Mode: 0o755, ModTime: r.modTime, Format: tar.FormatPAX,
			}); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(af.src)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: path.Join(base, af.name), Mode: int64(af.mode),
			Size: int64(len(data)), ModTime: r.modTime, Format: tar.FormatPAX,
		}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func (r *release) writeZip(w io.Writer, base string, files []archiveFile) error {
	zw := zip.NewWriter(w)
	for _, af := range files {
		data, err := os.ReadFile(af.src)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: path.Join(base, af.name), Method: zip.Deflate, Modified: r.modTime}
		h.SetMode(af.mode)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeSums writes SHA256SUMS over the named files of dir, sorted by name,
// one "<hex digest>  <name>" line each, as sha256sum writes them.
func writeSums(dir string, names []string) error {
	names = slices.Sorted(slices.Values(names))
	var b strings.Builder
	for _, name := range names {
		sum, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(dir, sumsFile), []byte(b.String()), 0o644)
}

func fileSHA256(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// dockerFiles writes what the Dockerfile copies besides the binary: the
// CA certificates a scratch image lacks (for webhooks, single sign-on and
// ACME over HTTPS) and an empty directory that becomes the image's /data,
// owned by linkbolt's user.
func (r *release) dockerFiles() error {
	dir := filepath.Join(r.out, dockerDir)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	certs, err := os.ReadFile(r.caBundle)
	if err != nil {
		return fmt.Errorf("--ca-bundle: %w", err)
	}
	if !strings.Contains(string(certs), "-----BEGIN CERTIFICATE-----") {
		return fmt.Errorf("--ca-bundle %s holds no PEM certificate", r.caBundle)
	}
	return os.WriteFile(filepath.Join(dir, "ca-certificates.crt"), certs, 0o644)
}
