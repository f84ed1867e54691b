package kubeconfig

import (
	"fmt"
	"github.com/seed31a95821/informer/rest"
)

// mergedKubeconfig is one or more kubeconfig files merged by kubectl's
// rules: in a map (clusters, users, contexts) the first file that names a
// key wins and its entry is taken whole, never field by field;
// current-context comes from the first file that sets one. Each entry keeps
// the file it came from, for error messages.
type mergedKubeconfig struct {
	CurrentContext     string
	CurrentContextFile string
	Clusters           map[string]fromFile[kubeCluster]
	Users              map[string]fromFile[kubeUser]
	Contexts           map[string]fromFile[kubeContext]
	Files              []string // the files merged, highest precedence first
}

// fromFile is a kubeconfig entry and the file that defined it.
type fromFile[T any] struct {
	File  string
	Value T
}

func newMergedKubeconfig() *mergedKubeconfig {
	return &mergedKubeconfig{
		Clusters: map[string]fromFile[kubeCluster]{},
		Users:    map[string]fromFile[kubeUser]{},
		Contexts: map[string]fromFile[kubeContext]{},
	}
}

// add merges in a file of lower precedence than every file added before.
// A name repeated inside one file is an error, as it is for kubectl: which
// entry was meant cannot be known.
func (m *mergedKubeconfig) add(path string, kc *kubeconfigFile) error {
	if m.CurrentContext == "" && kc.CurrentContext != "" {
		m.CurrentContext, m.CurrentContextFile = kc.CurrentContext, path
	}
	seen := map[string]bool{}
	dup := func(kind, name string) error {
		key := kind + "/" + name
		if seen[key] {
			return fmt.Errorf("kubeconfig: kubeconfig %s: %s %q is listed twice: %w", path, kind, name, rest.ErrInvalidConfig)
		}
		seen[key] = true
		return nil
	}
	for _, c := range kc.Clusters {
		if err := dup("cluster", c.Name); err != nil {
			return err
		}
		addFirst(m.Clusters, c.Name, fromFile[kubeCluster]{path, c.Cluster})
	}
	for _, u := range kc.Users {
		if err := dup("user", u.Name); err != nil {
			return err
		}
		addFirst(m.Users, u.Name, fromFile[kubeUser]{path, u.User})
	}
	for _, c := range kc.Contexts {
		if err := dup("context", c.Name); err != nil {
			return err
		}
		addFirst(m.Contexts, c.Name, fromFile[kubeContext]{path, c.Context})
	}
	m.Files = append(m.Files, path)
	return nil
}

// addFirst stores v under k unless an earlier file already did.
func addFirst[T any](m map[string]T, k string, v T) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// empty reports whether the merged files define nothing at all; kubectl
// then falls back to the in-cluster configuration.
func (m *mergedKubeconfig) empty() bool {
	return m.CurrentContext == "" && len(m.Clusters) == 0 && len(m.Users) == 0 && len(m.Contexts) == 0
}

// resolve turns one context ("" = current-context) into what Load returns.
func (m *mergedKubeconfig) resolve(context string) (Loaded, error) {
	where := fmt.Sprint(m.Files)
	if len(m.Files) == 1 {
		where = m.Files[0]
	}
	if context == "" {
		context = m.CurrentContext
	}
	if context == "" {
		return Loaded{}, fmt.Errorf("kubeconfig: kubeconfig %s: no context given and no current-context: %w", where, rest.ErrInvalidConfig)
	}
	ctx, ok := m.Contexts[context]
	if !ok {
		return Loaded{}, fmt.Errorf("kubeconfig: kubeconfig %s: context %q not found: %w", where, context, rest.ErrInvalidConfig)
	}
	ref := ctx.Value
	cl, ok := m.Clusters[ref.Cluster]
	if !ok {
		return Loaded{}, fmt.Errorf("kubeconfig: kubeconfig %s: cluster %q of context %q not found: %w", ctx.File, ref.Cluster, context, rest.ErrInvalidConfig)
	}
	var cfg rest.Config
	cl.Value.applyTo(&cfg)
	if ref.User != "" { // no user: anonymous access
		u, ok := m.Users[ref.User]
		if !ok {
			return Loaded{}, fmt.Errorf("kubeconfig: kubeconfig %s: user %q of context %q not found: %w", ctx.File, ref.User, context, rest.ErrInvalidConfig)
		}
		if err := u.Value.applyTo(&cfg, &cl.Value, u.File, ref.User); err != nil {
			return Loaded{}, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return Loaded{}, fmt.Errorf("kubeconfig: kubeconfig %s, context %q: %w", where, context, err)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = "default" // kubectl's default when the context names none
	}
	return Loaded{Config: cfg, Namespace: ns, Context: context, Files: m.Files}, nil
}
