package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
)

// The environment of kiln artifact exec: where the bucket is (the keys
// come from a Kubernetes Secret through envFrom, never the pod's spec),
// what to fetch before the command and what to store after it.
const (
	envS3Endpoint = "KILN_S3_ENDPOINT"
	envS3Bucket   = "KILN_S3_BUCKET"
	envS3Prefix   = "KILN_S3_PREFIX"
	envS3Region   = "KILN_S3_REGION"
	envS3Insecure = "KILN_S3_INSECURE"
	envS3Access   = "KILN_S3_ACCESS_KEY"
	envS3Secret   = "KILN_S3_SECRET_KEY"
	// envArtifactInputs is a JSON list of artifactInput.
	envArtifactInputs = "KILN_ARTIFACT_INPUTS"
	// envArtifactOutputs is a JSON list of apiv1.CachedArtifact with
	// Name and Path (relative to KILN_OUTPUTS) set.
	envArtifactOutputs = "KILN_ARTIFACT_OUTPUTS"
)

// artifactsRecord heads the stored outputs' list in a termination
// message (the kubernetes backend reads it back).
const artifactsRecord = "!artifacts"

// artifactInput is an artifact to place at Dst before the command starts.
type artifactInput struct {
	Dst      string               `json:"dst"`
	Artifact apiv1.CachedArtifact `json:"artifact"`
}

// newArtifactExecCmd is the wrapper a pod runs its task under (Argo's
// emissary does the same): it fetches the task's input artifacts from
// the bucket, runs the command, and when it succeeds stores the declared
// outputs and writes what it stored, as JSON, to --record.
func newArtifactExecCmd() *cobra.Command {
	var record, termination, install string
	cmd := &cobra.Command{
		Use:    "artifact-exec [--record FILE | --termination FILE] -- COMMAND [ARG...]",
		Short:  "Run a task between fetching its input artifacts and storing its outputs (the wrapper of kiln's pods)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if install != "" {
				return installSelf(install)
			}
			if err := between(1, -1, "kiln artifact-exec runs a command: kiln artifact-exec -- COMMAND [ARG...]")(cmd, args); err != nil {
				return err
			}
			repo, err := repositoryFromEnv()
			if err != nil {
				return err
			}
			if err := fetchInputs(cmd, repo); err != nil {
				return err
			}
			c := exec.CommandContext(cmd.Context(), args[0], args[1:]...)
			c.Env = withoutKeys(os.Environ())
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := c.Run(); err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return &exitError{code: ee.ExitCode()}
				}
				return &apiv1.Error{Code: apiv1.CodeStart, Message: fmt.Sprintf("starting %s: %v", args[0], err)}
			}
			return storeOutputs(cmd, repo, record, termination)
		},
	}
	cmd.Flags().StringVar(&record, "record", "", "write the stored outputs' list (JSON) to this file (default standard error)")
	cmd.Flags().StringVar(&termination, "termination", "", `append the stored outputs' list to this container termination message as a record "!artifacts <bytes>" and the JSON`)
	cmd.Flags().StringVar(&install, "install", "", "copy this kiln binary to this path and exit (a pod's init container)")
	return cmd
}

// withoutKeys is env less the bucket's keys: the task itself never sees them.
func withoutKeys(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != envS3Access && k != envS3Secret {
			out = append(out, kv)
		}
	}
	return out
}

// installSelf copies the running kiln binary to dst, executable, so a
// task container without kiln can run it from a shared volume.
func installSelf(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// repositoryFromEnv is the bucket the KILN_S3_* variables name.
func repositoryFromEnv() (artifact.Repository, error) {
	insecure, _ := strconv.ParseBool(os.Getenv(envS3Insecure))
	r, err := artifact.NewS3(artifact.S3Config{
		Endpoint: os.Getenv(envS3Endpoint), Bucket: os.Getenv(envS3Bucket), Prefix: os.Getenv(envS3Prefix),
		Region: os.Getenv(envS3Region), Insecure: insecure,
		AccessKey: os.Getenv(envS3Access), SecretKey: os.Getenv(envS3Secret),
	})
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodeArtifactConfig, Field: envS3Endpoint, Message: err.Error()}
	}
	return r, nil
}

// fetchInputs places the artifacts KILN_ARTIFACT_INPUTS lists.
func fetchInputs(cmd *cobra.Command, repo artifact.Repository) error {
	var in []artifactInput
	if v := os.Getenv(envArtifactInputs); v != "" {
		if err := json.Unmarshal([]byte(v), &in); err != nil {
			return &apiv1.Error{Code: apiv1.CodeArtifactConfig, Field: envArtifactInputs, Message: err.Error()}
		}
	}
	for _, a := range in {
		if err := artifact.Download(cmd.Context(), repo, a.Artifact, a.Dst); err != nil {
			return &apiv1.Error{Code: apiv1.CodeArtifactTransfer, Message: fmt.Sprintf("fetching artifact %s (%s) to %s: %v", a.Artifact.Name, a.Artifact.Digest, a.Dst, err)}
		}
	}
	return nil
}

// storeOutputs stores the artifacts KILN_ARTIFACT_OUTPUTS lists, from
// under KILN_OUTPUTS, and records them.
func storeOutputs(cmd *cobra.Command, repo artifact.Repository, record, termination string) error {
	var out []apiv1.CachedArtifact
	if v := os.Getenv(envArtifactOutputs); v != "" {
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return &apiv1.Error{Code: apiv1.CodeArtifactConfig, Field: envArtifactOutputs, Message: err.Error()}
		}
	}
	dir := cmp.Or(os.Getenv("KILN_OUTPUTS"), ".")
	for i := range out {
		a := &out[i]
		if err := artifact.Upload(cmd.Context(), repo, a, filepath.Join(dir, filepath.FromSlash(a.Path))); err != nil {
			return &apiv1.Error{Code: apiv1.CodeArtifactTransfer, Message: fmt.Sprintf("storing output artifact %s (%s): %v", a.Name, a.Path, err)}
		}
	}
	b, _ := json.Marshal(out) // plain data always encodes
	if termination != "" {
		f, err := os.OpenFile(termination, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "%s %d\n%s", artifactsRecord, len(b), b)
		return errors.Join(err, f.Close())
	}
	if record == "" {
		_, err := fmt.Fprintln(cmd.ErrOrStderr(), string(b))
		return err
	}
	return os.WriteFile(record, b, 0o644)
}
