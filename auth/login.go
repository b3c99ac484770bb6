package auth

import (
	"sync"
	"time"
)

// LoginGuard limits failed password logins so that guessing is slow and
// nobody can lock an account's owner out:
//
//   - per (account, address): at most PerAddress failures in any Window;
//     past that, that address gets no more tries at that account until the
//     oldest failure leaves the window;
//   - per account, from every address together: after PerAccount failures
//     in a row (no success between them, none more than an hour apart),
//     each further failure doubles a delay, from 1 s up to MaxDelay, that
//     an address which has itself failed at this account in the last
//     Window must wait before its next try.
//
// An address with no recent failure at the account is never held by the
// account's delay, so a stranger hammering an account from elsewhere
// cannot stop its owner signing in from their own address; the stranger's
// own addresses are held by both limits. Only failures count; a success
// clears the address's failures and the account's run. Unknown accounts
// are treated exactly like known ones, so the limits reveal nothing.
//
// LoginGuard is safe for concurrent use and reads only its injected clock.
// Idle entries are dropped, so memory is bounded by the failures of the
// last hour.
type LoginGuard struct {
	// PerAddress is the failures allowed per (account, address) in Window;
	// 0 means no limit.
	PerAddress int
	// Window is the span PerAddress counts over.
	Window time.Duration
	// PerAccount is the failures in a row an account takes before delays
	// start; 0 means no delays.
	PerAccount int
	// MaxDelay caps the account's delay.
	MaxDelay time.Duration

	now       func() time.Time
	mu        sync.Mutex
	accounts  map[string]*accountLogins
	nextSweep time.Time
}

// accountRunMemory is how long an account's run of failures is kept with no
// new failure. It is at least MaxDelay (see memory), so the delay cannot be
// waited out to reset the run.
const accountRunMemory = time.Hour

type accountLogins struct {
	failures    int       // failures in a row, any address
	lastFailure time.Time // of the run
	addrs       map[string]*addressLogins
}

type addressLogins struct {
	failures []time.Time // within Window, oldest first
	inFlight int         // attempts begun and not ended
}

// NewLoginGuard returns a guard reading the clock now (nil: time.Now).
func NewLoginGuard(perAddress int, window time.Duration, perAccount int, maxDelay time.Duration, now func() time.Time) *LoginGuard {
	if now == nil {
		now = time.Now
	}
	return &LoginGuard{PerAddress: perAddress, Window: window, PerAccount: perAccount, MaxDelay: maxDelay,
		now: now, accounts: make(map[string]*accountLogins)}
}

// LoginAttempt is a login that Begin let through; exactly one of Failed,
// Succeeded or Release must follow.
type LoginAttempt struct {
	g             *LoginGuard
	account, addr string
	ended         bool
}

// Begin reports whether a login to account from addr may be tried now. If
// so it returns the attempt, which holds a place in the address's limit
// until it ends (so concurrent attempts cannot pass it); otherwise nil and how
// long to wait.
func (g *LoginGuard) Begin(account, addr string) (*LoginAttempt, time.Duration) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maybeSweep(now)

	acc := g.accounts[account]
	if acc == nil {
		acc = &accountLogins{addrs: make(map[string]*addressLogins)}
		g.accounts[account] = acc
	}
	g.forgetStale(acc, now)
	a := g.address(acc, addr, now)
	if g.PerAddress > 0 && len(a.failures)+a.inFlight >= g.PerAddress {
		wait := time.Second // only attempts in flight: soon
		if len(a.failures) > 0 {
			wait = max(wait, a.failures[0].Add(g.Window).Sub(now))
		}
		return nil, wait
	}
	if len(a.failures) > 0 {
		if wait := acc.lastFailure.Add(g.delay(acc.failures)).Sub(now); wait > 0 {
			return nil, wait
		}
	}
	a.inFlight++
	return &LoginAttempt{g: g, account: account, addr: addr}, 0
}

// Failed records the attempt as a failure (wrong password or unknown
// account). Of Failed, Succeeded and Release, only the first call counts.
func (a *LoginAttempt) Failed() { a.end(outcomeFailed) }

