package server

import (
	"net/http"

	"github.com/linkbolt/linkbolt/auth"
)

// knownDeviceLane is how many password checks of known devices run at once
// beside the shared gate: one more bcrypt at most, however many strangers
// wait behind the gate.
const knownDeviceLane = 1

// deviceCookie names a browser its user logged in from with their password
// (auth.DeviceCookies). It goes only to the login route, and no script
// reads it.
const (
	deviceCookie     = "linkbolt_device"
	deviceCookiePath = "/v1/auth/login"
)

// loginLane returns the gate a login of userID checks its password behind,
// and the function to call once the check is done: the known devices'
// lane when the request carries a device cookie of that user, else the
// gate every slow hash shares. So a flood of guesses from many addresses,
// which fills the shared gate, keeps the owner's login from their own
// browser answering; and since a stranger has no cookie, every login of
// theirs, of a known or an unknown e-mail, waits alike. A user has one
// login at a time in the lane, the others wait at the shared gate: every
// user has a cookie of their own, and one who logs in over and over from
// many addresses would otherwise fill the lane, and the owner would wait
// behind all of those logins instead of one.
func (s *Server) loginLane(r *http.Request, userID string) (gate *admission, done func()) {
	c, err := r.Cookie(deviceCookie)
	if err != nil || !s.devices.Known(c.Value, userID) {
		return s.costly, func() {}
	}
	if _, busy := s.inDeviceLane.LoadOrStore(userID, struct{}{}); busy {
		return s.costly, func() {}
	}
	return s.deviceLane, func() { s.inDeviceLane.Delete(userID) }
}

// rememberDevice names the browser of a successful password login as a
// device of userID for auth.DeviceTTL from now.
func (s *Server) rememberDevice(w http.ResponseWriter, userID string) {
	value, expires := s.devices.Issue(userID)
	http.SetCookie(w, &http.Cookie{
		Name: deviceCookie, Value: value, Path: deviceCookiePath,
		MaxAge: int(auth.DeviceTTL.Seconds()), Expires: expires,
		HttpOnly: true, Secure: s.primary.Scheme == "https", SameSite: http.SameSiteStrictMode,
	})
}
