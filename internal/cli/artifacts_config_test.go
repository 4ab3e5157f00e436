package cli

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestArtifactsConfig(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		yaml      string
		wantField string // "" for no error
		wantS3    string // the S3Config's String when set
	}{
		"none":                   {yaml: `{}`},
		"host and port":          {yaml: `{s3: {endpoint: "127.0.0.1:9000", bucket: b, insecure: true, secret: creds}}`, wantS3: "s3 http://127.0.0.1:9000/b/"},
		"https URL with prefix":  {yaml: `{s3: {endpoint: "https://s3.example.com", bucket: b, prefix: team/}}`, wantS3: "s3 https://s3.example.com/b/team/"},
		"no endpoint":            {yaml: `{s3: {bucket: b}}`, wantField: "artifacts.s3.endpoint"},
		"no bucket":              {yaml: `{s3: {endpoint: "h:1"}}`, wantField: "artifacts.s3.bucket"},
		"a URL with a path":      {yaml: `{s3: {endpoint: "https://h/x", bucket: b}}`, wantField: "artifacts.s3.endpoint"},
		"a scheme other than s3": {yaml: `{s3: {endpoint: "ftp://h", bucket: b}}`, wantField: "artifacts.s3.endpoint"},
		"https and insecure":     {yaml: `{s3: {endpoint: "https://h", bucket: b, insecure: true}}`, wantField: "artifacts.s3.insecure"},
		"absolute prefix":        {yaml: `{s3: {endpoint: "h:1", bucket: b, prefix: /x}}`, wantField: "artifacts.s3.prefix"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var a artifactsFile
			if err := yaml.UnmarshalStrict([]byte(tc.yaml), &a); err != nil {
				t.Fatal(err)
			}
			got, err := a.compile("/etc/kiln/config.yaml")
			if tc.wantField != "" {
				var ae *apiv1.Error
				if !errors.As(err, &ae) || ae.Code != apiv1.CodeArtifactConfig || ae.Field != tc.wantField || ae.File != "/etc/kiln/config.yaml" {
					t.Fatalf("compile = %v, want %s naming the file and %s", err, apiv1.CodeArtifactConfig, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.S3 == nil) != (tc.wantS3 == "") || (got.S3 != nil && !strings.HasPrefix(got.S3.String(), tc.wantS3)) {
				t.Fatalf("compile = %+v, want S3 %q", got.S3, tc.wantS3)
			}
		})
	}
}
