package main

import "k8s.io/apimachinery/pkg/runtime"

// DeepCopyInto copies f into out; nothing of out is shared with f.
func (f *Foo) DeepCopyInto(out *Foo) {
	*out = *f
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if f.Spec.Replicas != nil {
		n := *f.Spec.Replicas
		out.Spec.Replicas = &n
	}
}

// DeepCopy returns a copy of f that shares nothing with it.
func (f *Foo) DeepCopy() *Foo {
	out := new(Foo)
	f.DeepCopyInto(out)
	return out
}

// DeepCopyObject is runtime.Object's copy.
func (f *Foo) DeepCopyObject() runtime.Object { return f.DeepCopy() }

// DeepCopyObject is runtime.Object's copy.
func (l *FooList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Foo, len(l.Items))
	for i := range l.Items {
		l.Items[i].DeepCopyInto(&out.Items[i])
	}
	return &out
}
