package attack_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// Attacks on the transport: redirects, credentials, connections, TLS.

// tokenTrap is a second server that counts requests carrying a token.
func tokenTrap(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			got.Add(1)
		}
		writeJSON(w, http.StatusOK, podList("1", ""))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// Item 6: the server redirects lists and watches to another port, and,
// over TLS, to plain http. Go's client would follow, Authorization header
// and all.
func TestAttackRedirect(t *testing.T) {
	for _, overTLS := range []bool{false, true} {
		name := "http to another port"
		if overTLS {
			name = "https to http"
		}
		t.Run(name, func(t *testing.T) {
			trap, leaked := tokenTrap(t)
			redirect := func(a *attack, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, trap.URL+r.URL.RequestURI(), http.StatusFound)
			}
			a := newAttack(t, redirect)
			if overTLS {
				a = newTLSAttack(t, redirect)
			}
			a.start()
			a.observe(time.Second)
			require.Zero(t, leaked.Load(), "requests that carried the token to the redirect's target")
			e := a.waitErr(reflector.KindRejected, rest.ErrRedirect)
			var re *rest.RedirectError
			require.ErrorAs(t, e, &re)
			require.True(t, strings.HasPrefix(re.Location, trap.URL), re.Location)
			a.stop(bounds{requests: 24, heap: 16 << 20})
		})
	}
}

// Item 7: the server echoes the Authorization header in its error pages
// and Status messages. The token must not reach OnError or the log.
func TestAttackTokenEcho(t *testing.T) {
	var n atomic.Int64
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch n.Add(1) % 3 {
		case 0:
			http.Error(w, "<html>denied: "+auth+"</html>", http.StatusForbidden)
		case 1:
			st := apierrors.NewUnauthorized("bad credentials: " + auth).ErrStatus
			st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
			writeJSON(w, http.StatusUnauthorized, &st)
		default:
			st := apierrors.NewForbidden(podsGR, auth, nil).ErrStatus
			st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
			writeJSON(w, http.StatusForbidden, &st)
		}
	})
	a.opts.Reflector.Backoff = reflector.Backoff{Initial: 50 * time.Millisecond, Max: 50 * time.Millisecond}
	a.start()
	e := a.waitErr(reflector.KindRejected, nil)
	require.True(t, apierrors.IsForbidden(e) || apierrors.IsUnauthorized(e), "still a typed API error: %v", e)
	require.Eventually(t, func() bool { return a.requests.Load() >= 6 }, waitFor, time.Millisecond, "every echo shape served")
	a.stop(bounds{requests: 100, heap: 16 << 20}) // checks the token in every captured error and log line
}

// Item 8: after Shutdown no keep-alive connection, and no transport
// goroutine serving one, is left (stop checks it while the server runs).
// The watch fails with a small 500, so when Shutdown comes, during the
// backoff, the connection sits idle in the client's pool.
func TestAttackIdleConnectionsAfterShutdown(t *testing.T) {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		switch {
		case isWatchList(r):
			http.Error(w, "no WatchList here", http.StatusBadRequest)
		case isWatch(r):
			http.Error(w, "try again later", http.StatusInternalServerError)
		default:
			listOne(a, w)
		}
	})
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindServerError, nil)
	a.stop(bounds{requests: 5, heap: 16 << 20})
}

// Item 9: a slow handler's backlog under a flood of updates. The server
// streams MODIFIED events for one pod as fast as it can write them; the
// handler takes 5 ms a call (the time.Sleep stands for work, it does not
// synchronise anything). With default options the handler falls past its
// backlog limit and its backlog coalesces by key, so its memory is bounded
// by the one object, not by the hundreds of thousands of events.
func TestAttackSlowHandlerBacklog(t *testing.T) {
	a := newAttack(t, floodOnePod)
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.start()
	reg, err := a.inf.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnUpdate: func(_, _ *corev1.Pod) { time.Sleep(5 * time.Millisecond) },
	}, informer.HandlerOptions{Name: "slow"})
	require.NoError(t, err)
	a.waitSynced()
	require.Eventually(t, func() bool { return reg.Stats().Coalesced > 0 }, waitFor, time.Millisecond,
		"the slow handler's backlog never coalesced: %+v", reg.Stats())
	a.observe(2 * time.Second)
	st := reg.Stats()
	t.Logf("slow handler after the flood: %+v; events %d", st, a.inf.Stats().Events["MODIFIED"])
	// The limit (processor.DefaultBacklogLimit) is checked once per
	// journal page of 128, and a coalescing handler keeps one notification
	// per changed object beside it: a few pages over the limit at most.
	require.LessOrEqual(t, st.Pending, 1024+4*128, "pending notifications of the slow handler")
	a.stop(bounds{requests: 5, heap: 32 << 20})
}

// Class "401/403/429 with a huge Retry-After": the wait is capped (ten
// minutes), so the informer neither hammers the server nor sleeps for
// years.
func TestAttackHugeRetryAfter(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "999999999999")
				http.Error(w, "go away", code)
			})
			a.start()
			kind := reflector.KindRejected
			if code == http.StatusTooManyRequests {
				kind = reflector.KindThrottled
			}
			a.waitErr(kind, nil)
			require.Eventually(t, func() bool { return a.inf.Stats().Backoffs > 0 }, waitFor, time.Millisecond)
			a.observe(time.Second)
			s := a.inf.Stats()
			require.LessOrEqual(t, s.LastBackoff, 10*time.Minute, "Retry-After is capped")
			require.Positive(t, s.LastBackoff)
			a.stop(bounds{requests: 5, heap: 16 << 20})
		})
	}
}

// Class "TLS with a wrong or missing CA": the handshake fails, no request
// (and so no token) reaches the server, and the informer backs off.
func TestAttackTLSWrongOrMissingCA(t *testing.T) {
	for _, ca := range []struct {
		name string
		pem  []byte
	}{{"missing CA", nil}, {"wrong CA", otherCA(t)}} {
		t.Run(ca.name, func(t *testing.T) {
			a := newTLSAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
				listOne(a, w)
			})
			a.cfg.CAData = ca.pem
			a.start()
			e := a.waitErr(reflector.KindNetwork, nil)
			require.Contains(t, e.Error(), "certificate")
			a.observe(time.Second)
			require.Zero(t, a.requests.Load(), "a request got past the handshake")
			a.stop(bounds{requests: 0, heap: 16 << 20})
		})
	}
}

// otherCA is a self-signed CA certificate that signed nothing the test
// servers present. (Every httptest TLS server shares one certificate, so
// another server's would not do.)
func otherCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "not your CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