// Succeeded records the attempt as a success: the address's failures and
// the account's run are cleared.
func (a *LoginAttempt) Succeeded() { a.end(outcomeSucceeded) }

// Release ends the attempt without an outcome (it could not be checked, as
// on an internal error); it frees the attempt's place and counts nothing.
func (a *LoginAttempt) Release() { a.end(outcomeNone) }

type outcome int

const (
	outcomeNone outcome = iota
	outcomeFailed
	outcomeSucceeded
)

func (a *LoginAttempt) end(o outcome) {
	if a == nil || a.ended {
		return
	}
	a.ended = true
	g := a.g
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	acc := g.accounts[a.account]
	if acc == nil { // never swept while an attempt is in flight; kept safe anyway
		acc = &accountLogins{addrs: make(map[string]*addressLogins)}
		g.accounts[a.account] = acc
	}
	ad := g.address(acc, a.addr, now)
	ad.inFlight = max(0, ad.inFlight-1)
	switch o {
	case outcomeNone:
		if len(ad.failures) == 0 && ad.inFlight == 0 {
			delete(acc.addrs, a.addr)
		}
		g.dropIfEmpty(a.account, acc)
		return
	case outcomeSucceeded:
		acc.failures, acc.lastFailure = 0, time.Time{}
		delete(acc.addrs, a.addr)
		g.dropIfEmpty(a.account, acc)
		return
	}
	g.forgetStale(acc, now)
	acc.failures++
	acc.lastFailure = now
	ad.failures = append(ad.failures, now)
}

// dropIfEmpty forgets an account with nothing left to remember.
func (g *LoginGuard) dropIfEmpty(account string, acc *accountLogins) {
	if acc.failures == 0 && len(acc.addrs) == 0 {
		delete(g.accounts, account)
	}
}

// delay returns how long an account with n failures in a row holds the
// addresses failing at it: 0 below PerAccount, then 1 s doubling per
// failure up to MaxDelay.
func (g *LoginGuard) delay(n int) time.Duration {
	if g.PerAccount <= 0 || n < g.PerAccount {
		return 0
	}
	shift := min(n-g.PerAccount, 30)
	return min(g.MaxDelay, time.Second<<shift)
}

// memory is how long an account's run of failures lasts with no new one.
func (g *LoginGuard) memory() time.Duration {
	return max(accountRunMemory, 2*g.MaxDelay, g.Window)
}

// forgetStale drops the account's run of failures after memory() without
// one.
func (g *LoginGuard) forgetStale(acc *accountLogins, now time.Time) {
	if acc.failures > 0 && now.Sub(acc.lastFailure) >= g.memory() {
		acc.failures, acc.lastFailure = 0, time.Time{}
	}
}

// address returns the record of addr at acc with the failures older than
// Window dropped, creating it when missing.
func (g *LoginGuard) address(acc *accountLogins, addr string, now time.Time) *addressLogins {
	a := acc.addrs[addr]
	if a == nil {
		a = &addressLogins{}
		acc.addrs[addr] = a
	}
	a.prune(now, g.Window)
	return a
}

func (a *addressLogins) prune(now time.Time, window time.Duration) {
	i := 0
	for i < len(a.failures) && now.Sub(a.failures[i]) >= window {
		i++
	}
	a.failures = a.failures[i:]
}

// maybeSweep drops, once per sweepInterval, the accounts with nothing left
// to remember.
func (g *LoginGuard) maybeSweep(now time.Time) {
	if now.Before(g.nextSweep) {
		return
	}
	g.nextSweep = now.Add(sweepInterval)
	for account, acc := range g.accounts {
		g.forgetStale(acc, now)
		for addr, a := range acc.addrs {
			if a.prune(now, g.Window); len(a.failures) == 0 && a.inFlight == 0 {
				delete(acc.addrs, addr)
			}
		}
		g.dropIfEmpty(account, acc)
	}
}

// Len returns the number of accounts remembered.
func (g *LoginGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.accounts)
}
