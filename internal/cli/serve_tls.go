package cli

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// tlsFlags make kiln serve answer HTTPS.
type tlsFlags struct {
	cert, key string
}

func (f *tlsFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key); parties then reach this server at an https:// URL")
	cmd.Flags().StringVar(&f.key, "tls-key", "", "the private key of --tls-cert (PEM)")
}

// config loads the certificate, or returns nil when HTTPS is not asked
// for. pin is the certificate's pin, as kiln party add --pin takes it.
func (f *tlsFlags) config() (cfg *tls.Config, pin string, err error) {
	switch {
	case f.cert == "" && f.key == "":
		return nil, "", nil
	case f.cert == "" || f.key == "":
		return nil, "", usagef("--tls-cert and --tls-key go together: give both, or neither")
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, "", &apiv1.Error{Code: apiv1.CodeRead, File: f.cert, Field: "--tls-cert", Message: "loading the certificate and its key: " + err.Error()}
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, CertPin(pair.Certificate[0]), nil
}

// CertPin is the pin of a certificate (its DER bytes): sha256:<hex>, what
// openssl x509 -outform DER | sha256sum prints.
func CertPin(der []byte) string {
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// scheme is the URL scheme of a server with cfg.
func scheme(cfg *tls.Config) string {
	if cfg != nil {
		return "https"
	}
	return "http"
}

// sayPin tells who starts kiln serve the pin of its certificate, for
// the parties that register it.
func (e *env) sayPin(pin string) {
	if pin != "" {
		fmt.Fprintf(e.stdout, "its certificate's pin, for kiln party add --pin at other parties: %s\n", pin)
	}
}

// absPath is path made absolute, "" for "": tasks read it from other
// working directories.
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
