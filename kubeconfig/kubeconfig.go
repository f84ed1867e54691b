package kubeconfig

import (
	"encoding/json"
	"fmt"
	"github.com/seed31a95821/informer/internal/boundedfile"
	"github.com/seed31a95821/informer/rest"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// A kubeconfig file names clusters (where), users (who) and contexts (a
// cluster, a user and a default namespace); current-context picks one. This
// file holds the file format and turns one context into a rest.Config;
// kubeconfig_merge.go merges several files and loading_rules.go decides
// which files to read, as kubectl does.
//
// Supported: server, certificate-authority(-data), insecure-skip-tls-verify,
// tls-server-name, proxy-url, disable-compression; client certificates
// (file or data), token, tokenFile, exec credential plugins; the context's
// namespace. Refused with an *UnsupportedError naming the field:
//
//   - auth-provider (the removed in-tree cloud logins; their replacements
//     are exec plugins, which work);
//   - username/password (basic auth, removed from Kubernetes in 1.19);
//   - impersonation (as, as-uid, as-groups, as-user-extra);
//   - an exec plugin with interactiveMode Always (there is no terminal to
//     give it).
//
// Fields we do not use at all (extensions other than the exec plugin's,
// preferences) are ignored. Relative file paths are resolved against the
// directory of the file that holds them, as kubectl does.

// kubeconfigFile mirrors the file format (apiVersion v1, kind rest.Config). The
// same structs read YAML and JSON: sigs.k8s.io/yaml turns YAML into JSON
// and encoding/json does the rest, the route kubectl's loader takes too.
type kubeconfigFile struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string      `json:"name"`
		Cluster kubeCluster `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string   `json:"name"`
		User kubeUser `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string      `json:"name"`
		Context kubeContext `json:"context"`
	} `json:"contexts"`
}

type kubeCluster struct {
	Server                   string `json:"server"`
	CertificateAuthority     string `json:"certificate-authority"`
	CertificateAuthorityData []byte `json:"certificate-authority-data"` // base64 in the file, decoded by encoding/json
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
	TLSServerName            string `json:"tls-server-name"`
	ProxyURL                 string `json:"proxy-url"`
	DisableCompression       bool   `json:"disable-compression"`
	Extensions               []struct {
		Name      string          `json:"name"`
		Extension json.RawMessage `json:"extension"`
	} `json:"extensions"`
}

type kubeUser struct {
	ClientCertificate     string    `json:"client-certificate"`
	ClientCertificateData []byte    `json:"client-certificate-data"`
	ClientKey             string    `json:"client-key"`
	ClientKeyData         []byte    `json:"client-key-data"`
	Token                 string    `json:"token"`
	TokenFile             string    `json:"tokenFile"`
	Exec                  *kubeExec `json:"exec"`

	// Unsupported: their mere presence makes loading fail.
	AuthProvider json.RawMessage     `json:"auth-provider"`
	Username     string              `json:"username"`
	Password     string              `json:"password"`
	As           string              `json:"as"`
	AsUID        string              `json:"as-uid"`
	AsGroups     []string            `json:"as-groups"`
	AsUserExtra  map[string][]string `json:"as-user-extra"`
}

// kubeExec is users[].user.exec, the same in both ExecCredential versions.
type kubeExec struct {
	APIVersion         string            `json:"apiVersion"`
	Command            string            `json:"command"`
	Args               []string          `json:"args"`
	Env                []rest.ExecEnvVar `json:"env"`
	InstallHint        string            `json:"installHint"`
	ProvideClusterInfo bool              `json:"provideClusterInfo"`
	InteractiveMode    string            `json:"interactiveMode"`
}

type kubeContext struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace"`
}

// execExtensionName is the cluster extension whose content an exec plugin
// receives as spec.cluster.config.
const execExtensionName = "client.authentication.k8s.io/exec"

// readKubeconfigFile reads and parses one file, YAML or JSON.
func readKubeconfigFile(path string) (*kubeconfigFile, error) {
	raw, err := boundedfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: reading kubeconfig: %w", err)
	}
	var kc kubeconfigFile
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return nil, fmt.Errorf("kubeconfig: parsing kubeconfig %s: %w", path, err)
	}
	kc.resolvePaths(filepath.Dir(path))
	return &kc, nil
}

// resolvePaths makes every relative file path relative to dir, the
// kubeconfig's own directory, before files are merged: after merging, an
// entry no longer knows where it came from.
func (kc *kubeconfigFile) resolvePaths(dir string) {
	for i := range kc.Clusters {
		c := &kc.Clusters[i].Cluster
		c.CertificateAuthority = resolvePath(dir, c.CertificateAuthority)
	}
	for i := range kc.Users {
		u := &kc.Users[i].User
		u.ClientCertificate = resolvePath(dir, u.ClientCertificate)
		u.ClientKey = resolvePath(dir, u.ClientKey)
		u.TokenFile = resolvePath(dir, u.TokenFile)
		// A bare command name is looked up in $PATH; one with a separator
		// ("./bin/login") is a path relative to the kubeconfig (kubectl's rule).
		if u.Exec != nil && strings.ContainsRune(u.Exec.Command, filepath.Separator) {
			u.Exec.Command = resolvePath(dir, u.Exec.Command)
		}
	}
}

