// Package openapi serves the OpenAPI documents of kube-apiserver: one
// OpenAPI v2 document (/openapi/v2, as JSON or in its protobuf form) and
// one OpenAPI v3 document per group version (/openapi/v3/api/v1,
// /openapi/v3/apis/apps/v1, listed by the index /openapi/v3).
//
// # What it imitates
//
// kubectl explain reads these documents, kubectl apply and create use them
// to decide how to validate fields on the client, and server-side apply
// needs the type information they carry (which lists merge by a key, which
// maps are atomic). Rather than generate lookalikes, this package serves
// the real server's own documents, recorded from kube-apiserver by
// scripts/record-openapi.sh and embedded gzip-compressed beside this file
// (VERSION names the release). It serves them as the real server does:
// the ETag is the SHA-512 of the bytes, a matching If-None-Match gets 304,
// a v3 document asked for with its current hash is immutable, and one asked
// for with a stale hash is redirected (301) to the current one. A built-in
// group version with no recorded v3 document gets one derived from the v2
// document (derived.go). Custom resources' documents are built by
// fakeapi/internal/crd and published here with Documents.SetCRD.
//
// # Its place
//
// It is one of fakeapi's fidelity packages: an informer never reads
// OpenAPI. The fakeapi core routes /openapi/ to Documents.Serve and keeps
// one Documents per server; fakeapi/internal/apply reads the recorded schemas
// (RecordedV3Paths, RecordedV3). This package knows nothing of the server.
package openapi
