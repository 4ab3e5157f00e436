package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestPlainHTTPToKilnServeTLSIsCodedJSON sends plain HTTP to kiln serve
// --tls-cert: the answer is 400 with a coded JSON error (KLN-4072) that
// says to use https, and HTTPS on the same port still answers.
func TestPlainHTTPToKilnServeTLSIsCodedJSON(t *testing.T) {
	t.Parallel()
	cert, key, _ := selfSigned(t)
	base, token, _ := startServeAs(t, newHome(t), nil, nil, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("kiln serve --tls-cert serves %s, want https", base)
	}
	resp, err := http.Get(strings.Replace(base, "https://", "http://", 1) + "/api/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out apiv1.ErrorList
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != http.StatusBadRequest ||
		resp.Header.Get("Content-Type") != "application/json" || len(out.Errors) != 1 || out.Errors[0].Code != apiv1.CodeHTTPSOnly {
		t.Errorf("plain HTTP to the HTTPS port: %d %s %s, want 400 application/json with %s", resp.StatusCode, resp.Header.Get("Content-Type"), body, apiv1.CodeHTTPSOnly)
	}
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, _ := http.NewRequest("GET", base+"/api/v1/runs", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTTPS on the same port: %d %s, want 200", resp.StatusCode, body)
	}
}
