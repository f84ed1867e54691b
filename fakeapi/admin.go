package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// adminPrefix is where this server's own control endpoints live. The
// endpoints and their bodies are documented in doc.go.
const adminPrefix = "/fakeapi/v1/"

// adminFault is the JSON body of the fault endpoints that name a resource
// (and, for latency and stalls, a duration).
type adminFault struct {
	Verb         string `json:"verb,omitempty"`
	Resource     string `json:"resource,omitempty"`
	Milliseconds int64  `json:"milliseconds,omitempty"`
}

// serveAdmin dispatches /fakeapi/v1/{action}. Every action but the
// resourceVersion query is a POST and answers a Success Status, or a
// failure Status for a bad request.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.URL.Path, adminPrefix)
	if action == "resourceversion" && r.Method == http.MethodGet {
		s.adminOK(w, r, formatRV(s.ResourceVersion()))
		return
	}
	if r.Method != http.MethodPost {
		s.writeError(w, r, apierrors.NewMethodNotSupported(adminResource, strings.ToLower(r.Method)))
		return
	}
	handler, ok := s.adminActions()[action]
	if !ok {
		s.writeError(w, r, notFoundPath())
		return
	}
	if err := handler(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.adminOK(w, r, action+" done; resourceVersion "+formatRV(s.ResourceVersion()))
}

var adminResource = metav1.SchemeGroupVersion.WithResource("fakeapi").GroupResource()

// adminActions maps each POST endpoint to its effect.
func (s *Server) adminActions() map[string]func(*http.Request) error {
	withFault := func(apply func(adminFault)) func(*http.Request) error {
		return func(r *http.Request) error {
			var body adminFault
			if err := decodeAdminBody(r, &body); err != nil {
				return err
			}
			apply(body)
			return nil
		}
	}
	return map[string]func(*http.Request) error{
		"drop-watches":           func(*http.Request) error { s.DropWatches(); return nil },
		"compact":                func(*http.Request) error { s.Compact(); return nil },
		"close-connections":      func(*http.Request) error { s.CloseClientConnections(); return nil },
		"faults/reset":           func(*http.Request) error { s.faults.Reset(); return nil },
		"faults/fail":            s.adminFail,
		"faults/latency":         withFault(func(b adminFault) { s.faults.SetLatency(b.Verb, b.Resource, millis(b.Milliseconds)) }),
		"faults/stall":           withFault(func(b adminFault) { s.faults.StallWatches(b.Resource, millis(b.Milliseconds)) }),
		"faults/hold":            withFault(func(b adminFault) { s.faults.HoldWatches(b.Resource) }),
		"faults/resume":          withFault(func(b adminFault) { s.faults.ResumeWatches(b.Resource) }),
		"faults/cut-frame":       withFault(func(b adminFault) { s.faults.CutNextWatchFrame(b.Resource) }),
		"faults/malformed-frame": withFault(func(b adminFault) { s.faults.MalformNextWatchFrame(b.Resource) }),
	}
}

func (s *Server) adminFail(r *http.Request) error {
	var body Failure
	if err := decodeAdminBody(r, &body); err != nil {
		return err
	}
	if body.Code != 0 && (body.Code < 400 || body.Code > 599) {
		return apierrors.NewBadRequest(fmt.Sprintf("code %d is not an HTTP error status", body.Code))
	}
	s.faults.FailNext(body)
	return nil
}

// decodeAdminBody reads an optional JSON body strictly: unknown fields are
// a 400, so a typo in a test script does not silently inject nothing.
func decodeAdminBody(r *http.Request, into any) error {
	data, err := readBody(r)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid admin request body: %v", err))
	}
	return nil
}

func (s *Server) adminOK(w http.ResponseWriter, r *http.Request, message string) {
	enc := s.encodingFor(mediaJSON, asFull)
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Code: http.StatusOK, Message: message}
	s.writeObject(w, r, enc, http.StatusOK, status)
}

func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
