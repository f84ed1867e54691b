package kubeconfig

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is an injected environment: tests never see the machine's KUBECONFIG,
// HOME or in-cluster variables.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// summary flattens a merged kubeconfig for comparison: each entry as
// "name=value@file" where value is the field that tells entries apart.
type summary struct {
	CurrentContext string
	Clusters       []string // name=server@file
	Users          []string // name=token@file
	Contexts       []string // name=cluster/user/namespace@file
}

func summarize(m *mergedKubeconfig, base string) summary {
	rel := func(p string) string { r, _ := filepath.Rel(base, p); return r }
	s := summary{CurrentContext: m.CurrentContext}
	for n, c := range m.Clusters {
		s.Clusters = append(s.Clusters, n+"="+c.Value.Server+"@"+rel(c.File))
	}
	for n, u := range m.Users {
		s.Users = append(s.Users, n+"="+u.Value.Token+"@"+rel(u.File))
	}
	for n, c := range m.Contexts {
		s.Contexts = append(s.Contexts, n+"="+c.Value.Cluster+"/"+c.Value.User+"/"+c.Value.Namespace+"@"+rel(c.File))
	}
	sort.Strings(s.Clusters)
	sort.Strings(s.Users)
	sort.Strings(s.Contexts)
	return s
}

// TestMergeKubeconfigs is the table of kubectl's merge rules: the first
// file that names a map key wins with its whole entry; current-context
// comes from the first file that sets one.
func TestMergeKubeconfigs(t *testing.T) {
	cases := []struct {
		name  string
		files []string // contents, highest precedence first ("" = file absent)
		want  summary
	}{{
		name: "two files: disjoint entries are all kept, current-context from the first",
		files: []string{
			"current-context: a\nclusters: [{name: ca, cluster: {server: 'https://a'}}]\ncontexts: [{name: a, context: {cluster: ca}}]",
			"current-context: b\nclusters: [{name: cb, cluster: {server: 'https://b'}}]\nusers: [{name: ub, user: {token: tb}}]\ncontexts: [{name: b, context: {cluster: cb, user: ub, namespace: nb}}]",
		},
		want: summary{CurrentContext: "a",
			Clusters: []string{"ca=https://a@f0", "cb=https://b@f1"},
			Users:    []string{"ub=tb@f1"},
			Contexts: []string{"a=ca//@f0", "b=cb/ub/nb@f1"}},
	}, {
		name: "two files: the first file's entry wins whole, never field by field",
		files: []string{
			"clusters: [{name: c, cluster: {server: 'https://first'}}]\nusers: [{name: u, user: {token: first}}]",
			"current-context: x\nclusters: [{name: c, cluster: {server: 'https://second', tls-server-name: s}}]\nusers: [{name: u, user: {token: second, tokenFile: f}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]",
		},
		want: summary{CurrentContext: "x",
			Clusters: []string{"c=https://first@f0"},
			Users:    []string{"u=first@f0"},
			Contexts: []string{"x=c/u/@f1"}},
	}, {
		name: "two files: a missing file is skipped",
		files: []string{
			"",
			"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]",
		},
		want: summary{CurrentContext: "x", Contexts: []string{"x=c//@f1"}},
	}, {
		name: "three files: current-context from the first that has one, the middle one",
		files: []string{
			"users: [{name: u, user: {token: t0}}]",
			"current-context: mid\ncontexts: [{name: mid, context: {cluster: c, user: u, namespace: n1}}]",
			"current-context: last\nclusters: [{name: c, cluster: {server: 'https://c2'}}]\nusers: [{name: u, user: {token: t2}}]\ncontexts: [{name: mid, context: {cluster: other}}, {name: last, context: {cluster: c}}]",
		},
		want: summary{CurrentContext: "mid",
			Clusters: []string{"c=https://c2@f2"},
			Users:    []string{"u=t0@f0"},
			Contexts: []string{"last=c//@f2", "mid=c/u/n1@f1"}},
	}, {
		name: "three files: JSON and YAML mix",
		files: []string{
			`{"apiVersion": "v1", "kind": "rest.Config", "clusters": [{"name": "c", "cluster": {"server": "https://json"}}]}`,
			"clusters: [{name: c, cluster: {server: 'https://yaml'}}, {name: d, cluster: {server: 'https://d'}}]",
			`{"current-context": "j", "contexts": [{"name": "j", "context": {"cluster": "d", "namespace": "nj"}}]}`,
		},
		want: summary{CurrentContext: "j",
			Clusters: []string{"c=https://json@f0", "d=https://d@f1"},
			Contexts: []string{"j=d//nj@f2"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := newMergedKubeconfig()
			for i, content := range tc.files {
				path := filepath.Join(dir, "f"+string(rune('0'+i)))
				if content == "" {
					continue // a KUBECONFIG entry naming a file that does not exist
				}
				require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
				kc, err := readKubeconfigFile(path)
				require.NoError(t, err)
				require.NoError(t, m.add(path, kc))
			}
			assert.Equal(t, tc.want, summarize(m, dir))
		})
	}
}

// writeFiles writes name → content into dir and returns the paths in the
// order given.
func writeFiles(t *testing.T, dir string, files ...[2]string) []string {
	t.Helper()
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f[0])
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f[1]), 0o600))
		paths = append(paths, p)
	}
	return paths
}

