package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

const timeFormat = time.RFC3339

// ts formats a time for the wire: RFC 3339 in UTC.
func ts(t time.Time) string { return t.UTC().Format(timeFormat) }

// millisFormat is the time of a record read in order (raw clicks of an
// export, audit entries): RFC 3339 UTC in milliseconds.
const millisFormat = "2006-01-02T15:04:05.000Z07:00"

// loginAccount is how the login limits (auth.LoginGuard) name the account
// of a lower-case e-mail: by its digest, so a failed login with a megabyte
// of e-mail keeps 32 bytes, not the megabyte.
func loginAccount(email string) string {
	sum := sha256.Sum256([]byte(email))
	return string(sum[:])
}

// tsp formats an optional time; nil stays null.
func tsp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

type tokenResponse struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
}

// maxEmailLen is the longest e-mail address there can be (RFC 5321).
const maxEmailLen = 254

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// handleLogin exchanges e-mail and password for a JWT. Attempts are limited
// per client address (any account), and failures per (account, address)
// and per account (auth.LoginGuard), so that a stranger cannot lock the
// owner out. An unknown e-mail costs as much time as a wrong password and
// counts the same, so that neither can be told apart. The password is
// checked behind the gate of slow hashes, or in the known devices' lane for
// a browser this user logged in from before (loginLane).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in loginRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	email := link.NormalizeEmail(in.Email)
	if email == "" || in.Password == "" {
		return &link.Error{Code: link.EINVALID, Message: "email and password are required",
			Fields: []link.FieldError{{Field: "email", Message: "is required"}, {Field: "password", Message: "is required"}}}
	}
	ip := s.clientIP(r)
	if d := s.limiters.Allow("login-ip:"+ip, s.cfg.LoginPerIP); !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		return link.Errorf(link.ERATELIMITED, "too many login attempts from your address; retry in %d s", secs)
	}
	att, wait := s.logins.Begin(loginAccount(email), ip)
	if att == nil {
		secs := retryAfter(w, wait)
		return link.Errorf(link.ERATELIMITED, "too many failed logins to this account from your address; retry in %d s", secs)
	}
	defer att.Release() // a no-op once Failed or Succeeded
	var u *link.User
	var err error
	if len(email) > maxEmailLen {
		err = link.Errorf(link.ENOTFOUND, "no such user") // no address is that long
	} else {
		u, err = s.users.FindUserByEmail(r.Context(), email)
	}
	if isNotFound(err) {
		if err := s.verifyNoPassword(w, r, in.Password); err != nil {
			return err // busy: counted as no attempt
		}
		att.Failed()
		s.recordLogin(r, nil, email[:min(len(email), maxEmailLen)], loginPassword, "unknown_email")
		return link.Errorf(link.EUNAUTHORIZED, "wrong e-mail or password")
	} else if err != nil {
		return err
	}
	var ok bool
	gate, done := s.loginLane(r, u.ID)
	err = s.slowHashIn(gate, w, r, func() { ok = s.passwords.Verify(u.PasswordHash, in.Password) })
	done()
	if err != nil {
		return err
	} else if !ok {
		att.Failed()
		s.recordLogin(r, u, email, loginPassword, "wrong_password")
		return link.Errorf(link.EUNAUTHORIZED, "wrong e-mail or password")
	}
	att.Succeeded()
	if u.Disabled {
		s.recordLogin(r, u, email, loginPassword, "disabled")
		return errDisabledAccount
	}
	s.recordLogin(r, u, email, loginPassword, "")
	s.rememberDevice(w, u.ID)
	return s.writeToken(w, http.StatusOK, u)
}

// writeToken answers a new JWT for u, of the token generation of the
// record u was read from (see auth.JWT.IssueGeneration).
func (s *Server) writeToken(w http.ResponseWriter, status int, u *link.User) error {
	tok, exp, err := s.jwt.IssueGeneration(u.ID, u.TokenGeneration)
	if err != nil {
		return err
	}
	writeJSON(w, status, tokenResponse{Token: tok, ExpiresAt: ts(exp)})
	return nil
}

