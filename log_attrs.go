package informer

import (
	"context"
	"errors"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/seed31a95821/informer/processor"
	"github.com/seed31a95821/informer/reflector"
)

// logError writes err to the informer's logger: the default destination of
// Options.OnError. The keys are the ones every log line of the library
// uses: resource, and where the error knows them, namespace and name
// split from the cache's key), resourceVersion (the one the cache has
// reached), handler, op and error_kind, the
// reflector's class of the failure, which says what it will do next.
func (s *SharedInformer[T]) logError(err error) {
	attrs := []slog.Attr{
		slog.String("informer", s.opts.Name),
		slog.String("resource", s.opts.Resource.String()),
		slog.String("resourceVersion", s.refl.LastSyncResourceVersion()),
		slog.Any("error", err),
	}
	attrs = append(attrs, errorAttrs(err)...)
	s.logger().LogAttrs(context.Background(), slog.LevelError, "informer error", attrs...)
}

// errorAttrs returns what err says about itself, as log attributes.
func errorAttrs(err error) []slog.Attr {
	var attrs []slog.Attr
	if re, ok := errors.AsType[*reflector.Error](err); ok {
		attrs = append(attrs, slog.String("op", re.Op), slog.String("error_kind", re.Kind.String()))
	}
	if pe, ok := errors.AsType[*processor.HandlerPanicError](err); ok {
		attrs = append(attrs, pe.Attrs()...)
	}
	if reason := apierrors.ReasonForError(err); reason != "" {
		attrs = append(attrs, slog.String("reason", string(reason)))
	}
	return attrs
}

// logger is Options.Logger, or slog.Default() when it is nil.
func (s *SharedInformer[T]) logger() *slog.Logger {
	if s.opts.Logger != nil {
		return s.opts.Logger
	}
	return slog.Default()
}