// TestLoadingRulesOrder walks kubectl's order: explicit path, $KUBECONFIG
// list, ~/.kube/config, in-cluster, each found only when the earlier ones
// are absent.
func TestLoadingRulesOrder(t *testing.T) {
	dir := t.TempDir()
	one := func(server, ns string) string {
		return "current-context: x\nclusters: [{name: c, cluster: {server: '" + server + "'}}]\ncontexts: [{name: x, context: {cluster: c, namespace: '" + ns + "'}}]"
	}
	paths := writeFiles(t, dir,
		[2]string{"explicit", one("https://explicit", "e")},
		[2]string{"a", one("https://a", "")},
		[2]string{"b", "users: [{name: u, user: {token: t}}]"},
		[2]string{"home/.kube/config", one("https://home", "h")},
	)
	sa := inClusterDir(t, "pod-token", "team-a")
	full := map[string]string{
		"KUBECONFIG":              paths[1] + string(filepath.ListSeparator) + filepath.Join(dir, "absent") + string(filepath.ListSeparator) + paths[2],
		"HOME":                    filepath.Join(dir, "home"),
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443",
	}
	load := func(r LoadingRules) Loaded {
		t.Helper()
		r.InCluster.Dir = sa
		l, err := r.Load()
		require.NoError(t, err)
		return l
	}

	l := load(LoadingRules{ExplicitPath: paths[0], Getenv: env(full)})
	assert.Equal(t, "https://explicit", l.Config.Host)
	assert.Equal(t, "e", l.Namespace)
	assert.Equal(t, []string{paths[0]}, l.Files, "an explicit path replaces $KUBECONFIG")

	l = load(LoadingRules{Getenv: env(full)})
	assert.Equal(t, "https://a", l.Config.Host)
	assert.Equal(t, "default", l.Namespace, "a context without a namespace means default")
	assert.Equal(t, []string{paths[1], paths[2]}, l.Files, "the absent middle file is skipped")

	delete(full, "KUBECONFIG")
	l = load(LoadingRules{Getenv: env(full)})
	assert.Equal(t, "https://home", l.Config.Host, "~/.kube/config when $KUBECONFIG is unset")

	full["HOME"] = filepath.Join(dir, "empty-home")
	l = load(LoadingRules{Getenv: env(full)})
	assert.True(t, l.InCluster, "no kubeconfig anywhere: in-cluster")
	assert.Equal(t, "https://10.0.0.1:443", l.Config.Host)
	assert.Equal(t, "team-a", l.Namespace)

	delete(full, "KUBERNETES_SERVICE_HOST")
	_, err := LoadingRules{Getenv: env(full), InCluster: InCluster{Dir: sa}}.Load()
	require.ErrorIs(t, err, ErrNoConfig)
	assert.ErrorIs(t, err, ErrNotInCluster)
	assert.Contains(t, err.Error(), filepath.Join(dir, "empty-home", ".kube", "config"), "the error says where it looked")

	_, err = LoadingRules{Paths: []string{filepath.Join(dir, "absent")}, Getenv: env(full)}.Load()
	assert.ErrorIs(t, err, os.ErrNotExist, "explicitly listed files that are all absent do not fall back")
	_, err = LoadingRules{ExplicitPath: filepath.Join(dir, "absent"), Getenv: env(full)}.Load()
	assert.ErrorIs(t, err, os.ErrNotExist, "an explicit path must exist")
}

// A context of one file can use the cluster of another, and each file's
// relative paths stay relative to that file.
func TestLoadingRulesSplitFilesAndContextSelection(t *testing.T) {
	pki := testserver.NewPKI(t)
	dir := t.TempDir()
	pki.WriteFiles(t, filepath.Join(dir, "clusters", "certs"))
	paths := writeFiles(t, dir,
		[2]string{"users/config", "current-context: dev\nusers: [{name: u, user: {tokenFile: tok}}]\ncontexts: [{name: dev, context: {cluster: c, user: u, namespace: shop}}, {name: other, context: {cluster: c, namespace: blog}}]"},
		[2]string{"users/tok", "t0k3n"},
		[2]string{"clusters/config", "clusters: [{name: c, cluster: {server: 'https://h:6443', certificate-authority: certs/ca.crt}}]"},
	)
	rules := LoadingRules{Paths: []string{paths[0], paths[2]}, Getenv: env(nil)}
	l, err := rules.Load()
	require.NoError(t, err)
	assert.Equal(t, "dev", l.Context)
	assert.Equal(t, "shop", l.Namespace)
	assert.Equal(t, filepath.Join(dir, "users", "tok"), l.Config.BearerTokenFile)
	assert.Equal(t, filepath.Join(dir, "clusters", "certs", "ca.crt"), l.Config.CAFile)

	rules.Context = "other"
	l, err = rules.Load()
	require.NoError(t, err)
	assert.Equal(t, "blog", l.Namespace)
	assert.Empty(t, l.Config.BearerTokenFile, "context other has no user")

	rules.Context = "nope"
	_, err = rules.Load()
	assert.ErrorIs(t, err, rest.ErrInvalidConfig)
}

