package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact/artifacttest"
	"kiln.dev/kiln/internal/store/sqlite"
)

// The S3 repository takes its credentials from a kiln secret, and says
// with a code when the secret is missing, malformed or wrong, never
// showing the value.
func TestArtifactsFromASecret(t *testing.T) {
	t.Parallel()
	c := artifacttest.S3Config(t)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	good, ak, sk := c, c.AccessKey, c.SecretKey
	good.AccessKey, good.SecretKey = "", ""
	cfg := Artifacts{S3: &good, Secret: "s3", File: "/etc/kiln.yaml"}
	for name, tc := range map[string]struct {
		value    string // "" leaves the secret unset
		wantCode apiv1.Code
	}{
		"missing secret":   {wantCode: apiv1.CodeArtifactCredentials},
		"malformed secret": {value: "no-colon-here", wantCode: apiv1.CodeArtifactCredentials},
		"wrong keys":       {value: ak + ":wrong-secret-key-0123", wantCode: apiv1.CodeArtifactRepository},
		"right keys":       {value: ak + ":" + sk},
	} {
		t.Run(name, func(t *testing.T) {
			// not parallel: the cases share the secret
			if tc.value != "" {
				if err := st.SetSecret(t.Context(), ArtifactSecretProject, "s3", tc.value); err != nil {
					t.Fatal(err)
				}
			} else {
				_ = st.DeleteSecret(t.Context(), ArtifactSecretProject, "s3")
			}
			_, repo := openArtifacts(t.TempDir(), st, cfg)
			_, err := repo.Put(t.Context(), file)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("Put with the right keys: %v", err)
				}
				return
			}
			var ae *apiv1.Error
			if !errors.As(err, &ae) || ae.Code != tc.wantCode || ae.File != cfg.File || !strings.HasPrefix(ae.Field, "artifacts.s3") {
				t.Fatalf("Put = %v, want %s naming the file and field", err, tc.wantCode)
			}
			if tc.value != "" && strings.Contains(err.Error(), strings.SplitN(tc.value, ":", 2)[len(strings.SplitN(tc.value, ":", 2))-1]) {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}
