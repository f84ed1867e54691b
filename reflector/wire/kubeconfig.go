package wire

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// A kubeconfig file names clusters (where), users (who) and contexts (a
// cluster plus a user); current-context picks one. We read the handful of
// fields needed to reach a cluster with a token or a client certificate and
// refuse, with an *UnsupportedError, the rest:
//
//   - exec credential plugins and auth-provider (cloud logins: they run
//     programs and cache credentials, a project of their own);
//   - username/password (basic auth, removed from Kubernetes in 1.19);
//   - impersonation (as, as-uid, as-groups, as-user-extra);
//   - proxy-url;
//   - merging several files (the colon-separated KUBECONFIG list): pass one
//     path. Neither is $KUBECONFIG or ~/.kube/config looked up for you.
//
// Fields we do not use at all (extensions, preferences, the context's
// namespace, disable-compression) are ignored. Relative file paths are
// resolved against the kubeconfig's own directory, as kubectl does.

// kubeconfig mirrors the parts of the file format we read. Unsupported
// fields are declared so that their presence can be detected.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData []byte `json:"certificate-authority-data"` // base64 in the file, decoded by encoding/json
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			TLSServerName            string `json:"tls-server-name"`
			ProxyURL                 string `json:"proxy-url"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string         `json:"name"`
		User kubeconfigUser `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
}

type kubeconfigUser struct {
	ClientCertificate     string `json:"client-certificate"`
	ClientCertificateData []byte `json:"client-certificate-data"`
	ClientKey             string `json:"client-key"`
	ClientKeyData         []byte `json:"client-key-data"`
	Token                 string `json:"token"`
	TokenFile             string `json:"tokenFile"`

	// Unsupported: their mere presence makes loading fail.
	Exec         json.RawMessage     `json:"exec"`
	AuthProvider json.RawMessage     `json:"auth-provider"`
	Username     string              `json:"username"`
	Password     string              `json:"password"`
	As           string              `json:"as"`
	AsUID        string              `json:"as-uid"`
	AsGroups     []string            `json:"as-groups"`
	AsUserExtra  map[string][]string `json:"as-user-extra"`
}

// LoadKubeconfig reads the kubeconfig file at path and returns the Config of
// its current context. See LoadKubeconfigContext.
func LoadKubeconfig(path string) (Config, error) {
	return LoadKubeconfigContext(path, "")
}

// LoadKubeconfigContext reads the kubeconfig file at path and returns the
// Config of the named context ("" = the file's current-context). The result
// is validated. Errors wrap ErrUnsupported for features this package does
// not implement (see the list at the top of kubeconfig.go) and
// ErrInvalidConfig for a contradictory file.
func LoadKubeconfigContext(path, context string) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("wire: reading kubeconfig: %w", err)
	}
	// YAML is converted to JSON by apimachinery, then decoded by encoding/json
	// into our small structs: the same route kubectl's loader takes.
	js, err := yaml.ToJSON(raw)
	if err != nil {
		return Config{}, fmt.Errorf("wire: parsing kubeconfig %s: %w", path, err)
	}
	var kc kubeconfig
	if err := json.Unmarshal(js, &kc); err != nil {
		return Config{}, fmt.Errorf("wire: parsing kubeconfig %s: %w", path, err)
	}
	cfg, err := kc.config(path, context)
	if err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("wire: kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// config resolves one context into a Config.
func (kc *kubeconfig) config(path, context string) (Config, error) {
	if context == "" {
		context = kc.CurrentContext
	}
	if context == "" {
		return Config{}, fmt.Errorf("wire: kubeconfig %s: no context given and no current-context: %w", path, ErrInvalidConfig)
	}
	ctxIdx := indexByName(len(kc.Contexts), func(i int) string { return kc.Contexts[i].Name }, context)
	if ctxIdx < 0 {
		return Config{}, fmt.Errorf("wire: kubeconfig %s: context %q not found: %w", path, context, ErrInvalidConfig)
	}
	ref := kc.Contexts[ctxIdx].Context
	clIdx := indexByName(len(kc.Clusters), func(i int) string { return kc.Clusters[i].Name }, ref.Cluster)
	if clIdx < 0 {
		return Config{}, fmt.Errorf("wire: kubeconfig %s: cluster %q of context %q not found: %w", path, ref.Cluster, context, ErrInvalidConfig)
	}
	cl := kc.Clusters[clIdx].Cluster
	if cl.ProxyURL != "" {
		return Config{}, &UnsupportedError{Path: path, Field: fmt.Sprintf("clusters[%q].cluster.proxy-url", ref.Cluster), Feature: "HTTP proxy"}
	}
	dir := filepath.Dir(path)
	cfg := Config{
		Host:          cl.Server,
		CAData:        cl.CertificateAuthorityData,
		Insecure:      cl.InsecureSkipTLSVerify,
		TLSServerName: cl.TLSServerName,
	}
	if len(cfg.CAData) == 0 { // inline data wins over a file, as in kubectl
		cfg.CAFile = resolvePath(dir, cl.CertificateAuthority)
	}
	if ref.User == "" {
		return cfg, nil // anonymous access
	}
	uIdx := indexByName(len(kc.Users), func(i int) string { return kc.Users[i].Name }, ref.User)
	if uIdx < 0 {
		return Config{}, fmt.Errorf("wire: kubeconfig %s: user %q of context %q not found: %w", path, ref.User, context, ErrInvalidConfig)
	}
	if err := kc.Users[uIdx].User.applyTo(&cfg, path, ref.User); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// applyTo copies the user's credentials into cfg, or reports the first
// unsupported authentication method it uses.
func (u *kubeconfigUser) applyTo(cfg *Config, path, name string) error {
	unsupported := []struct {
		present        bool
		field, feature string
	}{
		{len(u.Exec) > 0 && string(u.Exec) != "null", "exec", "exec credential plugin"},
		{len(u.AuthProvider) > 0 && string(u.AuthProvider) != "null", "auth-provider", "auth provider plugin"},
		{u.Username != "" || u.Password != "", "username/password", "basic authentication"},
		{u.As != "" || u.AsUID != "" || len(u.AsGroups) > 0 || len(u.AsUserExtra) > 0, "as", "impersonation"},
	}
	for _, un := range unsupported {
		if un.present {
			return &UnsupportedError{Path: path, Field: fmt.Sprintf("users[%q].user.%s", name, un.field), Feature: un.feature}
		}
	}
	dir := filepath.Dir(path)
	cfg.CertData, cfg.KeyData = u.ClientCertificateData, u.ClientKeyData
	if len(cfg.CertData) == 0 {
		cfg.CertFile = resolvePath(dir, u.ClientCertificate)
	}
	if len(cfg.KeyData) == 0 {
		cfg.KeyFile = resolvePath(dir, u.ClientKey)
	}
	// A token file is re-read as it rotates, so it wins over a static token
	// (client-go gives it precedence too).
	if u.TokenFile != "" {
		cfg.BearerTokenFile = resolvePath(dir, u.TokenFile)
	} else {
		cfg.BearerToken = u.Token
	}
	return nil
}

func indexByName(n int, name func(int) string, want string) int {
	for i := range n {
		if name(i) == want {
			return i
		}
	}
	return -1
}

// resolvePath makes a relative path relative to dir (the kubeconfig's
// directory) and leaves absolute and empty paths alone.
func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
