//go:build svcstub

// Stand-ins for what a generated project declares in package main
// (config.go), for the repository only: the backend never copies this file,
// nor openapi.json beside it, which main.go embeds (see ../graph/svcstub.go).

package main

const serviceName = "svcstub"
const serviceVersion = "0.1.0"
const authScheme = "api_key"
const keyEnv = "SVC_API_KEY"
const defaultHost = "127.0.0.1"
const defaultPort = 8080
const logLevel = "info"
const logFormat = "text"