type setupRequest struct {
	Token         string `json:"token"`
	Email         string `json:"email"`
	Password      string `json:"password"`
	WorkspaceName string `json:"workspace_name"`
}

// handleSetup creates the first user (the instance admin) and its workspace
// with the one-time token printed in the log. It works once.
func (s *Server) handleSetup(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in setupRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	want := s.pendingSetup()
	if want == nil || subtle.ConstantTimeCompare([]byte(in.Token), []byte(*want)) != 1 {
		return link.Errorf(link.EFORBIDDEN, "the setup token is not valid: it works once, from the link in the server's log")
	}
	var u *link.User
	var err error
	if gateErr := s.slowHash(w, r, func() {
		u, err = s.setup.Bootstrap(r.Context(), strings.TrimSpace(in.Email), in.Password, in.WorkspaceName)
	}); gateErr != nil {
		return gateErr
	}
	if err != nil {
		return err
	}
	s.setupToken.Store(nil)
	if shared, ok := s.db.(link.SetupTokens); ok {
		if err := shared.EndSetup(); err != nil {
			s.logger.Warn("setup: the used setup token could not be deleted", "err", err)
		}
	}
	return s.writeToken(w, http.StatusCreated, u)
}

type workspaceResponse struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Plan      string `json:"plan"`
	RateLimit int    `json:"rate_limit"`
	Role      string `json:"role,omitempty"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	// LinkDefaults are what the links created in the workspace take when
	// their request does not say.
	LinkDefaults workspaceLinkDefaults `json:"link_defaults"`
	// DestinationChecks turns on the background check of the workspace's
	// destinations (docs/links.md#destination-checks).
	DestinationChecks bool `json:"destination_checks"`
	// Pixels are the retargeting pixels of the workspace's links with
	// retargeting; "" is a network not used.
	Pixels workspacePixels `json:"pixels"`
}

// workspacePixels are a workspace's retargeting pixel IDs.
type workspacePixels struct {
	Meta     string `json:"meta"`
	Google   string `json:"google"`
	LinkedIn string `json:"linkedin"`
}

// workspaceLinkDefaults are a workspace's defaults of new links.
type workspaceLinkDefaults struct {
	ForwardPath  bool `json:"forward_path"`
	ForwardQuery bool `json:"forward_query"`
}

// workspaceResponse shows a workspace with the user's role in it and the
// rate limit its plan gives on this instance.
func (s *Server) workspaceResponse(ws *link.Workspace, role link.Role) workspaceResponse {
	return workspaceResponse{ID: ws.ID, Name: ws.Name, Plan: string(ws.Plan), RateLimit: s.cfg.Plans[ws.Plan], Role: string(role),
		CreatedAt: ts(ws.CreatedAt), UpdatedAt: ts(ws.UpdatedAt),
		LinkDefaults:      workspaceLinkDefaults{ForwardPath: ws.ForwardPath, ForwardQuery: ws.ForwardQuery},
		DestinationChecks: ws.DestinationChecks,
		Pixels:            workspacePixels{Meta: ws.Pixels.Meta, Google: ws.Pixels.Google, LinkedIn: ws.Pixels.LinkedIn}}
}

type meResponse struct {
	ID         string              `json:"id"`
	Email      string              `json:"email"`
	Name       string              `json:"name"`
	Admin      bool                `json:"admin"`
	CreatedAt  string              `json:"created_at"`
	Workspaces []workspaceResponse `json:"workspaces"`
}

func (s *Server) memberships(r *http.Request, u *link.User) ([]workspaceResponse, error) {
	ms, err := s.workspaces.FindMemberships(r.Context(), u.ID)
	if err != nil {
		return nil, err
	}
	out := make([]workspaceResponse, 0, len(ms))
	for _, m := range ms {
		out = append(out, s.workspaceResponse(m.Workspace, m.Role))
	}
	return out, nil
}

func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, c *caller) error {
	wss, err := s.memberships(r, c.user)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, meResponse{ID: c.user.ID, Email: c.user.Email, Name: c.user.Name, Admin: c.user.Admin,
		CreatedAt: ts(c.user.CreatedAt), Workspaces: wss})
	return nil
}

func (s *Server) handleListWorkspaces(w http.ResponseWriter, r *http.Request, c *caller) error {
	wss, err := s.memberships(r, c.user)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": wss})
	return nil
}

type workspaceRequest struct {
	Name *string `json:"name"`
	Plan *string `json:"plan"`
}

// workspaceUpdateRequest is a PATCH of a workspace: its name, plan and the
// defaults of its new links, each left as it is when absent.
type workspaceUpdateRequest struct {
	workspaceRequest
	LinkDefaults *struct {
		ForwardPath  *bool `json:"forward_path"`
		ForwardQuery *bool `json:"forward_query"`
	} `json:"link_defaults"`
	DestinationChecks *bool `json:"destination_checks"`
	// Pixels replaces the pixels named; a network left out keeps its ID,
	// "" removes it.
	Pixels *struct {
		Meta     *string `json:"meta"`
		Google   *string `json:"google"`
		LinkedIn *string `json:"linkedin"`
	} `json:"pixels"`
}

func (s *Server) handleCreateWorkspace(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in workspaceRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	now := s.now()
	ws := &link.Workspace{Plan: s.cfg.DefaultPlan, CreatedAt: now, UpdatedAt: now}
	if in.Name != nil {
		ws.Name = *in.Name
	}
	if in.Plan != nil {
		if !c.user.Admin {
			return link.Errorf(link.EFORBIDDEN, "only the instance admin may set a workspace's plan")
		}
		ws.Plan = link.Plan(*in.Plan)
	}
	if err := ws.Validate(); err != nil {
		return err
	}
	maxOwned := s.cfg.MaxWorkspacesPerUser
	if c.user.Admin {
		maxOwned = 0 // the admin sets plans anyway, and makes workspaces for others
	}
	if err := s.workspaces.CreateWorkspace(r.Context(), ws, c.user.ID, maxOwned); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.workspaceResponse(ws, link.RoleOwner))
	return nil
}

// memberWorkspace returns the workspace of the route if the user is a
// member (the instance admin sees every workspace). ENOTFOUND otherwise.
func (s *Server) memberWorkspace(r *http.Request, c *caller) (*link.Workspace, link.Role, error) {
	id := c.params.ByName("id")
	m, err := s.workspaces.FindMembership(r.Context(), id, c.user.ID)
	if err == nil {
		return m.Workspace, m.Role, nil
	}
	if !isNotFound(err) {
		return nil, "", err
	}
	if c.user.Admin {
		ws, err := s.workspaces.FindWorkspaceByID(r.Context(), id)
		return ws, "", err
	}
	return nil, "", s.notMember(r, id, c.user.ID)
}

func (s *Server) handleGetWorkspace(w http.ResponseWriter, r *http.Request, c *caller) error {
	ws, role, err := s.memberWorkspace(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.workspaceResponse(ws, role))
	return nil
}

// handleUpdateWorkspace renames a workspace (owners) or changes its plan
// (the instance admin only).
func (s *Server) handleUpdateWorkspace(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in workspaceUpdateRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	ws, role, err := s.memberWorkspace(r, c)
	if err != nil {
		return err
	}
	if in.Plan != nil && !c.user.Admin {
		return link.Errorf(link.EFORBIDDEN, "only the instance admin may change a workspace's plan")
	}
	if in.Name != nil && role != link.RoleOwner && !c.user.Admin {
		return link.Errorf(link.EFORBIDDEN, "only an owner of the workspace may rename it")
	}
	upd := link.WorkspaceUpdate{Name: in.Name}
	if d := in.LinkDefaults; d != nil {
		if role != link.RoleOwner && !c.user.Admin {
			return link.Errorf(link.EFORBIDDEN, "only an owner of the workspace may change the defaults of its links")
		}
		upd.ForwardPath, upd.ForwardQuery = d.ForwardPath, d.ForwardQuery
	}
	if in.DestinationChecks != nil {
		if role != link.RoleOwner && !c.user.Admin {
			return link.Errorf(link.EFORBIDDEN, "only an owner of the workspace may turn the checks of its destinations on or off")
		}
		upd.DestinationChecks = in.DestinationChecks
	}
	if p := in.Pixels; p != nil {
		if role != link.RoleOwner && !c.user.Admin {
			return link.Errorf(link.EFORBIDDEN, "only an owner of the workspace may change its retargeting pixels")
		}
		px := ws.Pixels
		for _, f := range [...]struct{ in, to *string }{{p.Meta, &px.Meta}, {p.Google, &px.Google}, {p.LinkedIn, &px.LinkedIn}} {
			if f.in != nil {
				*f.to = *f.in
			}
		}
		upd.Pixels = &px
	}
	if in.Plan != nil {
		p := link.Plan(*in.Plan)
		upd.Plan = &p
	}
	ws, err = s.workspaces.UpdateWorkspace(r.Context(), ws.ID, upd)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.workspaceResponse(ws, role))
	return nil
}

// handleBackup answers the instance admin with a consistent copy of the
// data file while the server keeps running. The copy is spooled first (see
// link.DataFile.SpoolBackup), so a slow client never holds a read
// transaction.
func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request, _ *caller) error {
	// Like the gate, a second backup waits its turn for up to costly_wait
	// (answered at once, a client retrying in a loop would spin the CPU).
	select {
	case s.backingUp <- struct{}{}:
	default:
		if err := s.awaitBackup(w, r); err != nil {
			return err
		}
	}
	defer func() { <-s.backingUp }()
	release, err := s.admit(w, r, costlyBackup)
	if err != nil {
		return err
	}
	// The copy and the download are both work; a slow download gives the
	// slot back while it waits (gatedWriter).
	gw := &gatedWriter{w: w, ctx: r.Context(), a: s.costly, class: costlyBackup, release: release}
	defer gw.done()
	return s.work(costlyBackup, func() error { return s.sendBackup(w, r, gw) })
}

// sendBackup spools the copy and sends it through body.
func (s *Server) sendBackup(w http.ResponseWriter, r *http.Request, body io.Writer) error {
	f, n, err := s.db.SpoolBackup()
	if err != nil {
		return err
	}
	defer f.Close()
	if r.Method != http.MethodHead {
		// A copy of the whole file holds every secret hash: who took one
		// is on record before a byte leaves.
		if err := s.audit.RecordAudit(r.Context(), nil, link.AuditBackupDownloaded, link.AuditTarget{Type: "instance"},
			map[string]link.Change{"bytes": {After: optional(strconv.FormatInt(n, 10))}}); err != nil {
			return err
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="linkbolt-backup.db"`)
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := io.CopyBuffer(body, onlyReader{f}, make([]byte, 256<<10)); err != nil {
		// The status is sent: cut the body short so the client sees a
		// truncated copy rather than a complete-looking bad one.
		s.logger.Warn("backup download cut off", "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// onlyReader hides a file's WriteTo, so that io.CopyBuffer writes through
// its buffer to the writer it is given.
type onlyReader struct{ io.Reader }

// awaitBackup waits up to costly_wait for the running backup to end and
// takes its place, or answers why not.
func (s *Server) awaitBackup(w http.ResponseWriter, r *http.Request) error {
	wait := time.NewTimer(s.cfg.CostlyWait)
	defer wait.Stop()
	select {
	case s.backingUp <- struct{}{}:
		return nil
	case <-wait.C:
		secs := retryAfter(w, 10*time.Second)
		return errHTTP(codeBusy, fmt.Sprintf("a backup is already being made; retry in %d s, when it is done", secs))
	case <-r.Context().Done():
		return r.Context().Err()
	}
}
