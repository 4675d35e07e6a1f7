package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// runHealth probes a running server's GET /health and exits 0 when it
// answers 200 (ready), 1 otherwise (not ready, draining, or unreachable)
// with one line saying why. It exists for the container image's
// HEALTHCHECK: the image has no shell and no curl.
//
// The default URL follows KILN_ADDR (the address the image's server
// listens on), with an unspecified host (0.0.0.0, ::, empty) probed on
// loopback.
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kiln health", flag.ContinueOnError)
	fs.SetOutput(stdout)
	url := fs.String("url", defaultHealthURL(os.Getenv(envName("addr"))), "the server's health URL")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	quiet := fs.Bool("quiet", false, "print nothing when healthy")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("kiln health: unexpected argument %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return fmt.Errorf("health: nothing is listening at %s (%w)", *url, op.Err)
		}
		return fmt.Errorf("health: %s: %w", *url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %s (not ready, or draining)", *url, resp.Status)
	}
	if !*quiet {
		_, err = fmt.Fprintf(stdout, "healthy: %s answered %s\n", *url, resp.Status)
	}
	return err
}

// defaultHealthURL is the /health URL of a server listening on addr
// ("" is the serve default, 127.0.0.1:8420).
func defaultHealthURL(addr string) string {
	if addr == "" {
		addr = "127.0.0.1:8420"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/health"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/health"
}