func TestLoadingRulesRejectsDuplicateNames(t *testing.T) {
	paths := writeFiles(t, t.TempDir(), [2]string{"config", "clusters: [{name: c, cluster: {server: 'https://a'}}, {name: c, cluster: {server: 'https://b'}}]"})
	_, err := LoadingRules{ExplicitPath: paths[0], Getenv: env(nil)}.Load()
	require.ErrorIs(t, err, rest.ErrInvalidConfig)
	assert.Contains(t, err.Error(), `cluster "c" is listed twice`)
}

// Cluster options kubectl honours come through to the rest.Config.
func TestLoadingRulesClusterOptions(t *testing.T) {
	paths := writeFiles(t, t.TempDir(), [2]string{"config", `
current-context: x
clusters:
- name: c
  cluster:
    server: https://10.1.2.3:6443
    tls-server-name: api.example
    proxy-url: socks5://127.0.0.1:1080
    disable-compression: true
    certificate-authority-data: ` + b64([]byte("pem")) + `
    certificate-authority: ignored-when-data-is-set
contexts: [{name: x, context: {cluster: c}}]
`})
	l, err := LoadingRules{ExplicitPath: paths[0], Getenv: env(nil)}.Load()
	require.NoError(t, err)
	c := l.Config
	assert.Equal(t, "api.example", c.TLSServerName)
	assert.Equal(t, "socks5://127.0.0.1:1080", c.ProxyURL)
	assert.True(t, c.DisableCompression)
	assert.Equal(t, []byte("pem"), c.CAData)
	assert.Empty(t, c.CAFile, "inline data wins over the file")

	bad := writeFiles(t, t.TempDir(), [2]string{"config", "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h', proxy-url: 'ftp://p'}}]\ncontexts: [{name: x, context: {cluster: c}}]"})
	_, err = LoadingRules{ExplicitPath: bad[0], Getenv: env(nil)}.Load()
	var ce *rest.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ProxyURL", ce.Field)
}

// An exec user becomes rest.Config.Exec; with a token of its own the token wins
// and the plugin is not run, as kubectl does.
func TestLoadingRulesExecUser(t *testing.T) {
	paths := writeFiles(t, t.TempDir(), [2]string{"config", `
current-context: x
clusters:
- name: c
  cluster:
    server: https://h
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: sts}
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/login
      args: [--region, eu]
      env: [{name: PROFILE, value: dev}]
      provideClusterInfo: true
- name: both
  user:
    token: static
    exec: {apiVersion: client.authentication.k8s.io/v1, command: login, interactiveMode: Never}
- name: v1-without-mode
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: login}
contexts:
- {name: x, context: {cluster: c, user: plugin}}
- {name: both, context: {cluster: c, user: both}}
- {name: v1-without-mode, context: {cluster: c, user: v1-without-mode}}
`})
	l, err := LoadingRules{ExplicitPath: paths[0], Getenv: env(nil)}.Load()
	require.NoError(t, err)
	e := l.Config.Exec
	require.NotNil(t, e)
	assert.Equal(t, filepath.Join(filepath.Dir(paths[0]), "bin", "login"), e.Command, "a command with a separator is relative to the kubeconfig")
	assert.Equal(t, []string{"--region", "eu"}, e.Args)
	assert.Equal(t, []rest.ExecEnvVar{{Name: "PROFILE", Value: "dev"}}, e.Env)
	assert.Equal(t, rest.ExecInteractiveIfAvailable, e.InteractiveMode, "v1beta1's default")
	assert.True(t, e.ProvideClusterInfo)
	assert.JSONEq(t, `{"audience":"sts"}`, string(e.ClusterConfig))

	l, err = LoadingRules{ExplicitPath: paths[0], Context: "both", Getenv: env(nil)}.Load()
	require.NoError(t, err)
	assert.Nil(t, l.Config.Exec)
	assert.Equal(t, "static", l.Config.BearerToken)

	_, err = LoadingRules{ExplicitPath: paths[0], Context: "v1-without-mode", Getenv: env(nil)}.Load()
	require.ErrorIs(t, err, rest.ErrInvalidConfig)
	assert.True(t, strings.Contains(err.Error(), "interactiveMode is required"), "%v", err)
}

// The zero LoadingRules read the process environment: $KUBECONFIG here,
// set for this test only (the machine's own is never seen).
func TestLoadingRulesZeroValueReadsTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	paths := writeFiles(t, dir, [2]string{"a", "current-context: x\nclusters: [{name: c, cluster: {server: 'https://from-env'}}]\ncontexts: [{name: x, context: {cluster: c}}]"})
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing")+string(filepath.ListSeparator)+paths[0])
	l, err := LoadingRules{}.Load()
	require.NoError(t, err)
	assert.Equal(t, "https://from-env", l.Config.Host)
	assert.Equal(t, paths, l.Files)
}
