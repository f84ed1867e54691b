package rest

// What every request to the API server shares, whoever sends it:
// reflector/wire's lists and watches, and package client's reads and
// writes. Each rule has this one home, so that the two sides cannot drift
// apart on where a resource lives, which encodings they ask for, or how much
// of a body they believe.

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resourceURL lays out the REST path of a resource's collection, or, with
// subpath, of something under it (an object's name, then a subresource):
//
//	core group:   {host}/api/v1[/namespaces/{ns}]/{resource}[/{subpath}...]
//	other groups: {host}/apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{subpath}...]
//
// An empty namespace leaves the namespace segment out: all namespaces, or a
// cluster-scoped resource (the caller knows which; see
// apiresource.Resource.ClusterScoped). Empty subpath elements are skipped.
// host must be valid (Config.Validate); a path it carries, as behind a
// proxy, is kept in front. The result has no query.
func resourceURL(host string, gvr schema.GroupVersionResource, namespace string, subpath ...string) *url.URL {
	u, _ := url.Parse(host)        // validated by Config.Validate
	parts := []string{"/", u.Path} // absolute even when Host has no path
	if gvr.Group == "" {
		parts = append(parts, "api", gvr.Version)
	} else {
		parts = append(parts, "apis", gvr.Group, gvr.Version)
	}
	if namespace != "" {
		parts = append(parts, "namespaces", namespace)
	}
	parts = append(parts, gvr.Resource)
	u.Path = path.Join(append(parts, subpath...)...)
	return u
}

// AcceptHeader is the Accept header for a request whose answer is one
// object or one list of a Go type: JSON alone for a type without a
// protobuf form (custom types), whatever contentType (Config.ContentType)
// says; otherwise what contentType forces, or, when it is empty, protobuf
// first and then JSON. A response is decoded by its Content-Type whatever
// we asked (ResponseMediaType), since a server may answer JSON anyway.
func AcceptHeader(contentType string, protobuf bool) string {
	return strings.Join(acceptedTypes(contentType, protobuf), ", ")
}

// acceptedTypes lists the media types to accept, most preferred first.
func acceptedTypes(contentType string, protobuf bool) []string {
	switch {
	case !protobuf || contentType == ContentTypeJSON:
		return []string{ContentTypeJSON}
	case contentType == ContentTypeProtobuf:
		return []string{ContentTypeProtobuf}
	}
	return []string{ContentTypeProtobuf, ContentTypeJSON} // negotiate
}

// ReadBody reads a whole response body, refusing more than limit bytes with
// an error wrapping ErrObjectTooLarge. The limit counts the bytes the body
// yields: for a gzip-compressed response (which net/http inflates for us)
// the inflated bytes, so that a few MiB on the wire cannot become
// gigabytes in memory.
//
// A Content-Length above the limit is refused before reading. Below it, it
// is a claim, not a fact: a server that announces a gigabyte and sends 19
// bytes must not make the client allocate a gigabyte, on every retry. So
// the claim is believed up to trustedClaim bytes, the size of the first
// buffer; past that the buffer doubles as bytes arrive, never beyond the
// claim (plus the one byte that shows the end), so that an honest large
// body ends in a buffer of exactly its size, and never beyond the limit
// (plus that byte), so that a body of unknown length, an inflating one
// above all, is refused holding at most limit+1 bytes.
func ReadBody(resp *http.Response, limit int64) ([]byte, error) {
	claimed := resp.ContentLength
	if claimed > limit {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds %d", ErrObjectTooLarge, claimed, limit)
	}
	// One byte past the limit tells a body of exactly limit bytes from a
	// longer one; at the largest int64 there is no past, and no body that
	// long either.
	r := io.LimitReader(resp.Body, min(limit, math.MaxInt64-1)+1)
	buf := make([]byte, 0, bodyRoom(0, claimed, limit))
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), len(buf)+bodyRoom(len(buf), claimed, limit))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("%w: body exceeds %d bytes", ErrObjectTooLarge, limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading body: %w", err)
		}
	}
}

// trustedClaim is how much of a Content-Length ReadBody allocates before
// any byte has arrived: a lie costs at most this much per request.
const trustedClaim = 1 << 20

// firstUnknownBuffer is the first buffer for a body of unknown length.
const firstUnknownBuffer = 32 << 10

// bodyRoom is how many bytes to add to a body buffer holding have bytes,
// for a body that claims claimed bytes (-1: unknown), under limit. The
// first buffer is the claim up to trustedClaim; after it the buffer
// doubles, but never past the claim plus one byte, where an honest body
// ends, nor past the limit plus one byte, where every body ends. A
// doubling that would reach the limit goes to limit+1 at once: stopping
// at the limit would cost one more copy of the whole buffer for its last
// byte.
func bodyRoom(have int, claimed, limit int64) int {
	room := int64(max(have, firstUnknownBuffer))
	if claimed >= 0 && int64(have) <= claimed {
		if have == 0 {
			room = trustedClaim
		}
		room = min(room, claimed-int64(have)+1)
	}
	if end := min(limit, math.MaxInt64-1) + 1; int64(have)+room >= limit {
		room = end - int64(have)
	}
	return int(room)
}

// refuseRedirect is the one redirect rule of every client this module
// builds (NewHTTPClient, New): a redirect is handed back to the caller,
// never followed. Client.Error turns it into a *RedirectError.
//
// Why never follow: the API does not redirect; a followed 307 would replay
// a write's body to another host; and Go's client would resend the
// Authorization header to a redirect on the same host, even to another
// port or from https to plain http.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
