package wire

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

// parseExecOutput checks the plugin's stdout. Its error messages never
// quote stdout: it holds the credential.
func parseExecOutput(apiVersion string, stdout []byte) (*execResult, error) {
	var ec execCredential
	dec := json.NewDecoder(bytes.NewReader(stdout))
	if err := dec.Decode(&ec); err != nil {
		// The decoder's message may quote the input; say only where it broke.
		return nil, fmt.Errorf("stdout (%d bytes) is not an ExecCredential JSON object (decoding stopped at byte %d)", len(stdout), dec.InputOffset())
	}
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

// tokenInOutput pulls a token out of stdout, when it parses, so that a
// plugin that fails after printing its credential (or echoes it to stderr)
// cannot get it into an error message.
func tokenInOutput(stdout []byte) []string {
	var ec execCredential
	// The same decoder as parseExecOutput's: it accepts text after the
	// object, so a credential the parser would take is always found here.
	if json.NewDecoder(bytes.NewReader(stdout)).Decode(&ec) != nil || ec.Status == nil {
		return nil
	}
	return []string{ec.Status.Token, ec.Status.ClientKeyData}
}
