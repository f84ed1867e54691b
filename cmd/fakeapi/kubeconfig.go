package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// writeKubeconfig writes a kubeconfig for the server at url that kubectl
// and kubeconfig.LoadingRules use as is: the CA (when serving TLS) inline, the
// token (when one is required) inline, one context named "fakeapi". The
// file holds a credential, so it is private to the user, and it is written
// to a temporary name and renamed, so that a reader never sees half of it.
func writeKubeconfig(path, url string, caPEM []byte, token string) error {
	cluster := map[string]any{"server": url}
	if len(caPEM) > 0 {
		cluster["certificate-authority-data"] = caPEM // []byte: base64 in the file
	}
	user := map[string]any{}
	if token != "" {
		user["token"] = token
	}
	doc := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "fakeapi",
		"clusters":        []any{map[string]any{"name": "fakeapi", "cluster": cluster}},
		"users":           []any{map[string]any{"name": "fakeapi", "user": user}},
		"contexts": []any{map[string]any{"name": "fakeapi", "context": map[string]any{
			"cluster": "fakeapi", "user": "fakeapi", "namespace": "default",
		}}},
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubeconfig-*")
	if err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}
