package fakeapi

import (
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed31a95821/informer/apiresource"
)

// Reviews are the create-only resources of authorization.k8s.io/v1 and
// authentication.k8s.io/v1: a client POSTs a question (may this user do
// that? who am I? whose token is this?) and gets the same object back,
// 201 Created, with its status answered. Nothing is stored and nothing can
// be listed, read or watched: every other method is 405, as on the real
// server. kubectl auth can-i and kubectl auth whoami are such clients.
//
// The answers follow from what this server is: it has no authorization,
// so every access review answers allowed, and says why in its reason; and
// it knows one identity, AdminUser, the user every request is made as.

// AdminUser is who every request to the server is, as far as it can tell:
// SelfSubjectReview answers with this user, in the groups system:masters
// and system:authenticated (a cluster administrator's), and so does a
// TokenReview of Options.Token.
const AdminUser = "fakeapi-admin"

// adminGroups are AdminUser's groups: those of a cluster administrator.
func adminGroups() []string { return []string{"system:masters", "system:authenticated"} }

// allowedReason is the reason every access review gives.
const allowedReason = "fakeapi has no authorization: every request is allowed"

// reviewFunc answers a review: obj is the decoded body, the answer is what
// the client gets back.
type reviewFunc func(s *Server, req requestInfo, obj runtime.Object) (runtime.Object, error)

// reviewResources are the reviews the server answers, those of its scheme.
func reviewResources(scheme *runtime.Scheme) []*resourceInfo {
	kinds := []struct {
		kind   schema.GroupVersionKind
		review reviewFunc
	}{
		{authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview"), reviewSelfAccess},
		{authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectRulesReview"), reviewSelfRules},
		{authorizationv1.SchemeGroupVersion.WithKind("SubjectAccessReview"), reviewAccess},
		{authorizationv1.SchemeGroupVersion.WithKind("LocalSubjectAccessReview"), reviewLocalAccess},
		{authenticationv1.SchemeGroupVersion.WithKind("TokenReview"), reviewToken},
		{authenticationv1.SchemeGroupVersion.WithKind("SelfSubjectReview"), reviewSelf},
	}
	var out []*resourceInfo
	for _, k := range kinds {
		if !scheme.Recognizes(k.kind) {
			continue
		}
		r := ServedResource{Resource: apiresource.Guess(k.kind)}
		out = append(out, &resourceInfo{ServedResource: r, gvr: r.GVR(), review: k.review, protobuf: true,
			fieldLabels: map[string]bool{}})
	}
	return out
}

// serveReview answers a POST on a review's collection.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, req requestInfo) {
	switch {
	case req.name != "":
		// A review has no objects, so no object paths.
		s.writeError(w, r, notFoundPath())
		return
	case req.verb != verbCreate:
		s.writeError(w, r, methodNotAllowed())
		return
	}
	enc, err := s.negotiateResource(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, err := s.decodeObject(r, req)
	if err == nil {
		obj, err = req.res.review(s, req, obj)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj.GetObjectKind().SetGroupVersionKind(req.res.Kind)
	s.writeObject(w, r, enc, http.StatusCreated, obj)
}

// allowed is the status of every access review.
func allowed() authorizationv1.SubjectAccessReviewStatus {
	return authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: allowedReason}
}

func reviewSelfAccess(_ *Server, req requestInfo, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.SelfSubjectAccessReview)
	errs := emptyMeta(sar.ObjectMeta, false)
	errs = append(errs, oneAttributeSet(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(req.res.Kind.GroupKind(), "", errs)
	}
	sar.Status = allowed()
	return sar, nil
}

func reviewAccess(_ *Server, req requestInfo, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.SubjectAccessReview)
	errs := emptyMeta(sar.ObjectMeta, false)
	errs = append(errs, subjectRules(sar.Spec)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(req.res.Kind.GroupKind(), "", errs)
	}
	sar.Status = allowed()
	return sar, nil
}

func reviewLocalAccess(_ *Server, req requestInfo, obj runtime.Object) (runtime.Object, error) {
	sar := obj.(*authorizationv1.LocalSubjectAccessReview)
	if a := sar.Spec.ResourceAttributes; a != nil && a.Namespace == "" {
		a.Namespace = req.namespace // "if empty, it is defaulted"
	}
	if a := sar.Spec.ResourceAttributes; a != nil && a.Namespace != req.namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", req.namespace))
	}
	errs := emptyMeta(sar.ObjectMeta, true)
	errs = append(errs, subjectRules(sar.Spec)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(req.res.Kind.GroupKind(), "", errs)
	}
	sar.Status = allowed()
	return sar, nil
}

func reviewSelfRules(_ *Server, _ requestInfo, obj runtime.Object) (runtime.Object, error) {
	rr := obj.(*authorizationv1.SelfSubjectRulesReview)
	if rr.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	// The rules of cluster-admin: anything, anywhere.
	rr.Status = authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
	return rr, nil
}

func reviewToken(s *Server, _ requestInfo, obj runtime.Object) (runtime.Object, error) {
	tr := obj.(*authenticationv1.TokenReview)
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	// The one token the server knows is Options.Token (none when it is
	// unset); the comparison is authorized's, in constant time.
	if s.opts.Token != "" && s.tokenMatches(tr.Spec.Token) {
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: tr.Spec.Audiences,
			User: authenticationv1.UserInfo{Username: AdminUser, Groups: adminGroups()}}
		return tr, nil
	}
	tr.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
	return tr, nil
}

func reviewSelf(_ *Server, _ requestInfo, obj runtime.Object) (runtime.Object, error) {
	sr := obj.(*authenticationv1.SelfSubjectReview)
	sr.Status.UserInfo = authenticationv1.UserInfo{Username: AdminUser, Groups: adminGroups()}
	return sr, nil
}

// emptyMeta is the real server's rule that a review's metadata says
// nothing (but, for a local review, its namespace).
func emptyMeta(m metav1.ObjectMeta, local bool) field.ErrorList {
	msg := "must be empty"
	if local {
		m.Namespace = ""
		msg = "must be empty except for namespace"
	}
	if equality.Semantic.DeepEqual(metav1.ObjectMeta{}, m) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, msg)}
}

// oneAttributeSet is the rule that an access review asks about exactly
// one of a resource and a non-resource URL.
func oneAttributeSet(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) field.ErrorList {
	spec := field.NewPath("spec")
	switch {
	case res != nil && nonRes != nil:
		return field.ErrorList{field.Invalid(spec.Child("nonResourceAttributes"), nonRes, "cannot be specified in combination with resourceAttributes")}
	case res == nil && nonRes == nil:
		return field.ErrorList{field.Invalid(spec.Child("resourceAttributes"), nonRes, "exactly one of nonResourceAttributes or resourceAttributes must be specified")}
	}
	return nil
}

// subjectRules are the rules of a review about another subject: one
// attribute set, and a user or a group to ask about.
func subjectRules(spec authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	errs := oneAttributeSet(spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified"))
	}
	return errs
}
