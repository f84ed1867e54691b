// Package convert holds the conversions between two versions of one stored
// resource that kube-apiserver serves side by side, and the rules it checks
// only when a write arrives through one of them.
//
// # What it imitates
//
// The real server stores an object once, in its storage version, and shows
// it through every version of its API, converting on the way in and out
// through an internal type. Two such pairs matter to clients:
//
//   - core/v1 Events and events.k8s.io/v1 Events (events.go): one Event,
//     written by a recorder through either API and listed by kubectl get
//     events through core/v1. The fields are renamed (message is note,
//     involvedObject is regarding, source is deprecatedSource...); nothing
//     is lost either way. A create through events.k8s.io/v1 is checked
//     more strictly than one through core/v1 (eventvalidation.go).
//   - autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscalers (hpa.go):
//     v1 has one metric, a target CPU utilization; everything else travels
//     in annotations, in the JSON the real server writes, so that a client
//     that reads v1 and writes it back loses nothing.
//
// The functions convert directly between the two external versions rather
// than through an internal type, which this module does not have; each says
// which rule of the real conversion it follows.
//
// # Its place
//
// It is one of fakeapi's fidelity packages, and knows nothing of the
// server. Pairs (pairs.go) is the one list of the pairs: fakeapi's views.go
// serves each as a second version of a stored resource (a view), and
// fakeapi/internal/apply's field managers convert through it.
package convert
