//go:build !goexperiment.jsonv2

package bench

// jsonV2Decoders is empty without GOEXPERIMENT=jsonv2
// (json_decoders_v2_test.go).
var jsonV2Decoders []jsonDecoder
