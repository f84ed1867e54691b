package convert

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The real server checks an Event on the stored (internal) shape, so its
// error paths name core/v1's fields (message, firstTimestamp, source) even
// for a write through events.k8s.io/v1. Writes through core/v1 keep the
// loose rules of old clients; writes through events.k8s.io/v1 get the
// strict ones below too.

// Limits of the real server on an Event's strings.
const (
	maxReportingInstance = 128
	maxAction            = 128
	maxReason            = 128
	maxNote              = 1024
)

// ValidateEventsV1Create checks an Event created through events.k8s.io/v1,
// given in its stored shape: the rules every Event with an eventTime
// meets (reportingController, reportingInstance, action and reason set,
// lengths bounded), then the strict ones of the new API: eventTime set,
// type Normal or Warning, a series of at least two, and none of the
// deprecated fields set.
func ValidateEventsV1Create(ev *corev1.Event) field.ErrorList {
	errs := eventRules(ev)
	errs = append(errs, seriesRules(ev)...)
	if ev.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	unset := func(name string, set bool) {
		if set {
			errs = append(errs, field.Invalid(field.NewPath(name), "", "needs to be unset"))
		}
	}
	unset("firstTimestamp", !ev.FirstTimestamp.IsZero())
	unset("lastTimestamp", !ev.LastTimestamp.IsZero())
	unset("count", ev.Count != 0)
	unset("source", ev.Source.Component != "" || ev.Source.Host != "")
	return errs
}

// ValidateEventsV1Update checks an update through events.k8s.io/v1: the
// rules of a create that every Event meets, a changed series checked
// again, and every other field of the Event immutable.
func ValidateEventsV1Update(ev, old *corev1.Event) field.ErrorList {
	errs := eventRules(ev)
	if !reflect.DeepEqual(ev.Series, old.Series) {
		errs = append(errs, seriesRules(ev)...)
	}
	immutable := []struct {
		path     string
		new, old any
	}{
		{"involvedObject", ev.InvolvedObject, old.InvolvedObject},
		{"reason", ev.Reason, old.Reason},
		{"message", ev.Message, old.Message},
		{"source", ev.Source, old.Source},
		{"firstTimestamp", ev.FirstTimestamp, old.FirstTimestamp},
		{"lastTimestamp", ev.LastTimestamp, old.LastTimestamp},
		{"count", ev.Count, old.Count},
		{"type", ev.Type, old.Type},
		{"eventTime", ev.EventTime, old.EventTime},
		{"action", ev.Action, old.Action},
		{"related", ev.Related, old.Related},
		{"reportingController", ev.ReportingController, old.ReportingController},
		{"reportingInstance", ev.ReportingInstance, old.ReportingInstance},
	}
	for _, f := range immutable {
		errs = append(errs, apivalidation.ValidateImmutableField(f.new, f.old, field.NewPath(f.path))...)
	}
	return errs
}

// eventRules are the rules of the real server's legacy Event validation
// for an Event with an eventTime, the only kind events.k8s.io/v1 accepts.
func eventRules(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if ev.EventTime.IsZero() {
		return nil // the strict rules report it
	}
	if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ev.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if ev.ReportingController == "" {
		errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
	}
	for _, msg := range validation.IsQualifiedName(ev.ReportingController) {
		errs = append(errs, field.Invalid(field.NewPath("reportingController"), ev.ReportingController, msg))
	}
	errs = append(errs, requiredBounded("reportingInstance", ev.ReportingInstance, maxReportingInstance)...)
	errs = append(errs, requiredBounded("action", ev.Action, maxAction)...)
	errs = append(errs, requiredBounded("reason", ev.Reason, maxReason)...)
	if len(ev.Message) > maxNote {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", maxNote)))
	}
	return errs
}

// requiredBounded requires a string and bounds its length.
func requiredBounded(path, value string, limit int) field.ErrorList {
	switch {
	case value == "":
		return field.ErrorList{field.Required(field.NewPath(path), "")}
	case len(value) > limit:
		return field.ErrorList{field.Invalid(field.NewPath(path), "", fmt.Sprintf("can have at most %v characters", limit))}
	}
	return nil
}

// seriesRules checks a series: it counts at least two occurrences and says
// when it last saw one.
func seriesRules(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if s := ev.Series; s != nil {
		if s.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if s.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	return errs
}
