package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestFieldValidation(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL() + "/api/v1/namespaces/default/configmaps"
	body := func(name string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"a":"b"},"dta":{"x":"y"}}`
	}
	code, respBody, _ := do(t, http.MethodPost, base+"?fieldValidation=Strict", mediaJSON, body("strict"))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, decodeStatus(t, respBody).Message, `strict decoding error: unknown field "dta"`)

	code, _, header := do(t, http.MethodPost, base, mediaJSON, body("warned"))
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, []string{`299 - "unknown field \"dta\""`}, header.Values("Warning"), "Warn is the default")

	code, _, header = do(t, http.MethodPost, base+"?fieldValidation=Ignore", mediaYAML, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\nextra: 1\n")
	require.Equal(t, http.StatusCreated, code)
	require.Empty(t, header.Values("Warning"))

	code, respBody, _ = do(t, http.MethodPatch, base+"/warned?fieldValidation=Strict", mediaMerge, `{"zzz":1}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%s", respBody)
	code, _, _ = do(t, http.MethodPost, base+"?fieldValidation=Loose", mediaJSON, body("bad"))
	require.Equal(t, http.StatusUnprocessableEntity, code)

	objs, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("configmaps"))
	require.NoError(t, err)
	require.Len(t, objs, 2, "the refused writes stored nothing")
}
