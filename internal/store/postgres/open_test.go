package postgres_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
	"kiln.dev/kiln/internal/store/postgres"
	"kiln.dev/kiln/internal/store/storetest"
)

func TestOpenErrorsAreCodedAndKeepThePasswordOut(t *testing.T) {
	t.Parallel()
	srv := pgtest.Shared(t)
	dsn := srv.NewDatabase(t)
	key := postgres.Options{SecretKeyFile: filepath.Join(t.TempDir(), "secret.key")}
	for _, tc := range []struct {
		name, dsn string
		opt       postgres.Options
		want      apiv1.Code
		says      string
	}{
		{"an address that does not parse", "postgres://kiln:hunter2@[::1/x", key, apiv1.CodePGAddress, "does not parse"},
		{"a server that does not answer", "postgres://kiln:hunter2@127.0.0.1:1/kiln?connect_timeout=5", key, apiv1.CodePGUnreachable, "127.0.0.1:1/kiln"},
		{"a wrong password", strings.Replace(dsn, srv.Password(), "hunter2", 1), key, apiv1.CodePGAuth, "refused the login"},
		{"a database that does not exist", strings.Replace(dsn, "/kiln_", "/nodb_", 1), key, apiv1.CodePGDatabase, "/nodb_"},
		{"no secret key file", dsn, postgres.Options{}, apiv1.CodePGSecretKey, "KILN_SECRET_KEY_FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.Open(t.Context(), tc.dsn, tc.opt)
			var e *apiv1.Error
			if !errors.As(err, &e) || e.Code != tc.want || !strings.Contains(e.Error(), tc.says) {
				t.Fatalf("Open = %v, want %s saying %q", err, tc.want, tc.says)
			}
			t.Log(e)
			for _, secret := range []string{"hunter2", srv.Password()} {
				if strings.Contains(e.Error(), secret) {
					t.Errorf("the error shows the password: %v", e)
				}
			}
		})
	}
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Shared(t).NewDatabase(t)
	opt := postgres.Options{SecretKeyFile: filepath.Join(t.TempDir(), "secret.key")}
	s, err := postgres.Open(t.Context(), dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(t.Context(), storetest.NewRun("r1", "")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSecret(t.Context(), "p", "s", "v"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = postgres.Open(t.Context(), dsn, opt); err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s.Close()
	if _, err := s.GetRun(t.Context(), "r1"); err != nil {
		t.Errorf("GetRun after reopen: %v", err)
	}
	if v, err := s.Secret(t.Context(), "p", "s"); err != nil || v != "v" {
		t.Errorf("Secret after reopen = %q, %v, want v", v, err)
	}
}

func TestTextPostgreSQLRefusesIsStoredReplaced(t *testing.T) {
	t.Parallel()
	s := open(t)
	p := storetest.NewRun("r1", "me")
	p.Run.Name = "bad\x00name\xff"
	if err := s.CreateRun(t.Context(), p); err != nil {
		t.Fatalf("CreateRun with a NUL and a broken character: %v", err)
	}
	r, err := s.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "bad\uFFFDname\uFFFD"; r.Name != want {
		t.Errorf("name = %q, want %q", r.Name, want)
	}
}

func TestAServerGoneIsACodedError(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t) // its own server, to stop
	s, err := postgres.Open(t.Context(), srv.NewDatabase(t), postgres.Options{SecretKeyFile: filepath.Join(t.TempDir(), "secret.key")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateRun(t.Context(), storetest.NewRun("r1", "")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	_, err = s.GetRun(t.Context(), "r1")
	if got := apiv1.CodeOf(err); got != apiv1.CodePGUnreachable {
		t.Fatalf("GetRun with the server gone = %v, want %s", err, apiv1.CodePGUnreachable)
	}
	if err := s.CreateRun(t.Context(), storetest.NewRun("r2", "")); apiv1.CodeOf(err) != apiv1.CodePGUnreachable {
		t.Errorf("CreateRun with the server gone = %v, want %s", err, apiv1.CodePGUnreachable)
	}
}
