package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/reo-kafka/reo/systems"
)

// buildBaseline returns reo-baseline's binary: what is an executable file
// is used as it is; anything else is a git revision of the repository at
// root, whose tree is exported (git archive, so the working tree and its
// uncommitted changes are untouched) and built into dir.
func buildBaseline(ctx context.Context, root, what, dir string) (string, error) {
	if st, err := os.Stat(what); err == nil && st.Mode().IsRegular() {
		if st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is a file but not executable", what)
		}
		return filepath.Abs(what)
	}
	rev := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "--quiet", what+"^{commit}")
	rev.Dir = root
	out, err := rev.Output()
	if err != nil {
		return "", fmt.Errorf("%q is neither a file nor a git revision of %s", what, root)
	}
	commit := strings.TrimSpace(string(out))
	src, err := os.MkdirTemp(dir, "baseline-src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	var stderr bytes.Buffer
	archive := exec.CommandContext(ctx, "sh", "-c", `git archive --format=tar "$1" | tar -x -C "$2"`, "sh", commit, src)
	archive.Dir, archive.Stderr = root, &stderr
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("export revision %s (%s): %w: %s", what, commit[:12], err, stderr.String())
	}
	bin, err := systems.Build(ctx, src, dir, "./cmd/reo", "reo-baseline")
	if err != nil {
		return "", fmt.Errorf("revision %s (%s): %w", what, commit[:12], err)
	}
	return bin, nil
}
