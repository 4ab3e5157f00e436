package kube

import (
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// RESTConfig returns the client configuration cfg selects, and the
// namespace to use: the in-cluster configuration when kiln runs in a pod
// and no kubeconfig is named, else the kubeconfig (--kubeconfig, then
// $KUBECONFIG, then ~/.kube/config) at the chosen context.
func RESTConfig(cfg Config) (*rest.Config, string, error) {
	rc, ns, err := loadConfig(cfg)
	if err != nil {
		return nil, "", &apiv1.Error{
			Code: apiv1.CodeKubeConfig, File: cfg.Kubeconfig, Message: err.Error(),
			Hint: "pass --kubeconfig and --kube-context, or set KUBECONFIG",
		}
	}
	if cfg.Namespace != "" {
		ns = cfg.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	rc.QPS, rc.Burst = cfg.QPS, cfg.Burst
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 100, 200
	}
	rc.UserAgent = "kiln"
	// Protobuf, as the cluster's own components speak: cheaper for the API
	// server to encode than JSON for every pod event kiln watches.
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	return rc, ns, nil
}

func loadConfig(cfg Config) (*rest.Config, string, error) {
	if cfg.Kubeconfig == "" && os.Getenv("KUBECONFIG") == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", err
		}
		b, _ := os.ReadFile(serviceAccountNamespace)
		return rc, strings.TrimSpace(string(b)), nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = cfg.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cc.Namespace()
	return rc, ns, err
}
