package openapi

import (
	"compress/gzip"
	"crypto/sha512"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// How the documents are kept: decompressed the first time a client asks,
// once per server, and served the way the real server serves them: the
// ETag is the SHA-512 of the bytes, a matching If-None-Match gets 304, a v3
// document asked for with its current hash is immutable, and one asked for
// with a stale hash is redirected (301) to the current one. A built-in
// group version with no recorded v3 document gets one derived from the v2
// document (derived.go).

// recorded holds the real server's documents, recorded from kube-apiserver
// by scripts/record-openapi.sh (VERSION names the release).
//
//go:embed v2.json.gz v2.pb.gz v3/*.json.gz
var recorded embed.FS

// Media types of the OpenAPI documents.
const (
	mediaJSON              = "application/json"
	mediaOpenAPIV2Protobuf = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	// client-go asks for the protobuf form with an '@' in the version.
	mediaOpenAPIV2ProtobufAsked = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// Doc is one document, decompressed, with its ETag.
type Doc struct {
	Data []byte
	// ETag is the uppercase hex SHA-512 of Data, as the real server
	// computes it.
	ETag string
}

// NewDoc makes the Doc of data, with its ETag.
func NewDoc(data []byte) Doc {
	sum := sha512.Sum512(data)
	return Doc{Data: data, ETag: fmt.Sprintf("%X", sum[:])}
}

// Documents are one server's documents: the recorded ones, loaded on first
// use, and those of custom resources, published as their CRDs come and go.
// The zero value is ready to use; it is safe for concurrent use.
type Documents struct {
	once   sync.Once
	v2JSON Doc
	v2PB   Doc
	// v3 maps a group version path ("api/v1", "apis/apps/v1") to its document.
	v3  map[string]Doc
	err error

	crdMu sync.RWMutex // guards crd
	// crd holds the documents of custom resources' group versions
	// (fakeapi/internal/crd builds them).
	crd map[string]Doc
}

// SetCRD publishes (or, with ok false, withdraws) the document of a custom
// resource group version path ("apis/example.com/v1").
func (d *Documents) SetCRD(path string, doc Doc, ok bool) {
	d.crdMu.Lock()
	defer d.crdMu.Unlock()
	if d.crd == nil {
		d.crd = map[string]Doc{}
	}
	if ok {
		d.crd[path] = doc
	} else {
		delete(d.crd, path)
	}
}

// v3Docs returns every v3 document by path: the recorded ones and those of
// custom resources.
func (d *Documents) v3Docs() map[string]Doc {
	d.crdMu.RLock()
	defer d.crdMu.RUnlock()
	out := make(map[string]Doc, len(d.v3)+len(d.crd))
	for p, doc := range d.v3 {
		out[p] = doc
	}
	for p, doc := range d.crd {
		out[p] = doc
	}
	return out
}

// RecordedV3 returns the recorded v3 document of a group version path
// ("api/v1", "apis/apps/v1"); an error wrapping fs.ErrNotExist when none
// was recorded.
func RecordedV3(path string) (Doc, error) {
	return loadDoc("v3/" + strings.ReplaceAll(path, "/", "_") + ".json.gz")
}

// RecordedV3Paths lists the group version paths that have a recorded v3
// document, for readers of every schema (server-side apply's types).
func RecordedV3Paths() ([]string, error) {
	names, err := fs.Glob(recorded, "v3/*.json.gz")
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(names))
	for i, name := range names {
		paths[i] = strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(name, "v3/"), ".json.gz"), "_", "/")
	}
	return paths, nil
}

