package server

import (
	"net/http"
)

// slowHash runs fn, a password hash or check (bcrypt: a core for a quarter
// of a second at the users' cost), behind the costly-work gate and on a
// thread of low priority, as search and export run. Many of them are
// reachable without a session (login, the password link, a new person's
// invitation, setup, a link's password), so a stranger could otherwise
// take every core with them and keep redirects and the admin's own login
// waiting: behind the gate they take at most its slots, and a request that
// finds no slot in time is answered 503 server_busy with Retry-After,
// having hashed nothing. Every such hash passes here, the ones of signed-in
// users too, so that the bound is one.
func (s *Server) slowHash(w http.ResponseWriter, r *http.Request, fn func()) error {
	return s.slowHashIn(s.costly, w, r, fn)
}

// slowHashIn runs fn as slowHash does, behind the gate a rather than the
// shared one: the known devices' lane (see knownDeviceLane).
func (s *Server) slowHashIn(a *admission, w http.ResponseWriter, r *http.Request, fn func()) error {
	release, err := a.enter(r.Context(), w, costlyPassword)
	if err != nil {
		return err
	}
	defer release()
	return s.work(costlyPassword, func() error {
		fn()
		return nil
	})
}

// hashPassword returns the hash to store of a user's new password,
// computed through slowHash.
func (s *Server) hashPassword(w http.ResponseWriter, r *http.Request, pw string) (hash []byte, err error) {
	if gateErr := s.slowHash(w, r, func() { hash, err = s.passwords.Hash(pw) }); gateErr != nil {
		return nil, gateErr
	}
	return hash, err
}

// verifyPassword reports whether pw matches a user's password hash,
// checked through slowHash.
func (s *Server) verifyPassword(w http.ResponseWriter, r *http.Request, hash []byte, pw string) (ok bool, err error) {
	err = s.slowHash(w, r, func() { ok = s.passwords.Verify(hash, pw) })
	return ok, err
}

// verifyNoPassword spends the time of a wrong password (auth.Passwords.
// VerifyNone) through slowHash, so that an unknown e-mail costs the
// same as a known one, the bound included.
func (s *Server) verifyNoPassword(w http.ResponseWriter, r *http.Request, pw string) error {
	return s.slowHash(w, r, func() { s.passwords.VerifyNone(pw) })
}

// verifyLinkPassword reports whether pw is the password of a protected
// link (hash), checked through slowHash.
func (s *Server) verifyLinkPassword(w http.ResponseWriter, r *http.Request, hash, pw string) (ok bool, err error) {
	err = s.slowHash(w, r, func() { ok = s.linkPasswords().Verify([]byte(hash), pw) })
	return ok, err
}
