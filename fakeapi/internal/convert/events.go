package convert

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kinds of the two versions of an Event.
var (
	CoreEventKind   = corev1.SchemeGroupVersion.WithKind("Event")
	EventsEventKind = eventsv1.SchemeGroupVersion.WithKind("Event")
)

// EventToCore converts an events.k8s.io/v1 Event to the core/v1 Event the
// server stores, as the real conversion does: note is message, regarding is
// involvedObject, deprecatedSource is source, the deprecated timestamps and
// count are firstTimestamp, lastTimestamp and count; the other fields keep
// their names. in is not modified.
func EventToCore(in *eventsv1.Event) *corev1.Event {
	in = in.DeepCopy()
	out := &corev1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: CoreEventKind.GroupVersion().String(), Kind: CoreEventKind.Kind},
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Related:             in.Related,
		Action:              in.Action,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}

// EventFromCore converts a stored core/v1 Event to events.k8s.io/v1, the
// inverse of EventToCore. in is not modified.
func EventFromCore(in *corev1.Event) *eventsv1.Event {
	in = in.DeepCopy()
	out := &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{APIVersion: EventsEventKind.GroupVersion().String(), Kind: EventsEventKind.Kind},
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}
