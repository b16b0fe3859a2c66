// Package graph runs the graph of a service svc compiled for go: the state
// and its checks, the run loop's steps, model calls (with their retries,
// per-attempt timeouts and fallback models: Model; counted per run against
// its budget: Usage, Budget), tool calls, agents,
// threads and the run's events, with the contract's errors. A project's own
// package internal/graph registers its graph here (Register, RegisterAgents,
// RegisterThreads, RegisterPrepare) and calls these functions from the code
// svc wrote; package server serves it over HTTP, package otel, imported for
// effect, traces it (settings.tracing.enabled), package mcp calls its
// MCP servers and publishes it as an MCP tool (settings.mcp.expose), and
// package a2a calls remote A2A agents (agents of kind a2a) and publishes it
// as an A2A agent (settings.a2a).
//
// A project requires the module svc.dev/runtime v0.1.0, kept beside it in
// svc-runtime/ (go.mod's replace) with the files its graph uses; its tests
// run in the svc repository, where the whole module lives.
package graph