func loadDoc(name string) (Doc, error) {
	f, err := recorded.Open(name)
	if err != nil {
		return Doc{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Doc{}, fmt.Errorf("fakeapi/internal/openapi: %s: %w", name, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return Doc{}, fmt.Errorf("fakeapi/internal/openapi: %s: %w", name, err)
	}
	return NewDoc(data), nil
}

// Load reads, on its first call, the v2 documents and the v3 documents of
// the served built-in group versions; later calls return the first one's
// error. The v2 ETag is the JSON document's, for both forms.
func (d *Documents) Load(groupVersions []schema.GroupVersion) error {
	d.once.Do(func() {
		if d.v2JSON, d.err = loadDoc("v2.json.gz"); d.err != nil {
			return
		}
		if d.v2PB, d.err = loadDoc("v2.pb.gz"); d.err != nil {
			return
		}
		d.v2PB.ETag = d.v2JSON.ETag
		d.v3 = map[string]Doc{}
		var swagger *swaggerV2 // parsed on the first group version not recorded
		for _, gv := range groupVersions {
			path := "apis/" + gv.String()
			if gv.Group == "" {
				path = "api/" + gv.Version
			}
			doc, err := RecordedV3(path)
			if err == nil {
				d.v3[path] = doc
				continue
			}
			// Not recorded (derived.go).
			if swagger == nil {
				if swagger, d.err = parseV2(d.v2JSON.Data); d.err != nil {
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

// Serve answers a GET of /openapi/v2, /openapi/v3 or /openapi/v3/{gv}
// from documents already loaded (Load). found is false, and nothing is
// written, for a path that names no document: the caller answers it with
// its router's 404.
func (d *Documents) Serve(w http.ResponseWriter, r *http.Request) (found bool) {
	path := strings.TrimPrefix(r.URL.Path, "/openapi/")
	switch {
	case path == "v2":
		d.serveV2(w, r)
	case path == "v3":
		d.serveV3Index(w)
	case strings.HasPrefix(path, "v3/"):
		return d.serveV3(w, r, strings.TrimPrefix(path, "v3/"))
	default:
		return false
	}
	return true
}

func (d *Documents) serveV2(w http.ResponseWriter, r *http.Request) {
	doc, mediaType := d.v2JSON, mediaJSON
	// The protobuf media type has an '@', which mime.ParseMediaType does
	// not take, so the ranges are compared as text.
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if mt == mediaOpenAPIV2ProtobufAsked || mt == mediaOpenAPIV2Protobuf {
			doc, mediaType = d.v2PB, mediaOpenAPIV2Protobuf
			break
		}
		if mt == mediaJSON || mt == "*/*" || mt == "application/*" {
			break
		}
	}
	writeDoc(w, r, doc, mediaType, "no-cache, private")
}

// serveV3Index lists the served group versions, each with its
// document's hash, so that clients can cache documents forever.
func (d *Documents) serveV3Index(w http.ResponseWriter) {
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]entry `json:"paths"`
	}{Paths: map[string]entry{}}
	for path, doc := range d.v3Docs() {
		index.Paths[path] = entry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + doc.ETag}
	}
	data, _ := json.Marshal(index)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8") // sic: the real server's
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(data)
}

func (d *Documents) serveV3(w http.ResponseWriter, r *http.Request, path string) bool {
	doc, ok := d.v3Docs()[path]
	if !ok {
		return false
	}
	hash := r.URL.Query().Get("hash")
	switch {
	case hash == "":
		writeDoc(w, r, doc, mediaJSON, "no-cache, private")
	case hash == doc.ETag:
		writeDoc(w, r, doc, mediaJSON, "public, immutable")
	default:
		w.Header().Set("Location", "/openapi/v3/"+path+"?hash="+doc.ETag)
		w.Header().Set("Cache-Control", "no-cache, private")
		w.WriteHeader(http.StatusMovedPermanently)
	}
	return true
}

func writeDoc(w http.ResponseWriter, r *http.Request, doc Doc, mediaType, cacheControl string) {
	etag := `"` + doc.ETag + `"`
	w.Header().Set("Etag", etag)
	w.Header().Set("Cache-Control", cacheControl)
	w.Header().Set("Content-Type", mediaType)
	w.Header().Add("Vary", "Accept")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(doc.Data)
}
