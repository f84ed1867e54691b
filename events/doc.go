// Package events records Kubernetes Events about objects, the way
// `kubectl describe` shows them, with the behaviour client-go's recorder is
// trusted for and none of its broadcaster plumbing:
//
//	rec.Eventf(pod, corev1.EventTypeWarning, "FailedSync", "image %q not found", image)
//	  |  never blocks: a bounded queue, a full queue drops and counts
//	  v
//	Run (one goroutine) --> spam filter --> aggregation --> create or patch an Event
//
// # What reaches the server
//
//   - Aggregation: events with the same source, involved object, type,
//     reason and message are one Event object whose count grows. The
//     first is created; each repeat within ten minutes is a patch that
//     bumps the count (series.count in events.k8s.io/v1, count in core/v1).
//     A burst of 20 identical events is one Event with count 20.
//   - Similar events: when one object gets events of one type and reason
//     with ten different messages within ten minutes, the tenth and later
//     ones are counted on one Event whose message starts "(combined from
//     similar events): " and shows the latest.
//   - Spam filter: a token bucket per involved object (the recorder is one
//     source). SpamBurst (25) events at once, then one per SpamRefill (5
//     minutes); the rest are dropped and counted in Stats.Filtered.
//   - Never blocking: Eventf puts the event on a queue of QueueSize (1000)
//     and returns; when the queue is full it drops the event, counts it in
//     Stats.Dropped, and does not even format the message. A stalled API
//     server costs events, never the caller's time.
//   - Writes: one at a time, a few tries each (the pause doubling, each
//     try bounded), then given up and counted in Stats.Failed.
//   - API: events.k8s.io/v1 Events; when the server answers that it does
//     not serve that group (404 for the resource), core/v1 Events from then
//     on. The real API server shows either through both APIs, so kubectl
//     get events and kubectl describe list them. kubectl describe shows the
//     count of both ("x6 over 2m"); kubectl get events only a core/v1
//     Event's, since the column it reads (count) is one that
//     events.k8s.io/v1 does not let an update change. fakeapi serves
//     both, one object in two versions, as the real server does.
//
// The decisions (filter, aggregate) are a state machine with time as an
// input (correlator.go), tested without a network; the writer
// (writer.go) is the only part that talks to the server.
package events
