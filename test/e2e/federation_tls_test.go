package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// selfSigned writes a certificate for 127.0.0.1-3 and its key, made now,
// readable by the tasks' accounts, and returns their paths and its pin.
func selfSigned(t *testing.T) (cert, key, pin string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kiln test party"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2"), net.ParseIP("127.0.0.3")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	return cert, key, "sha256:" + hex.EncodeToString(sum[:])
}

// Three parties on https, with a certificate made now that no system
// trusts: each registers the others by the certificate's pin, and the
// secure sum runs over TLS, its shares reaching their own server's
// channel through it too. A party registered without the pin, or with
// another, is not reached.
func TestFederatedRunOverTLSWithPinnedCertificates(t *testing.T) {
	t.Parallel()
	cert, key, pin := selfSigned(t)
	tls := []string{"--tls-cert", cert, "--tls-key", key}
	alice, bob, carol := startFedWith(t, "alice", "127.0.0.1", tls...), startFedWith(t, "bob", "127.0.0.2", tls...), startFedWith(t, "carol", "127.0.0.3", tls...)
	servers := []*fedServer{alice, bob, carol}
	for _, s := range servers {
		if !strings.HasPrefix(s.url, "https://") {
			t.Fatalf("%s serves %s; want https", s.name, s.url)
		}
		s.env = append(s.env, "SSL_CERT_FILE="+cert) // the CLI trusts it; the servers pin it
	}
	if r := alice.kiln(t, "party", "add", "bob", "--url", bob.url); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePartyUnreachable)) || !strings.Contains(r.stderr, "certificate") {
		t.Errorf("registering bob's https server without its pin = exit %d, %s; want %s about its certificate", r.code, r.stderr, apiv1.CodePartyUnreachable)
	}
	other := "sha256:" + strings.Repeat("0", 64)
	if r := alice.kiln(t, "party", "add", "bob", "--url", bob.url, "--pin", other); r.code == 0 || !strings.Contains(r.stderr, "pinned") {
		t.Errorf("registering bob with another pin = exit %d, %s; want a refusal naming the pin", r.code, r.stderr)
	}
	for i, a := range servers {
		for _, b := range servers[i+1:] {
			toB := mustIssue(t, a.kiln(t, append([]string{"party", "add", b.name, "--url", b.url, "--pin", pin}, openPolicy...)...), a.name+"'s party add "+b.name)
			toA := mustIssue(t, b.kiln(t, append([]string{"party", "add", a.name, "--url", a.url, "--pin", pin, "--credential", toB}, openPolicy...)...), b.name+"'s party add "+a.name)
			if r := a.kiln(t, "party", "add", b.name, "--credential", toA); r.code != 0 {
				t.Fatalf("%s's party add %s --credential: %s", a.name, b.name, r.stderr)
			}
		}
	}
	alice.setPrivateValue(t, "20")
	bob.setPrivateValue(t, "22")
	p := secureSumParams(t)
	r := alice.kiln(t, "run", "../../examples/federated/secure-sum.yaml", "-p", "script="+p["script"], "-p", "sdk="+p["sdk"])
	if r.code != 0 || !strings.Contains(r.stdout, "Succeeded") {
		t.Fatalf("the secure sum over TLS: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if list := carol.kiln(t, "get", "runs"); !strings.Contains(list.stdout, "Succeeded") {
		t.Errorf("carol's part did not succeed:\n%s", list.stdout)
	}
}
