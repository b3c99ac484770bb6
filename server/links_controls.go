package server

// The link API side of the link controls: password, rules, variants,
// social card.

import (
	"net/http"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// linkControlsRequest are the link controls' fields of a create or PATCH
// request. In a PATCH an absent field is left as it is; "password": ""
// removes the password, "rules": [] the rules, "variants": [] the split,
// and an og with no text (or "og": {}) the social card.
type linkControlsRequest struct {
	// IOSURL and AndroidURL: "" removes one (in a PATCH).
	IOSURL     *string         `json:"ios_url"`
	AndroidURL *string         `json:"android_url"`
	Password   *string         `json:"password"`
	Rules      *[]wire.Rule    `json:"rules"`
	Variants   *[]wire.Variant `json:"variants"`
	OG         *wire.OG        `json:"og"`
}

// hashLinkPassword checks and hashes a new link password; "" stays "" (no
// password). The password itself goes nowhere else. A hash is about 50 ms
// of a core, and a bulk creation may ask for 20 of them in one request
// that counts once against the rate limit: 7 such requests in 10 s took
// the redirects' median from 1 to 36 ms. So each hash is costly work: it
// takes a slot of the costly-work gate (503 server_busy when none comes
// free in server.costly_wait) and runs at low priority (slowHash), and
// redirects keep their cores.
func (s *Server) hashLinkPassword(w http.ResponseWriter, r *http.Request, pw string) (string, error) {
	if pw == "" {
		return "", nil
	}
	if msg := link.CheckLinkPassword(pw); msg != "" {
		return "", fieldError("password", msg)
	}
	var h []byte
	var err error
	if gateErr := s.slowHash(w, r, func() { h, err = s.linkPasswords().Hash(pw) }); gateErr != nil {
		return "", gateErr
	}
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// setControls copies the controls of a create request onto l, hashing the
// password.
func (s *Server) setControls(w http.ResponseWriter, r *http.Request, l *link.Link, in linkControlsRequest) error {
	if in.Rules != nil {
		rules, err := wire.LinkRules(*in.Rules)
		if err != nil {
			return err
		}
		l.Rules = rules
	}
	if in.Variants != nil {
		l.Variants = wire.LinkVariants(*in.Variants)
	}
	l.OG = wire.LinkOG(in.OG)
	if in.IOSURL != nil {
		l.IOSURL = *in.IOSURL
	}
	if in.AndroidURL != nil {
		l.AndroidURL = *in.AndroidURL
	}
	if in.Password != nil {
		// Validate before the slow hash: a link refused anyway is not
		// worth hashing for.
		probe := *l
		probe.Normalize()
		if err := probe.Validate(s.servedRules); err != nil {
			return err
		}
		h, err := s.hashLinkPassword(w, r, *in.Password)
		if err != nil {
			return err
		}
		l.PasswordHash = h
	}
	return nil
}

// updateControls copies the controls of a PATCH onto upd, hashing a new
// password.
func (s *Server) updateControls(w http.ResponseWriter, r *http.Request, upd *link.LinkUpdate, in linkControlsRequest) error {
	if in.Rules != nil {
		rules, err := wire.LinkRules(*in.Rules)
		if err != nil {
			return err
		}
		upd.Rules = &rules
	}
	if in.Variants != nil {
		v := wire.LinkVariants(*in.Variants)
		upd.Variants = &v
	}
	if in.OG != nil {
		upd.OG = wire.LinkOG(in.OG)
	}
	upd.IOSURL, upd.AndroidURL = in.IOSURL, in.AndroidURL
	if in.Password != nil {
		h, err := s.hashLinkPassword(w, r, *in.Password)
		if err != nil {
			return err
		}
		upd.PasswordHash = &h
	}
	return nil
}

// refuseControlsOnSimpleAPI answers a password given to the simple API,
// which makes plain links only.
func refuseControlsOnSimpleAPI(password *string) error {
	if password == nil {
		return nil
	}
	return &link.Error{Code: link.EINVALID,
		Message: "password: the simple API makes plain links only; create a protected link with POST /v1/links",
		Fields:  []link.FieldError{{Field: "password", Message: "is not accepted by the simple API: use POST /v1/links"}}}
}
