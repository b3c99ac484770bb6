// Package auth owns linkbolt's credentials: API key tokens (generating them,
// their checksum, their hash and the start shown in key lists), password
// hashing for dashboard users, the JWTs that logged-in users carry, and the
// per-credential rate limiters that enforce a workspace's plan (in memory,
// or over a budget the store shares between processes: SharedLimiters), and the
// setup of a fresh instance's admin account (Setup).
//
// auth knows nothing of HTTP or of storage. Whether a key is active, in its
// grace period, revoked or expired is decided by link.APIKey.State, and
// whether a scope allows an action by link.Scope.Allows; the server's
// middleware puts these pieces together. Every error a client may see is a
// *link.Error with code link.EUNAUTHORIZED (or link.EINVALID for a password
// that cannot be hashed); any other error is a misconfiguration and internal.
package auth
