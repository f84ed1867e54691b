package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Foo asks for a Deployment: its name and its number of replicas. Its
// status reports how many of the Deployment's replicas are available.
type Foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FooSpec   `json:"spec"`
	Status            FooStatus `json:"status"`
}

// FooSpec is what a Foo asks for.
type FooSpec struct {
	// DeploymentName names the Deployment the Foo owns, in its namespace.
	DeploymentName string `json:"deploymentName"`
	// Replicas is the Deployment's replica count; nil leaves it to the
	// Deployment's default (1).
	Replicas *int32 `json:"replicas,omitempty"`
}

// FooStatus is what the controller observed.
type FooStatus struct {
	// AvailableReplicas is the Deployment's status.availableReplicas.
	AvailableReplicas int32 `json:"availableReplicas"`
}

// FooList is a list of Foos, as the API server returns them.
type FooList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Foo `json:"items"`
}
