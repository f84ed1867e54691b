package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// maxErrorBodyBytes bounds how much of an error response we read: a Status
// is small, and an HTML error page from a proxy need not be kept whole.
const maxErrorBodyBytes = 64 << 10

// errorFromResponse turns a non-2xx response into an *apierrors.StatusError.
//
// The API server explains failures with a metav1.Status body; we decode it
// so that callers can use apierrors.IsResourceExpired, IsGone,
// IsTooManyRequests and friends exactly as with client-go. When the body is
// not a Status (a proxy's HTML page, an empty 503), we build one from the
// HTTP code. Either way, a Retry-After header ends up in
// Status.Details.RetryAfterSeconds, where apierrors.SuggestsClientDelay
// looks for it. Every text the server wrote is redacted (see redact.go):
// a server may echo the token it was sent.
func errorFromResponse(resp *http.Response, body []byte, verb string, gr schema.GroupResource, red redactor) error {
	retryAfter := retryAfterSeconds(resp.Header.Get("Retry-After"))
	status, ok := decodeStatus(resp.Header.Get("Content-Type"), body)
	if !ok {
		// Redacted before it is cut: a cut could split a token in two.
		msg := red.redact(strings.TrimSpace(string(body)))
		if len(msg) > 512 {
			msg = strings.ToValidUTF8(msg[:512], "") + "..."
		}
		return apierrors.NewGenericServerResponse(resp.StatusCode, verb, gr, "", msg, retryAfter, true)
	}
	red.status(status)
	if status.Code == 0 {
		status.Code = int32(resp.StatusCode)
	}
	if retryAfter > 0 {
		if status.Details == nil {
			status.Details = &metav1.StatusDetails{}
		}
		if status.Details.RetryAfterSeconds == 0 {
			status.Details.RetryAfterSeconds = int32(retryAfter)
		}
	}
	return apierrors.FromObject(status)
}

// decodeStatus decodes body as a metav1.Status, reporting false when it is
// something else.
func decodeStatus(contentType string, body []byte) (*metav1.Status, bool) {
	if len(body) == 0 {
		return nil, false
	}
	mediaType, err := ResponseMediaType(contentType, body)
	if err != nil {
		return nil, false
	}
	status := &metav1.Status{}
	if mediaType == ContentTypeProtobuf {
		// Kubernetes' envelope: the magic, then a runtime.Unknown whose
		// Raw is the Status message.
		var env runtime.Unknown
		if !bytes.HasPrefix(body, protobufMagic) || env.Unmarshal(body[len(protobufMagic):]) != nil ||
			env.Kind != "Status" || env.ContentEncoding != "" || status.Unmarshal(env.Raw) != nil {
			return nil, false
		}
	} else if mediaType == ContentTypeCBOR {
		if direct.Unmarshal(body, status) != nil || status.Kind != "Status" {
			return nil, false
		}
	} else if json.Unmarshal(body, status) != nil || status.Kind != "Status" {
		return nil, false
	}
	status.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("Status"))
	return status, true
}

// retryAfterSeconds parses a Retry-After header given in seconds, the only
// form the API server sends. Anything else yields 0 (no suggestion).
func retryAfterSeconds(h string) int {
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 0 {
		return 0
	}
	// Status carries it as an int32: a larger one would wrap negative and
	// read as no suggestion at all. (A reflector caps the wait anyway.)
	return min(n, math.MaxInt32)
}
