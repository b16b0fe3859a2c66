// Package a2a is the graph's A2A, on the official a2a-go SDK (with its
// A2A 0.3 compatibility module): the graph published as an A2A agent
// (settings.a2a: Publish, Spec; publish.go, credentials.go) and its calls
// to remote A2A agents (agents of kind a2a; client.go, card.go). A project
// imports it when its graph is published as an A2A agent or calls remote
// A2A agents: its a2a_agent.go publishes the agent card's title, skills and
// callers (served by package server, through server.HandleA2A: the card at
// /.well-known/agent-card.json and /.well-known/agent.json, JSON-RPC at
// /a2a; each message runs the graph through graph.RunA2A), and the file
// registering its agents imports it for effect,
//
//	import _ "svc.dev/runtime/a2a"
//
// when one of them is of kind a2a: its init registers the client that runs
// them with package graph (graph.RegisterA2ACall). Packages graph and
// server do not import the SDK: a program that does not import this
// package links none of it.
//
// Each half stands without the other's files: a project gets the files of
// the half its graph uses, with this one. Package a2atest holds the
// stand-in agent the project's own tests call.
package a2a
