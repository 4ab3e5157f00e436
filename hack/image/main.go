// Command image writes kiln's container image as an OCI image layout,
// without a network and without a container engine: one layer over an
// empty base holding the static kiln binary, a passwd and group file with
// the non-root user kiln (65532), CA certificates, KILN_HOME and /tmp.
// The image runs kiln serve on 0.0.0.0:8420 as that user, as
// deploy/kubernetes and deploy/helm/kiln run it: every route but the
// health checks wants a token, and the first start writes the admin token
// to KILN_HOME/admin.token. make image runs it:
//
//	go run ./hack/image -kiln bin/kiln -version v1.2.3 -o bin/kiln-oci
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.kiln, "kiln", "bin/kiln", "the kiln binary to put in the image: a static Linux executable (make release builds one)")
	flag.StringVar(&o.out, "o", "bin/kiln-oci", "the directory of the OCI image layout to write (replaced)")
	flag.StringVar(&o.version, "version", "latest", "the image's tag (its ref name in the layout) and its org.opencontainers.image.version")
	flag.StringVar(&o.certs, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to put in the image, for HTTPS to parties, S3 and PostgreSQL (Debian's ca-certificates)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("image takes no arguments, only flags (got %q)", flag.Args()))
	}
	digest, err := write(o)
	if err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s:%s (%s)\n", o.out, o.version, digest)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}
