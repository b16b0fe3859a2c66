package a2a

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"svc.dev/runtime/graph"
	"svc.dev/runtime/server"
)

// Who may call /a2a (docs/http-contract.md, "A2A", "Credentials"), decided
// as python-svc's Credentials decides it: the callers of
// settings.a2a.tokens, each token read from its variable at start-up and
// kept as a digest only; with no table, the service's own credential (the
// subject "service", not limited by skill roles) or, with security.auth
// none, anyone (the subject "anonymous").

// Token is one caller of settings.a2a.tokens as compiled: the variable
// holding its token, never the token.
type Token struct {
	Subject string
	Roles   []string
	Env     string
	// Scheme is "bearer" (Authorization: Bearer) or "api_key" (X-API-Key).
	Scheme string
}

// a2aSchemes are the schemes a caller may use, in the order the card
// lists them.
var a2aSchemes = []string{"bearer", "api_key"}

// callerToken is a caller of the table, its token kept as a digest.
type callerToken struct {
	caller graph.A2ACaller
	scheme string
	digest [sha256.Size]byte
}

// a2aIdentity is a caller found; unrestricted is the holder of the
// service's own credential, which skill roles do not limit (as on /invoke).
type a2aIdentity struct {
	caller       graph.A2ACaller
	unrestricted bool
}

// mayCall: a skill with roles is for a caller holding any one of them.
func (id *a2aIdentity) mayCall(s *Skill) bool {
	if id.unrestricted || len(s.Roles) == 0 {
		return true
	}
	for _, r := range id.caller.Roles {
		if slices.Contains(s.Roles, r) {
			return true
		}
	}
	return false
}

// forbidden is the 403 of a caller without any of the skill's roles.
func (id *a2aIdentity) forbidden(s *Skill) *graph.Error {
	held := strings.Join(id.caller.Roles, ", ")
	if held == "" {
		held = "none"
	}
	return &graph.Error{Status: http.StatusForbidden, Code: "forbidden",
		Message: fmt.Sprintf("the skill %q is for the roles %s; %q holds %s",
			s.ID, strings.Join(s.Roles, ", "), id.caller.Subject, held),
		Details: map[string]any{"skill": s.ID}}
}

type a2aCredentials struct {
	table []callerToken
	// schemes are what /a2a accepts, as the card declares them.
	schemes []string
	// auth is the service's scheme ("none": it asks for no credential),
	// and authorized checks its own credential (server.CredentialCheck).
	auth       string
	authorized func(r *http.Request) bool
}

// loadA2ATokens reads each caller's token from its variable: an unset or
// empty variable, or two callers with one token, stop the service.
func loadA2ATokens(tokens []Token, getenv func(string) string) ([]callerToken, error) {
	var table []callerToken
	first := map[[sha256.Size]byte]int{}
	for i, t := range tokens {
		value := getenv(t.Env)
		if value == "" {
			how := "in the X-API-Key header"
			if t.Scheme == "bearer" {
				how = "as Authorization: Bearer <token>"
			}
			return nil, fmt.Errorf("settings.a2a.tokens[%d] (%s) reads its token from %s, which is not set: "+
				"set it to the token this caller sends (%s)", i, t.Subject, t.Env, how)
		}
		digest := sha256.Sum256([]byte(value))
		if j, seen := first[digest]; seen {
			return nil, fmt.Errorf("settings.a2a.tokens[%d] (%s, from %s) has the same token as "+
				"settings.a2a.tokens[%d] (%s, from %s): give each caller a token of its own",
				i, t.Subject, t.Env, j, tokens[j].Subject, tokens[j].Env)
		}
		first[digest] = i
		table = append(table, callerToken{
			caller: graph.A2ACaller{Subject: t.Subject, Roles: t.Roles},
			scheme: t.Scheme,
			digest: digest,
		})
	}
	return table, nil
}

// newA2ACredentials: the table when there is one (the service's own key
// is then not accepted at /a2a), else the service's credential.
func newA2ACredentials(cfg server.Config, table []callerToken) *a2aCredentials {
	c := &a2aCredentials{table: table, auth: cfg.Auth, authorized: cfg.CredentialCheck()}
	used := map[string]bool{}
	for _, t := range table {
		used[t.scheme] = true
	}
	if len(table) == 0 && cfg.Auth != "none" {
		used[cfg.Auth] = true
	}
	for _, scheme := range a2aSchemes {
		if used[scheme] {
			c.schemes = append(c.schemes, scheme)
		}
	}
	return c
}

// identify is the caller of r, or nil for a missing or wrong credential.
// Every entry of the table is compared, in constant time over digests,
// whatever matched before.
func (c *a2aCredentials) identify(r *http.Request) *a2aIdentity {
	if len(c.table) == 0 {
		switch {
		case c.auth == "none":
			return &a2aIdentity{caller: graph.A2ACaller{Subject: "anonymous"}}
		case c.authorized(r):
			return &a2aIdentity{caller: graph.A2ACaller{Subject: "service"}, unrestricted: true}
		}
		return nil
	}
	presented := map[string][]byte{}
	if token := bearerToken(r); token != "" {
		sum := sha256.Sum256([]byte(token))
		presented["bearer"] = sum[:]
	}
	if key := r.Header.Get("X-API-Key"); key != "" {
		sum := sha256.Sum256([]byte(key))
		presented["api_key"] = sum[:]
	}
	var found *a2aIdentity
	for i := range c.table {
		t := &c.table[i]
		got := presented[t.scheme]
		if got != nil && subtle.ConstantTimeCompare(got, t.digest[:]) == 1 && found == nil {
			found = &a2aIdentity{caller: t.caller}
		}
	}
	return found
}

// bearerToken is the token of an Authorization: Bearer header (the word in
// any case), or "", as package server reads it.
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "Bearer ") {
		return ""
	}
	return strings.TrimSpace(h[7:])
}

// challenge is the WWW-Authenticate header of a 401: "Bearer" when bearer
// tokens are accepted.
func (c *a2aCredentials) challenge() string {
	if slices.Contains(c.schemes, "bearer") {
		return "Bearer"
	}
	return ""
}
