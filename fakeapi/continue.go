package fakeapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A continue token lets a client fetch a long list in pages that all show
// the same state: it carries the RV of the first page's snapshot and the
// key to resume from. Like the real server's, it is base64url-encoded JSON;
// clients must treat it as opaque.

const continueVersion = "meta.k8s.io/v1"

// continueToken is the decoded form. RV -1 means "continue at the latest
// state", which is what the token sent with a 410 for a compacted
// snapshot says.
type continueToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
}

func encodeContinue(rv int64, start string) string {
	data, _ := json.Marshal(continueToken{Version: continueVersion, RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(data)
}

// decodeContinue parses a token; a malformed one is a 400 Bad Request.
func decodeContinue(token string) (continueToken, error) {
	var tok continueToken
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		err = json.Unmarshal(data, &tok)
	}
	if err == nil && (tok.Version != continueVersion || tok.Start == "" || tok.RV == 0 || tok.RV < -1) {
		err = fmt.Errorf("unsupported or incomplete token")
	}
	if err != nil {
		return continueToken{}, apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %v", err))
	}
	return tok, nil
}
