package rest

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Redaction: the configured bearer token never appears in an error this
// package builds.
//
// A server, or a proxy in front of it, may echo what it was sent: a 401
// page quoting the Authorization header, a Status whose message repeats the
// request, a watch frame whose event type is the token. Errors end up in
// logs, metrics labels and bug reports, so every error string that carries
// server text is passed through the Client's redactor, which
// replaces each token it has used with redactedToken.

// redactedToken replaces a token in error text.
const redactedToken = "[redacted]"

// redactor replaces the credentials a Client has sent (static token,
// token file, exec plugin) in text it did not write. The zero value redacts
// nothing. It is safe for concurrent use.
type redactor struct {
	auth  *authenticator // nil: no credentials
	extra string         // one more secret: the token a request carried ("" for none)
}

// redact returns s with every token replaced.
func (r redactor) redact(s string) string {
	if r.auth == nil && r.extra == "" {
		return s
	}
	var secrets []string
	if r.auth != nil {
		secrets = r.auth.secrets()
	}
	return redact(s, append(secrets, r.extra)...) // secrets is clipped: this copies
}

// redact replaces every non-empty secret in s with redactedToken: the one
// rule for every error text this package builds, an exec plugin's stderr
// included.
func redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, redactedToken)
		}
	}
	return s
}

// err returns err unchanged when its text holds no token, and otherwise an
// error with the text redacted that still unwraps to err, so errors.Is and
// errors.As see what they saw before.
func (r redactor) err(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// status redacts the human-readable fields of a Status in place: the parts
// a server fills with text. (Reason and the cause types are enumerations a
// reflector classifies by; a server that puts a token there gets it
// replaced too.)
func (r redactor) status(s *metav1.Status) {
	s.Message = r.redact(s.Message)
	s.Reason = metav1.StatusReason(r.redact(string(s.Reason)))
	if d := s.Details; d != nil {
		d.Name, d.Group, d.Kind, d.UID = r.redact(d.Name), r.redact(d.Group), r.redact(d.Kind), types.UID(r.redact(string(d.UID)))
		for i := range d.Causes {
			c := &d.Causes[i]
			c.Message, c.Field = r.redact(c.Message), r.redact(c.Field)
			c.Type = metav1.CauseType(r.redact(string(c.Type)))
		}
	}
}

// event redacts an ERROR event's Status, the one event object that is an
// error message rather than data.
func (r redactor) event(obj runtime.Object) {
	if s, ok := obj.(*metav1.Status); ok && s != nil {
		r.status(s)
	}
}

// redactedError is an error whose text had a token in it.
type redactedError struct {
	msg string // err.Error(), redacted
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
