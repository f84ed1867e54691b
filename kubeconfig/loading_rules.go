package kubeconfig

import (
	"errors"
	"fmt"
	"github.com/seed31a95821/informer/rest"
	"io/fs"
	"os"
	"path/filepath"
)

// Loaded is what the loading rules found: the rest.Config that reaches the
// cluster, plus what kubectl also takes from a kubeconfig.
type Loaded struct {
	Config rest.Config
	// Namespace is the context's namespace, "default" when the context names
	// none (kubectl's rule); in a pod, the pod's own namespace.
	Namespace string
	// Context is the name of the context used; "" for in-cluster.
	Context string
	// Files are the kubeconfig files merged, highest precedence first; nil
	// for in-cluster.
	Files []string
	// InCluster reports that no kubeconfig was found and the pod's service
	// account was used.
	InCluster bool
}

// LoadingRules say where to find the configuration, in kubectl's order:
//
//  1. ExplicitPath (kubectl --kubeconfig): exactly that file, which must exist;
//  2. else Paths, or when Paths is nil the $KUBECONFIG list (":"-separated
//     on Unix): every file that exists, merged (see below); missing ones are
//     skipped, as kubectl skips them;
//  3. else ~/.kube/config when it exists;
//  4. else, when nothing above defined anything, the in-cluster
//     configuration (see InCluster).
//
// Merging: in clusters, users and contexts the first file that names an
// entry wins and its entry is taken whole; current-context comes from the
// first file that sets one. Relative paths inside a file are relative to
// that file's directory.
//
// The zero value applies kubectl's rules to the process environment. QPS and
// Burst are left at their defaults (zero).
type LoadingRules struct {
	// ExplicitPath, when set, is the only file read.
	ExplicitPath string
	// Paths replaces $KUBECONFIG when non-nil. When every file in it is
	// missing, Load fails (no fallback): the caller asked for these files.
	Paths []string
	// Context selects a context by name (kubectl --context); "" means the
	// merged current-context.
	Context string

	// Getenv reads KUBECONFIG, HOME and the in-cluster variables; nil means
	// os.Getenv. Tests inject their own so as never to see the machine's.
	Getenv func(string) string
	// InCluster says where the service-account files are (Dir); its own
	// Getenv defaults to the one above.
	InCluster InCluster
}

// Load applies the rules and returns the selected context's rest.Config, already
// validated. Errors wrap ErrNoConfig (nothing found anywhere),
// ErrUnsupported (an unsupported field, named), rest.ErrInvalidConfig (a
// contradictory file or an unknown context) or the file system's error.
func (r LoadingRules) Load() (Loaded, error) {
	getenv := r.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	files, mustExist, err := r.candidates(getenv)
	if err != nil {
		return Loaded{}, err
	}
	merged := newMergedKubeconfig()
	for _, path := range files {
		kc, err := readKubeconfigFile(path)
		if errors.Is(err, fs.ErrNotExist) && !mustExist {
			continue
		}
		if err != nil {
			return Loaded{}, err
		}
		if err := merged.add(path, kc); err != nil {
			return Loaded{}, err
		}
	}
	if len(merged.Files) == 0 && r.Paths != nil {
		return Loaded{}, fmt.Errorf("kubeconfig: none of the kubeconfig files %v exists: %w", r.Paths, fs.ErrNotExist)
	}
	if merged.empty() && r.Context == "" {
		return r.inCluster(getenv, files)
	}
	return merged.resolve(r.Context)
}

// candidates lists the files to read, highest precedence first, and whether
// a missing one is an error.
func (r LoadingRules) candidates(getenv func(string) string) (files []string, mustExist bool, err error) {
	switch {
	case r.ExplicitPath != "":
		return []string{r.ExplicitPath}, true, nil
	case r.Paths != nil:
		return nonEmpty(r.Paths), false, nil
	case getenv("KUBECONFIG") != "":
		return nonEmpty(filepath.SplitList(getenv("KUBECONFIG"))), false, nil
	}
	home := getenv("HOME")
	if home == "" {
		return nil, false, nil // nowhere to look: straight to in-cluster
	}
	return []string{filepath.Join(home, ".kube", "config")}, false, nil
}

// nonEmpty drops the empty entries "a::b" or a trailing ":" leave.
func nonEmpty(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// inCluster is the last resort. Outside a pod the error says where we
// looked, since "not in a cluster" alone would hide the missing kubeconfig.
func (r LoadingRules) inCluster(getenv func(string) string, looked []string) (Loaded, error) {
	ic := r.InCluster
	if ic.Getenv == nil {
		ic.Getenv = getenv
	}
	l, err := ic.Load()
	if errors.Is(err, ErrNotInCluster) {
		return Loaded{}, fmt.Errorf("%w: no kubeconfig among %v, and %w", ErrNoConfig, looked, err)
	}
	return l, err
}

// LoadKubeconfig reads the kubeconfig file at path and returns the rest.Config of
// its current context. See LoadKubeconfigContext.
func LoadKubeconfig(path string) (rest.Config, error) {
	return LoadKubeconfigContext(path, "")
}

// LoadKubeconfigContext reads the one kubeconfig file at path and returns
// the rest.Config of the named context ("" = the file's current-context), as
// LoadingRules{ExplicitPath: path, Context: context} does. Use LoadingRules
// for $KUBECONFIG lists, the default path, the context's namespace and the
// in-cluster fallback.
func LoadKubeconfigContext(path, context string) (rest.Config, error) {
	if path == "" {
		return rest.Config{}, fmt.Errorf("kubeconfig: reading kubeconfig: no path given: %w", fs.ErrNotExist)
	}
	l, err := LoadingRules{ExplicitPath: path, Context: context}.Load()
	return l.Config, err
}
