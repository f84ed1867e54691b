package fakeapi

import (
	_ "github.com/stretchr/testify/require"
	_ "go.uber.org/goleak"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/api/errors"
	_ "k8s.io/apimachinery/pkg/runtime/serializer"
	_ "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)
