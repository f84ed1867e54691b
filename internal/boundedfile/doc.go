// Package boundedfile reads the files a Config or a kubeconfig names (a
// kubeconfig, a CA bundle, a certificate, a key, a token file) refusing
// anything that is not a regular file of at most MaxFileBytes. It is
// internal: package rest and package kubeconfig share it, and rest
// re-exports its error (rest.FileError, rest.ErrFileRefused) for users.
package boundedfile
