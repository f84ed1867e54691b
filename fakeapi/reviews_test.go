package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

const (
	ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	sar  = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	lsar = "/apis/authorization.k8s.io/v1/namespaces/ns/localsubjectaccessreviews"
	ssrr = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
	tr   = "/apis/authentication.k8s.io/v1/tokenreviews"
	ssr  = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
)

// reviewOf posts a review and decodes the 201 answer.
func reviewOf(t *testing.T, srv *Server, path, body string, into any) {
	t.Helper()
	code, out, _ := do(t, http.MethodPost, srv.URL()+path, "application/json", body)
	require.Equal(t, http.StatusCreated, code, "%s", out)
	require.NoError(t, json.Unmarshal(out, into))
}

// Every access review is allowed, and says why; the answer is the
// question with its status filled in, and nothing is stored.
func TestAccessReviewsAreAllowed(t *testing.T) {
	srv := startServer(t, Options{})
	var self authorizationv1.SelfSubjectAccessReview
	reviewOf(t, srv, ssar, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
		"spec":{"resourceAttributes":{"verb":"create","resource":"pods","namespace":"ns"}}}`, &self)
	assert.True(t, self.Status.Allowed)
	assert.Equal(t, allowedReason, self.Status.Reason)
	assert.Equal(t, "pods", self.Spec.ResourceAttributes.Resource)
	assert.Equal(t, "SelfSubjectAccessReview", self.Kind)

	var other authorizationv1.SubjectAccessReview
	reviewOf(t, srv, sar, `{"spec":{"user":"bob","nonResourceAttributes":{"path":"/healthz","verb":"get"}}}`, &other)
	assert.True(t, other.Status.Allowed)

	var local authorizationv1.LocalSubjectAccessReview
	reviewOf(t, srv, lsar, `{"spec":{"groups":["dev"],"resourceAttributes":{"verb":"get","resource":"pods"}}}`, &local)
	assert.True(t, local.Status.Allowed)
	assert.Equal(t, "ns", local.Namespace)
	assert.Equal(t, "ns", local.Spec.ResourceAttributes.Namespace, "defaulted from the URL")

	var rules authorizationv1.SelfSubjectRulesReview
	reviewOf(t, srv, ssrr, `{"spec":{"namespace":"ns"}}`, &rules)
	require.Len(t, rules.Status.ResourceRules, 1)
	assert.Equal(t, []string{"*"}, rules.Status.ResourceRules[0].Verbs)
	assert.Equal(t, uint64(0), srv.ResourceVersion(), "a review stores nothing")
}

// Malformed reviews get the real server's answers: 422 for a spec that
// breaks the rules, 400 for what the REST layer refuses, 405 for any
// method but POST.
func TestReviewErrors(t *testing.T) {
	srv := startServer(t, Options{})
	post := func(path, body string) error {
		_, err := send(t, srv, http.MethodPost, path, "", body)
		return err
	}
	assert.True(t, apierrors.IsInvalid(post(ssar, `{"spec":{}}`)), "one of the attributes is required")
	assert.True(t, apierrors.IsInvalid(post(sar, `{"spec":{"resourceAttributes":{"verb":"get"}}}`)), "a user or a group is required")
	assert.True(t, apierrors.IsInvalid(post(ssar, `{"metadata":{"name":"x"},"spec":{"resourceAttributes":{}}}`)), "metadata must be empty")
	assert.True(t, apierrors.IsBadRequest(post(lsar, `{"spec":{"user":"u","resourceAttributes":{"namespace":"other"}}}`)))
	assert.True(t, apierrors.IsBadRequest(post(ssrr, `{"spec":{}}`)), "no namespace on request")
	assert.True(t, apierrors.IsBadRequest(post(tr, `{"spec":{}}`)), "token is required")

	for _, path := range []string{ssar, tr, ssr} {
		_, err := send(t, srv, http.MethodGet, path, "", "")
		assert.True(t, apierrors.IsMethodNotSupported(err), "%s: %v", path, err)
	}
	_, err := send(t, srv, http.MethodDelete, ssar, "", "")
	assert.True(t, apierrors.IsMethodNotSupported(err), "%v", err)
	code, _, _ := do(t, http.MethodGet, srv.URL()+ssar+"/x", "", "")
	assert.Equal(t, http.StatusNotFound, code, "a review has no object paths")
	_, err = srv.Objects(authorizationv1.SchemeGroupVersion.WithResource("selfsubjectaccessreviews"))
	assert.ErrorIs(t, err, ErrNotServed)
}

// The server's one identity: SelfSubjectReview answers AdminUser, and a
// TokenReview authenticates Options.Token and nothing else.
func TestAuthenticationReviews(t *testing.T) {
	srv := startServer(t, Options{})
	var self authenticationv1.SelfSubjectReview
	reviewOf(t, srv, ssr, `{}`, &self)
	assert.Equal(t, AdminUser, self.Status.UserInfo.Username)
	assert.Contains(t, self.Status.UserInfo.Groups, "system:masters")

	var review authenticationv1.TokenReview
	reviewOf(t, srv, tr, `{"spec":{"token":"anything"}}`, &review)
	assert.False(t, review.Status.Authenticated, "a server without a token knows none")
	assert.NotEmpty(t, review.Status.Error)

	secured := startServer(t, Options{Token: "s3cret"})
	post := func(token string) authenticationv1.TokenReview {
		code, out, _ := do(t, http.MethodPost, secured.URL()+tr, "application/json",
			`{"spec":{"token":"`+token+`","audiences":["api"]}}`, "Authorization", "Bearer s3cret")
		require.Equal(t, http.StatusCreated, code, "%s", out)
		var r authenticationv1.TokenReview
		require.NoError(t, json.Unmarshal(out, &r))
		return r
	}
	good := post("s3cret")
	assert.True(t, good.Status.Authenticated)
	assert.Equal(t, AdminUser, good.Status.User.Username)
	assert.Equal(t, []string{"api"}, good.Status.Audiences)
	assert.False(t, post("guess").Status.Authenticated)
}

// Reviews are in aggregated discovery with the one verb they have.
func TestReviewsInDiscovery(t *testing.T) {
	srv := startServer(t, Options{})
	code, body, _ := do(t, http.MethodGet, srv.URL()+"/apis", "", "",
		"Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	require.Equal(t, http.StatusOK, code)
	var list apidiscoveryv2.APIGroupDiscoveryList
	require.NoError(t, json.Unmarshal(body, &list))
	scopes := map[string]apidiscoveryv2.ResourceScope{}
	for _, g := range list.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				if g.Name == "authorization.k8s.io" || g.Name == "authentication.k8s.io" {
					assert.Equal(t, []string{"create"}, r.Verbs, r.Resource)
					scopes[r.Resource] = r.Scope
				}
			}
		}
	}
	assert.Equal(t, map[string]apidiscoveryv2.ResourceScope{
		"selfsubjectaccessreviews": apidiscoveryv2.ScopeCluster, "selfsubjectrulesreviews": apidiscoveryv2.ScopeCluster,
		"subjectaccessreviews": apidiscoveryv2.ScopeCluster, "localsubjectaccessreviews": apidiscoveryv2.ScopeNamespace,
		"tokenreviews": apidiscoveryv2.ScopeCluster, "selfsubjectreviews": apidiscoveryv2.ScopeCluster,
	}, scopes)
}
