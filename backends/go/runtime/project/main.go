// Command __SVC_SERVICE_NAME__ serves the graph over HTTP (see README.md).
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"svc.dev/runtime/server"
)

// openAPI is the service's OpenAPI document, served at GET /openapi.json.
//
//go:embed openapi.json
var openAPI []byte

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	logger := newLogger()
	cfg := server.Config{Auth: authScheme, Logger: logger, OpenAPI: openAPI}
	if authScheme != "none" {
		// Never fall back to "no auth": a missing key stops the service.
		cfg.Key = os.Getenv(keyEnv)
		if cfg.Key == "" {
			return fmt.Errorf("%s is not set: set it to the key clients must send (%s), "+
				"or compile the graph with security.auth \"none\"", keyEnv, credentialHint())
		}
	}
	// What the graph needs before it serves (a rag node's embedding index,
	// a checkpointer's database).
	handler, closeService, err := server.Open(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer closeService()
	host := envOr("SVC_HOST", defaultHost)
	port := envOr("SVC_PORT", strconv.Itoa(defaultPort))
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("SVC_PORT %q is not a port number", port)
	}
	srv := &http.Server{
		Addr:              net.JoinHostPort(host, port),
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	logger.Info("listening", "service", serviceName, "version", serviceVersion, "address", srv.Addr, "auth", authScheme)
	select {
	case err := <-errs:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
	return nil
}

func credentialHint() string {
	if authScheme == "bearer" {
		return "as Authorization: Bearer <token>"
	}
	return "in the X-API-Key header"
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func newLogger() *slog.Logger {
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo,
		"warning": slog.LevelWarn, "error": slog.LevelError}[logLevel]
	opts := &slog.HandlerOptions{Level: level}
	if logFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
