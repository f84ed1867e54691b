//go:build goexperiment.jsonv2

package bench

import jsonv2 "encoding/json/v2"

// encoding/json/v2 is measured only where the toolchain offers it: in Go
// 1.26 that takes GOEXPERIMENT=jsonv2, so it cannot be adopted yet.
// Run: GOEXPERIMENT=jsonv2 go test -run JSONDecoder -bench JSONDecoders -benchmem ./
var jsonV2Decoders = []jsonDecoder{
	{"encoding/json/v2", func(data []byte, v any) error { return jsonv2.Unmarshal(data, v) }},
}
