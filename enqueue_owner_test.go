package informer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/workqueue"
)

// drain takes every ready key from q, in order.
func drain(q *workqueue.Queue[string]) []string {
	var keys []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		keys = append(keys, k)
	}
	return keys
}

func ownedPod(name string, refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, OwnerReferences: refs}}
}

func ref(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(controller)}
}

// Only the controlling owner of the right group and kind is enqueued, in
// the object's namespace, or by name alone when the owner is
// cluster-scoped; an owner change enqueues both owners.
func TestEnqueueOwner(t *testing.T) {
	rs := apiresource.Guess(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	q := &workqueue.Queue[string]{}
	h := informer.EnqueueOwner[*corev1.Pod](q, rs)

	h.OnAdd(ownedPod("a", ref("apps/v1", "ReplicaSet", "web-1", true)), false)
	h.OnAdd(ownedPod("b", ref("apps/v1", "ReplicaSet", "not-controller", false)), false)
	h.OnAdd(ownedPod("c", ref("example.com/v1", "ReplicaSet", "other-group", true)), false)
	h.OnAdd(ownedPod("d", ref("apps/v1", "StatefulSet", "other-kind", true)), false)
	h.OnAdd(ownedPod("e"), false)
	h.OnDelete(ownedPod("f", ref("apps/v1beta2", "ReplicaSet", "web-2", true)), false)
	assert.Equal(t, []string{"shop/web-1", "shop/web-2"}, drain(q))

	adopted := ownedPod("a", ref("apps/v1", "ReplicaSet", "web-3", true))
	h.OnUpdate(ownedPod("a", ref("apps/v1", "ReplicaSet", "web-1", true)), adopted)
	assert.Equal(t, []string{"shop/web-3", "shop/web-1"}, drain(q))
	h.OnUpdate(adopted, adopted)
	assert.Equal(t, []string{"shop/web-3"}, drain(q))
	h.OnUpdate(adopted, ownedPod("a"))
	assert.Equal(t, []string{"shop/web-3"}, drain(q), "released: the old owner hears of it")

	roles := informer.EnqueueOwner[*rbacv1.RoleBinding](q, apiresource.Resource{
		Kind: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), Plural: "clusterroles", ClusterScoped: true})
	roles.OnAdd(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "rb",
		OwnerReferences: []metav1.OwnerReference{ref("rbac.authorization.k8s.io/v1", "ClusterRole", "admin", true)}}}, false)
	assert.Equal(t, []string{"admin"}, drain(q))
}

// EnqueueMapped enqueues every key of the old and new object.
func TestEnqueueMapped(t *testing.T) {
	q := &workqueue.Queue[string]{}
	h := informer.EnqueueMapped(q, func(cm *corev1.ConfigMap) []string {
		if app := cm.Labels["app"]; app != "" {
			return []string{cm.Namespace + "/" + app}
		}
		return nil
	})
	cm := func(app string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cfg", Labels: map[string]string{"app": app}}}
	}
	h.OnAdd(cm("web"), true)
	h.OnAdd(cm(""), false)
	assert.Equal(t, []string{"shop/web"}, drain(q))
	h.OnUpdate(cm("web"), cm("api"))
	assert.Equal(t, []string{"shop/web", "shop/api"}, drain(q))
	h.OnDelete(cm("api"), false)
	assert.Equal(t, []string{"shop/api"}, drain(q))
}
