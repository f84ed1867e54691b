package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/seed31a95821/informer/fakeapi"
)

// maxCRDFileBytes bounds a -crd file: a CRD with a large schema is a few
// hundred kilobytes.
const maxCRDFileBytes = 16 << 20

// crdFiles is the repeatable -crd flag.
type crdFiles []string

func (f *crdFiles) String() string { return fmt.Sprint([]string(*f)) }

func (f *crdFiles) Set(path string) error {
	*f = append(*f, path)
	return nil
}

// registerCRDFlag adds -crd to the command line.
func registerCRDFlag(fs *flag.FlagSet, files *crdFiles) {
	fs.Var(files, "crd", "a YAML or JSON file of CustomResourceDefinitions to serve (repeatable; documents separated by ---)")
}

// serveCRDs creates the CRDs of every file, so that their custom
// resources are served from the start, as if applied with kubectl.
func serveCRDs(srv *fakeapi.Server, files crdFiles) error {
	for _, path := range files {
		n, err := serveCRDFile(srv, path)
		if err != nil {
			return fmt.Errorf("-crd %s: %w", path, err)
		}
		if n == 0 {
			return fmt.Errorf("-crd %s: no CustomResourceDefinition in the file", path)
		}
	}
	return nil
}

func serveCRDFile(srv *fakeapi.Server, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(io.LimitReader(f, maxCRDFileBytes), 4096)
	n := 0
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		if len(doc) == 0 {
			continue // an empty document between separators
		}
		obj := &unstructured.Unstructured{Object: doc}
		if gvk := obj.GroupVersionKind(); gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
			return n, fmt.Errorf("document %d is a %s, not a CustomResourceDefinition", n+1, gvk)
		}
		if _, err := srv.Create(obj); err != nil {
			return n, fmt.Errorf("%s: %w", obj.GetName(), err)
		}
		n++
	}
}
