package kubeconfig

import (
	"errors"
	"fmt"
	"github.com/seed31a95821/informer/internal/boundedfile"
	"github.com/seed31a95821/informer/rest"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// DefaultServiceAccountDir is where the kubelet mounts a pod's
// service-account token, the cluster's CA bundle and the pod's namespace.
const DefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster reads the configuration a pod is given: the API server's
// address from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, and
// from the service-account directory the token ("token", re-read as the
// kubelet rotates it), the CA bundle ("ca.crt") and the namespace
// ("namespace"). The zero value reads the real environment and
// DefaultServiceAccountDir.
type InCluster struct {
	// Dir is the service-account directory (default DefaultServiceAccountDir).
	Dir string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// InClusterConfig returns the rest.Config of the pod this process runs in, or
// an error wrapping ErrNotInCluster.
func InClusterConfig() (rest.Config, error) {
	l, err := InCluster{}.Load()
	return l.Config, err
}

// Load builds the in-cluster rest.Config. Outside a pod (either variable unset)
// the error wraps ErrNotInCluster. A missing token file is an error; a
// missing CA bundle is not (kubectl then verifies against the system roots,
// and so do we); the namespace comes from $POD_NAMESPACE, else the
// namespace file, else "default", in client-go's order.
func (ic InCluster) Load() (Loaded, error) {
	getenv, dir := ic.Getenv, ic.Dir
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir == "" {
		dir = DefaultServiceAccountDir
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return Loaded{}, fmt.Errorf("kubeconfig: %w (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set)", ErrNotInCluster)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := checkTokenFile(tokenFile); err != nil {
		return Loaded{}, fmt.Errorf("kubeconfig: in-cluster service-account token: %w", err)
	}
	cfg := rest.Config{
		// JoinHostPort brackets an IPv6 service address.
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerTokenFile: tokenFile,
	}
	if ca := filepath.Join(dir, "ca.crt"); fileExists(ca) {
		cfg.CAFile = ca
	}
	if err := cfg.Validate(); err != nil {
		return Loaded{}, fmt.Errorf("kubeconfig: in-cluster config: %w", err)
	}
	ns, err := podNamespace(getenv, filepath.Join(dir, "namespace"))
	if err != nil {
		return Loaded{}, err
	}
	return Loaded{Config: cfg, Namespace: ns, InCluster: true}, nil
}

// podNamespace applies client-go's order: $POD_NAMESPACE, the namespace
// file, "default".
func podNamespace(getenv func(string) string, file string) (string, error) {
	if ns := getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	b, err := boundedfile.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "default", nil
	}
	if err != nil {
		return "", fmt.Errorf("kubeconfig: in-cluster namespace: %w", err)
	}
	if ns := strings.TrimSpace(string(b)); ns != "" {
		return ns, nil
	}
	return "default", nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkTokenFile reports whether the service account's token file can be
// read and holds a token, so that a pod without one fails here, by name,
// rather than on its first request.
func checkTokenFile(path string) error {
	b, err := boundedfile.ReadFile(path)
	if err != nil {
		return fmt.Errorf("kubeconfig: reading bearer token file: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return &rest.ConfigError{Field: "BearerTokenFile", Reason: path + " is empty"}
	}
	return nil
}
