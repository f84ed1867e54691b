package rest

import (
	"net/http"
	"strings"
)

// sentToken is the bearer token resp's request carried, or "".
func sentToken(resp *http.Response) string {
	if resp.Request == nil {
		return ""
	}
	return strings.TrimPrefix(resp.Request.Header.Get("Authorization"), "Bearer ")
}
