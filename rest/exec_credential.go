package rest

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The ExecCredential API (client.authentication.k8s.io) is the contract
// between a client and a credential plugin: the client passes an
// ExecCredential with only spec set in $KUBERNETES_EXEC_INFO, the plugin
// prints one with status set on stdout. v1 and v1beta1 have the same shape
// for every field read here; v1 only made interactiveMode required.

// ExecCredential API versions understood.
const (
	ExecAPIVersionV1      = "client.authentication.k8s.io/v1"
	ExecAPIVersionV1Beta1 = "client.authentication.k8s.io/v1beta1"
)

// execCredential is one ExecCredential object, either direction.
type execCredential struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Spec       execCredentialSpec   `json:"spec"`
	Status     *execCredentialState `json:"status,omitempty"`
}

type execCredentialSpec struct {
	Cluster     *execCluster `json:"cluster,omitempty"`
	Interactive bool         `json:"interactive"`
}

// execCluster is what provideClusterInfo hands the plugin: enough to know
// which cluster it is logging in to.
type execCluster struct {
	Server                   string          `json:"server"`
	TLSServerName            string          `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool            `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte          `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string          `json:"proxy-url,omitempty"`
	DisableCompression       bool            `json:"disable-compression,omitempty"`
	Config                   json.RawMessage `json:"config,omitempty"`
}

type execCredentialState struct {
	ExpirationTimestamp   *metav1.Time `json:"expirationTimestamp,omitempty"`
	Token                 string       `json:"token,omitempty"`
	ClientCertificateData string       `json:"clientCertificateData,omitempty"`
	ClientKeyData         string       `json:"clientKeyData,omitempty"`
}

// execResult is a parsed, checked plugin answer: what requests use.
type execResult struct {
	token  string
	cert   *tls.Certificate // nil when the plugin returned only a token
	expiry time.Time        // zero: valid until the server answers 401
	// secrets are the strings never to show in an error (token, key).
	secrets []string
}

// execInfo is the $KUBERNETES_EXEC_INFO value for one run.
func execInfo(apiVersion string, cluster *execCluster) ([]byte, error) {
	return json.Marshal(execCredential{
		APIVersion: apiVersion,
		Kind:       "ExecCredential",
		// No stdin is ever given to the plugin, so it must not prompt.
		Spec: execCredentialSpec{Cluster: cluster, Interactive: false},
	})
}

// execOutput is the plugin's stdout, decoded once: for the secrets to keep
// out of any error message (secrets), then for the credential (parse).
type execOutput struct {
	ec  execCredential
	err error // why stdout is not an ExecCredential JSON object, if it is not
}

// decodeExecOutput decodes stdout. Its error never quotes stdout: it holds
// the credential. The decoder accepts text after the object.
func decodeExecOutput(stdout []byte) execOutput {
	var out execOutput
	dec := json.NewDecoder(bytes.NewReader(stdout))
	if err := dec.Decode(&out.ec); err != nil {
		// The decoder's message may quote the input; say only where it broke.
		out.err = fmt.Errorf("stdout (%d bytes) is not an ExecCredential JSON object (decoding stopped at byte %d)", len(stdout), dec.InputOffset())
	}
	return out
}

// secrets are the token and key stdout holds, when it decodes, so that a
// plugin that fails after printing its credential (or echoes it to stderr)
// cannot get it into an error message.
func (out execOutput) secrets() []string {
	if out.err != nil || out.ec.Status == nil {
		return nil
	}
	return []string{out.ec.Status.Token, out.ec.Status.ClientKeyData}
}

// parse checks the decoded ExecCredential and takes the credential from it.
// Its error messages never quote stdout.
func (out execOutput) parse(apiVersion string) (*execResult, error) {
	if out.err != nil {
		return nil, out.err
	}
	ec := out.ec
	if ec.APIVersion != apiVersion {
		return nil, fmt.Errorf("plugin is configured for %s but returned apiVersion %q", apiVersion, ec.APIVersion)
	}
	if ec.Kind != "ExecCredential" {
		return nil, fmt.Errorf("plugin returned kind %q, want ExecCredential", ec.Kind)
	}
	st := ec.Status
	if st == nil {
		return nil, fmt.Errorf("plugin returned an ExecCredential without status")
	}
	res := &execResult{token: st.Token, secrets: []string{st.Token, st.ClientKeyData}}
	if st.ExpirationTimestamp != nil {
		res.expiry = st.ExpirationTimestamp.Time
	}
	hasCert, hasKey := st.ClientCertificateData != "", st.ClientKeyData != ""
	switch {
	case hasCert != hasKey:
		return nil, fmt.Errorf("plugin returned clientCertificateData and clientKeyData, not both")
	case hasCert:
		pair, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return nil, fmt.Errorf("plugin returned an unusable client certificate: %w", err)
		}
		res.cert = &pair
	case res.token == "":
		return nil, fmt.Errorf("plugin returned neither a token nor a client certificate")
	}
	return res, nil
}
