package testserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a throw-away CA with a server certificate for 127.0.0.1 and a
// client certificate (CN "alice"), made fresh for each test.
type PKI struct {
	CAPEM                 []byte          // the CA certificate, PEM
	CAPool                *x509.CertPool  // the CA, as a pool
	ServerCert            tls.Certificate // for 127.0.0.1
	ClientCert, ClientKey []byte          // PEM, for client authentication
}

// NewPKI makes a CA, and the server and client certificates it signs,
// valid from an hour ago for two hours.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err)
	ca, err := x509.ParseCertificate(caDER)
	must(t, err)

	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		must(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		must(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	p := &PKI{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), CAPool: x509.NewCertPool()}
	p.CAPool.AddCert(ca)
	srvCert, srvKey := issue(2, "apiserver", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.ServerCert, err = tls.X509KeyPair(srvCert, srvKey)
	must(t, err)
	p.ClientCert, p.ClientKey = issue(3, "alice", x509.ExtKeyUsageClientAuth, nil)
	return p
}

// WriteFiles writes the PKI to dir as ca.crt, client.crt and client.key,
// for the tests of Configs and kubeconfigs that name files.
func (p *PKI) WriteFiles(t testing.TB, dir string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	for name, data := range map[string][]byte{"ca.crt": p.CAPEM, "client.crt": p.ClientCert, "client.key": p.ClientKey} {
		must(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
}

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
