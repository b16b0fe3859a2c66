package graph

import "net/http"

// Error is a failure with its place in the HTTP contract: a status, a
// stable code and details (never a stack trace).
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	// retryAfter is the Retry-After header of a reply whose status failed
	// the call ("" when none): a model call obeys it between attempts
	// (llm.go's callModel).
	retryAfter string
}

func (e *Error) Error() string { return e.Message }

func invalidState(field, message string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_state", Message: message,
		Details: map[string]any{"field": field}}
}

func nodeError(node, message string) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "execution_error", Message: message,
		Details: map[string]any{"node": node}}
}

// Upstream failure reasons of the contract.
const (
	ReasonTimeout     = "timeout"
	ReasonStatus      = "status"
	ReasonInvalidJSON = "invalid_json"
	ReasonTooLarge    = "too_large"
	ReasonConnect     = "connect"
	// A structured reply that did not match its schema, asked twice
	// (ChatJSON).
	ReasonInvalidOutput = "invalid_output"
)

func UpstreamError(node, reason, message string) *Error {
	return &Error{Status: http.StatusBadGateway, Code: "upstream_error", Message: message,
		Details: map[string]any{"node": node, "reason": reason}}
}
