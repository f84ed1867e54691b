package wire

import (
	"errors"
	"fmt"
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

// InClusterConfig returns the Config of the pod this process runs in, or
// an error wrapping ErrNotInCluster.
func InClusterConfig() (Config, error) {
	l, err := InCluster{}.Load()
	return l.Config, err
}

// Load builds the in-cluster Config. Outside a pod (either variable unset)
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
		return Loaded{}, fmt.Errorf("wire: %w (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set)", ErrNotInCluster)
	}
	tokenFile := filepath.Join(dir, "token")
	if _, err := readTokenFile(tokenFile); err != nil {
		return Loaded{}, fmt.Errorf("wire: in-cluster service-account token: %w", err)
	}
	cfg := Config{
		// JoinHostPort brackets an IPv6 service address.
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerTokenFile: tokenFile,
	}
	if ca := filepath.Join(dir, "ca.crt"); fileExists(ca) {
		cfg.CAFile = ca
	}
	if err := cfg.Validate(); err != nil {
		return Loaded{}, fmt.Errorf("wire: in-cluster config: %w", err)
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
	b, err := readBoundedFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "default", nil
	}
	if err != nil {
		return "", fmt.Errorf("wire: in-cluster namespace: %w", err)
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
