package realapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// etcdTimeout bounds one call to etcd's gateway; a healthy local etcd answers in milliseconds.
const etcdTimeout = 30 * time.Second

// etcdHeader is the response header etcd puts on every KV answer. The gateway encodes int64
// fields as JSON strings, hence the ",string" option.
type etcdHeader struct {
	Revision int64 `json:"revision,string"`
}

// EtcdRevision returns etcd's current revision: the resourceVersion of the newest write, which
// kube-apiserver hands out as resourceVersion. It fails t on error.
func (c *Cluster) EtcdRevision(t testing.TB) int64 {
	t.Helper()
	rev, err := c.etcdRevision()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return rev
}

// EtcdCompact compacts etcd at its current revision and returns that revision. Every older
// revision is discarded, so a watch or list that asks for a resourceVersion below it gets
// 410 Gone from kube-apiserver (reliably so with Options.DisableWatchCache). The compaction is
// physical: it has finished when EtcdCompact returns. It fails t on error.
func (c *Cluster) EtcdCompact(t testing.TB) int64 {
	t.Helper()
	rev, err := c.etcdRevision()
	if err == nil {
		err = c.etcdCompact(rev)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	return rev
}

func (c *Cluster) etcdRevision() (int64, error) {
	// A count-only range over one key is the cheapest request whose header carries the revision.
	req := map[string]any{"key": base64.StdEncoding.EncodeToString([]byte("/")), "count_only": true}
	var resp struct {
		Header etcdHeader `json:"header"`
	}
	if err := c.etcdPost("/v3/kv/range", req, &resp); err != nil {
		return 0, err
	}
	if resp.Header.Revision <= 0 {
		return 0, fmt.Errorf("realapi: etcd reported revision %d", resp.Header.Revision)
	}
	return resp.Header.Revision, nil
}

func (c *Cluster) etcdCompact(rev int64) error {
	req := map[string]any{"revision": fmt.Sprint(rev), "physical": true}
	err := c.etcdPost("/v3/kv/compaction", req, nil)
	// kube-apiserver compacts etcd itself every few minutes. If it got there first, at this
	// revision or later, what the caller wanted (everything older gone) already holds.
	if err != nil && strings.Contains(err.Error(), "required revision has been compacted") {
		return nil
	}
	return err
}

// etcdPost sends one JSON request to etcd's gRPC gateway and decodes the answer into out.
func (c *Cluster) etcdPost(path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("realapi: etcd %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.EtcdURL+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("realapi: etcd %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("realapi: etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("realapi: etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("realapi: etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("realapi: etcd %s: decoding %q: %w", path, data, err)
	}
	return nil
}