// resolvePath makes a relative path relative to dir (the kubeconfig's
// directory) and leaves absolute and empty paths alone.
func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// clusterConfig fills the cluster half of a rest.Config.
func (c *kubeCluster) applyTo(cfg *rest.Config) {
	cfg.Host = c.Server
	cfg.CAData = c.CertificateAuthorityData
	if len(cfg.CAData) == 0 { // inline data wins over a file, as in kubectl
		cfg.CAFile = c.CertificateAuthority
	}
	cfg.Insecure = c.InsecureSkipTLSVerify
	cfg.TLSServerName = c.TLSServerName
	cfg.ProxyURL = c.ProxyURL
	cfg.DisableCompression = c.DisableCompression
}

// execExtension returns the cluster's exec extension, or nil.
func (c *kubeCluster) execExtension() json.RawMessage {
	for _, e := range c.Extensions {
		if e.Name == execExtensionName {
			return e.Extension
		}
	}
	return nil
}

// applyTo copies the user's credentials into cfg, or reports the first
// unsupported authentication method it uses. file and name locate the user
// for error messages.
func (u *kubeUser) applyTo(cfg *rest.Config, cl *kubeCluster, file, name string) error {
	if err := u.checkSupported(file, name); err != nil {
		return err
	}
	cfg.CertData, cfg.KeyData = u.ClientCertificateData, u.ClientKeyData
	if len(cfg.CertData) == 0 {
		cfg.CertFile = u.ClientCertificate
	}
	if len(cfg.KeyData) == 0 {
		cfg.KeyFile = u.ClientKey
	}
	// A token file is re-read as it rotates, so it wins over a static token
	// (client-go gives it precedence too).
	if u.TokenFile != "" {
		cfg.BearerTokenFile = u.TokenFile
	} else {
		cfg.BearerToken = u.Token
	}
	// kubectl runs the plugin only when the user has no token and no
	// certificate of its own: explicit credentials win.
	if u.Exec != nil && !hasCredentials(cfg) {
		e := u.Exec
		cfg.Exec = &rest.ExecConfig{
			APIVersion: e.APIVersion, Command: e.Command, Args: e.Args, Env: e.Env,
			InstallHint: e.InstallHint, ProvideClusterInfo: e.ProvideClusterInfo,
			InteractiveMode: e.InteractiveMode, ClusterConfig: cl.execExtension(),
		}
		if cfg.Exec.InteractiveMode == "" && e.APIVersion == rest.ExecAPIVersionV1Beta1 {
			cfg.Exec.InteractiveMode = rest.ExecInteractiveIfAvailable // v1beta1's default
		}
	}
	return nil
}

// checkSupported reports the first authentication method u uses that this
// package refuses, naming its field.
func (u *kubeUser) checkSupported(file, name string) error {
	unsupported := []struct {
		present        bool
		field, feature string
	}{
		{len(u.AuthProvider) > 0 && string(u.AuthProvider) != "null", "auth-provider", "auth provider plugin; use the provider's exec plugin"},
		{u.Username != "" || u.Password != "", "username/password", "basic authentication"},
		{u.As != "" || u.AsUID != "" || len(u.AsGroups) > 0 || len(u.AsUserExtra) > 0, "as", "impersonation"},
		{u.Exec != nil && u.Exec.APIVersion != rest.ExecAPIVersionV1 && u.Exec.APIVersion != rest.ExecAPIVersionV1Beta1,
			"exec.apiVersion", "exec API version other than " + rest.ExecAPIVersionV1 + " and " + rest.ExecAPIVersionV1Beta1},
		{u.Exec != nil && u.Exec.InteractiveMode == rest.ExecInteractiveAlways, "exec.interactiveMode", "an exec plugin that always needs a terminal"},
	}
	for _, un := range unsupported {
		if un.present {
			return &UnsupportedError{Path: file, Field: fmt.Sprintf("users[%q].user.%s", name, un.field), Feature: un.feature}
		}
	}
	if u.Exec != nil && u.Exec.APIVersion == rest.ExecAPIVersionV1 && u.Exec.InteractiveMode == "" {
		// client.authentication.k8s.io/v1 made the field required.
		return fmt.Errorf("kubeconfig: kubeconfig %s: users[%q].user.exec.interactiveMode is required for %s: %w",
			file, name, rest.ExecAPIVersionV1, rest.ErrInvalidConfig)
	}
	return nil
}

// hasCredentials reports whether cfg holds a token or a client certificate
// of its own.
func hasCredentials(cfg *rest.Config) bool {
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" ||
		cfg.CertFile != "" || len(cfg.CertData) > 0 || cfg.KeyFile != "" || len(cfg.KeyData) > 0
}
