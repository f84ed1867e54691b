package fakeapi

import (
	"compress/gzip"
	"crypto/sha512"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// OpenAPI: kube-apiserver publishes the schema of every type it serves,
// as one OpenAPI v2 document (/openapi/v2) and one OpenAPI v3 document per
// group version (/openapi/v3/api/v1, /openapi/v3/apis/apps/v1, listed by
// the index /openapi/v3). kubectl explain reads them, kubectl apply uses
// them to decide how to validate, and server-side apply needs the type
// information they carry.
//
// fakeapi serves the real server's own documents, recorded from
// kube-apiserver by scripts/record-openapi.sh and embedded gzip-compressed
// (fakeapi/openapi/). They are decompressed the first time a client asks,
// once per server, and served the way the real server serves them: the
// ETag is the SHA-512 of the bytes, a matching If-None-Match gets 304, a v3
// document asked for with its current hash is immutable, and one asked for
// with a stale hash is redirected (301) to the current one. A built-in
// group version with no recorded v3 document gets one derived from the v2
// document (openapi_derived.go).

//go:embed openapi/v2.json.gz openapi/v2.pb.gz openapi/v3/*.json.gz
var openapiFiles embed.FS

// Media types of the OpenAPI documents.
const (
	mediaOpenAPIV2Protobuf = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	// client-go asks for the protobuf form with an '@' in the version.
	mediaOpenAPIV2ProtobufAsked = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// openapiDoc is one document, decompressed, with its ETag.
type openapiDoc struct {
	data []byte
	etag string // the uppercase hex SHA-512 of data, as the real server computes it
}

// openapiDocs are a server's documents, loaded on first use.
type openapiDocs struct {
	once   sync.Once
	v2JSON openapiDoc
	v2PB   openapiDoc
	// v3 maps a group version path ("api/v1", "apis/apps/v1") to its document.
	v3  map[string]openapiDoc
	err error

	crdMu sync.RWMutex // guards crd
	// crd holds the documents of custom resources' group versions (crd_openapi.go).
	crd map[string]openapiDoc
}

// setCRD publishes (or, with ok false, withdraws) the document of a custom
// resource group version.
func (d *openapiDocs) setCRD(path string, doc openapiDoc, ok bool) {
	d.crdMu.Lock()
	defer d.crdMu.Unlock()
	if d.crd == nil {
		d.crd = map[string]openapiDoc{}
	}
	if ok {
		d.crd[path] = doc
	} else {
		delete(d.crd, path)
	}
}

// v3Docs returns every v3 document by path: the recorded ones and those of
// custom resources.
func (d *openapiDocs) v3Docs() map[string]openapiDoc {
	d.crdMu.RLock()
	defer d.crdMu.RUnlock()
	out := make(map[string]openapiDoc, len(d.v3)+len(d.crd))
	for p, doc := range d.v3 {
		out[p] = doc
	}
	for p, doc := range d.crd {
		out[p] = doc
	}
	return out
}

func loadOpenAPIDoc(name string) (openapiDoc, error) {
	f, err := openapiFiles.Open(name)
	if err != nil {
		return openapiDoc{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return openapiDoc{}, fmt.Errorf("fakeapi: %s: %w", name, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return openapiDoc{}, fmt.Errorf("fakeapi: %s: %w", name, err)
	}
	sum := sha512.Sum512(data)
	return openapiDoc{data: data, etag: fmt.Sprintf("%X", sum[:])}, nil
}

// load reads the v2 documents and the v3 documents of the served group
// versions. The v2 ETag is the JSON document's, for both forms.
func (d *openapiDocs) load(reg *registry) error {
	d.once.Do(func() {
		if d.v2JSON, d.err = loadOpenAPIDoc("openapi/v2.json.gz"); d.err != nil {
			return
		}
		if d.v2PB, d.err = loadOpenAPIDoc("openapi/v2.pb.gz"); d.err != nil {
			return
		}
		d.v2PB.etag = d.v2JSON.etag
		d.v3 = map[string]openapiDoc{}
		var swagger *swaggerV2 // parsed on the first group version not recorded
		for _, gv := range reg.groupVersions() {
			path := "apis/" + gv.String()
			if gv.Group == "" {
				path = "api/" + gv.Version
			}
			doc, err := loadOpenAPIDoc("openapi/v3/" + strings.ReplaceAll(path, "/", "_") + ".json.gz")
			if err == nil {
				d.v3[path] = doc
				continue
			}
			// Not recorded (openapi_derived.go).
			if swagger == nil {
				if swagger, d.err = parseV2(d.v2JSON.data); d.err != nil {
					return
				}
			}
			doc, ok, err := derivedV3Doc(swagger, path)
			if err != nil {
				d.err = err
				return
			}
			if ok {
				d.v3[path] = doc
			}
		}
	})
	return d.err
}

// serveOpenAPI answers /openapi/v2, /openapi/v3 and /openapi/v3/{gv}.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.writeError(w, r, notFoundPath())
		return
	}
	if err := s.openapi.load(s.reg); err != nil {
		s.writeError(w, r, err)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/openapi/")
	switch {
	case path == "v2":
		s.serveOpenAPIV2(w, r)
	case path == "v3":
		s.serveOpenAPIV3Index(w)
	case strings.HasPrefix(path, "v3/"):
		s.serveOpenAPIV3(w, r, strings.TrimPrefix(path, "v3/"))
	default:
		notFoundText(w)
	}
}

func (s *Server) serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	doc, mediaType := s.openapi.v2JSON, mediaJSON
	// The protobuf media type has an '@', which mime.ParseMediaType does
	// not take, so the ranges are compared as text.
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if mt == mediaOpenAPIV2ProtobufAsked || mt == mediaOpenAPIV2Protobuf {
			doc, mediaType = s.openapi.v2PB, mediaOpenAPIV2Protobuf
			break
		}
		if mt == mediaJSON || mt == "*/*" || mt == "application/*" {
			break
		}
	}
	writeOpenAPIDoc(w, r, doc, mediaType, "no-cache, private")
}

// serveOpenAPIV3Index lists the served group versions, each with its
// document's hash, so that clients can cache documents forever.
func (s *Server) serveOpenAPIV3Index(w http.ResponseWriter) {
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]entry `json:"paths"`
	}{Paths: map[string]entry{}}
	for path, doc := range s.openapi.v3Docs() {
		index.Paths[path] = entry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + doc.etag}
	}
	data, _ := json.Marshal(index)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8") // sic: the real server's
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(data)
}

func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request, path string) {
	doc, ok := s.openapi.v3Docs()[path]
	if !ok {
		notFoundText(w)
		return
	}
	hash := r.URL.Query().Get("hash")
	switch {
	case hash == "":
		writeOpenAPIDoc(w, r, doc, mediaJSON, "no-cache, private")
	case hash == doc.etag:
		writeOpenAPIDoc(w, r, doc, mediaJSON, "public, immutable")
	default:
		w.Header().Set("Location", "/openapi/v3/"+path+"?hash="+doc.etag)
		w.Header().Set("Cache-Control", "no-cache, private")
		w.WriteHeader(http.StatusMovedPermanently)
	}
}

func writeOpenAPIDoc(w http.ResponseWriter, r *http.Request, doc openapiDoc, mediaType, cacheControl string) {
	etag := `"` + doc.etag + `"`
	w.Header().Set("Etag", etag)
	w.Header().Set("Cache-Control", cacheControl)
	w.Header().Set("Content-Type", mediaType)
	w.Header().Add("Vary", "Accept")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(doc.data)
}
