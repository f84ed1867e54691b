// Package attack holds the attack suite: tests that put a broken or
// hostile API server in front of an informer, or a hostile client in front
// of fakeapi, and check that the library survives it. It has no code of its
// own; everything is in its _test.go files, run by the project's test
// command (go test -race ./...).
//
// Each test is one attack: an httptest server that misbehaves in one way
// (ends every watch at once, repeats a continue token, lies about a body's
// length, redirects, echoes the bearer token...). Each asserts, as
// docs/reliability.md ("Attacks") tabulates:
//
//   - no panic (a panic fails the test binary);
//   - a typed error through OnError: an *reflector.Error of the expected
//     Kind, wrapping the expected sentinel;
//   - the heap grew by less than a stated bound while the attack ran
//     (sampled with runtime/metrics), and, where the attack is about
//     allocation, the bytes allocated stayed under one;
//   - the requests the server received stayed under a stated bound;
//   - after Shutdown no goroutine of the informer or of its HTTP client is
//     left (goleak, checked while the hostile server still runs, so that
//     lingering keep-alive connections count);
//   - the bearer token appears in no captured error and no log line;
//   - the cache holds no object the server did not send.
//
// The caps that stop an attack are set small through options where the
// default would need gigabytes to reach (MaxListItems, MaxListPages); the
// reflector's and wire's own tests show that the defaults are finite.
package attack
