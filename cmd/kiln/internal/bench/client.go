package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Client sends chat completions to one OpenAI-compatible endpoint.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8420 (the /v1/... paths are appended)
	Token   string // bearer token, optional
	HTTP    *http.Client
}

type chatRequest struct {
	Model              string         `json:"model"`
	Messages           []Message      `json:"messages"`
	MaxTokens          int            `json:"max_tokens"`
	Temperature        float64        `json:"temperature"`
	Seed               uint64         `json:"seed"`
	Stream             bool           `json:"stream"`
	StreamOptions      *streamOptions `json:"stream_options,omitempty"`
	IncludePerformance *bool          `json:"include_performance,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Content *string `json:"content"`
		} `json:"delta"`
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        *int `json:"prompt_tokens"`
		CompletionTokens    int  `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Timings  *PeerTimings `json:"timings"` // llama-server's, on its final chunk
	Metadata *struct {
		Performance *struct {
			Latency json.RawMessage `json:"latency"`
		} `json:"performance"`
	} `json:"metadata"`
	// Error is set on an OpenAI-shaped error object, which a server sends
	// as a data line when a stream fails after its headers went out.
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// failedFinish is the failure a finish_reason reports, or nil: Kiln ends a
// stream whose generation failed with "error" and one it evicted with
// "timeout" (docs/http-api.md#post-v1chatcompletions), after status 200. Such a request is a
// failed sample, not a success.
func failedFinish(reason string) error {
	switch reason {
	case "error", "timeout":
		return fmt.Errorf("finish_reason %q", reason)
	}
	return nil
}

// Do sends one request and records what came back into s. It never returns
// an error: a failure is part of the sample (s.Error), because failed
// requests are evidence.
func (c *Client) Do(ctx context.Context, w *Workload, msgs []Message, seed uint64, s *Sample) {
	req := chatRequest{
		Model: w.Model, Messages: msgs, MaxTokens: w.MaxTokens,
		Temperature: w.Temperature, Seed: seed, Stream: w.Stream,
	}
	if w.Stream {
		req.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if w.ServerTiming {
		t := true
		req.IncludePerformance = &t
		s.Server = &ServerView{}
	}
	body, err := json.Marshal(req)
	if err != nil {
		s.Error = err.Error()
		return
	}
	var start time.Time
	since := func() float64 { return float64(time.Since(start).Nanoseconds()) / 1e6 }
	defer func() { s.E2EMs = since() }()
	resp, err := c.post(ctx, body, s, &start)
	if err != nil {
		s.Error = err.Error()
		return
	}
	defer resp.Body.Close()
	s.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		s.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
		return
	}
	if !w.Stream {
		c.readWhole(resp.Body, w, s, since)
		return
	}
	if err := c.readStream(resp.Body, w, s, since); err != nil {
		s.Error = err.Error()
	}
}

// post sends the chat request, setting *start as it goes out. A request
// that failed on a kept-alive connection before any response came (the
// server closed the connection as the request went out: llama-server does
// after a few requests on one connection) is sent once more on a new one,
// counted in s.Retries, its clock started again; Go's transport does the
// same for idempotent requests only.
func (c *Client) post(ctx context.Context, body []byte, s *Sample, start *time.Time) (*http.Response, error) {
	for {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost,
			strings.TrimRight(c.BaseURL, "/")+"/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		hreq.Header.Set("Content-Type", "application/json")
		if c.Token != "" {
			hreq.Header.Set("Authorization", "Bearer "+c.Token)
		}
		*start = time.Now()
		resp, err := c.HTTP.Do(hreq)
		if err != nil && reused && s.Retries == 0 && ctx.Err() == nil && closedUnder(err) {
			s.Retries++
			continue
		}
		return resp, err
	}
}

// closedUnder reports whether err says the connection closed as the
// request went out: the server's EOF or reset, or the transport's own
// close of a connection whose EOF it had just read.
func closedUnder(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (c *Client) readWhole(r io.Reader, w *Workload, s *Sample, since func() float64) {
	var ch chunk
	if err := json.NewDecoder(r).Decode(&ch); err != nil {
		s.Error = "decoding response: " + err.Error()
		return
	}
	t := since()
	s.TTFTMs = &t
	if len(ch.Choices) > 0 && ch.Choices[0].FinishReason != nil {
		s.FinishReason = *ch.Choices[0].FinishReason
	}
	if err := failedFinish(s.FinishReason); err != nil {
		s.Error = err.Error()
	}
	s.recordUsage(&ch)
	s.resolveCached()
	if w.Turns > 1 && len(ch.Choices) > 0 && ch.Choices[0].Message.Content != nil {
		s.Reply = *ch.Choices[0].Message.Content
	}
	if s.Server != nil && ch.Metadata != nil && ch.Metadata.Performance != nil {
		s.Server.Latency = ch.Metadata.Performance.Latency
	}
}

// recordUsage keeps a chunk's usage and llama-server timings in s.
func (s *Sample) recordUsage(ch *chunk) {
	if u := ch.Usage; u != nil {
		s.OutputTokens, s.UsageTokens = u.CompletionTokens, true
		if u.PromptTokens != nil {
			n := *u.PromptTokens
			s.PromptTokens = &n
		}
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			n := *d.CachedTokens
			s.CachedTokens, s.CachedFrom = &n, CachedFromUsage
		}
	}
	if ch.Timings != nil {
		s.Timings = ch.Timings
	}
}

// readStream parses the SSE body: content chunks, kiln.token_timing events,
// the terminal chunk and usage, until [DONE]. A stream that ends without
// [DONE] (the server closed it early), carries an error event, or
// finishes with reason error or timeout is an error.
func (c *Client) readStream(r io.Reader, w *Workload, s *Sample, since func() float64) error {
	var reply strings.Builder
	defer func() {
		if w.Turns > 1 {
			s.Reply = reply.String()
		}
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 8<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue
		}
		at := since()
		data := bytes.TrimSpace(line[len("data:"):])
		if bytes.Equal(data, []byte("[DONE]")) {
			if !s.UsageTokens {
				s.OutputTokens = len(s.ChunkMs)
			}
			s.resolveCached()
			return failedFinish(s.FinishReason)
		}
		if bytes.Contains(data, []byte(`"kiln.token_timing"`)) && s.Server != nil {
			var ev TimingEvent
			if err := json.Unmarshal(data, &ev); err != nil {
				return fmt.Errorf("timing event: %w", err)
			}
			ev.Raw = append(json.RawMessage(nil), data...)
			s.Server.Events = append(s.Server.Events, ev)
			s.Server.ReceiptMs = append(s.Server.ReceiptMs, at)
			continue
		}
		var ch chunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return fmt.Errorf("chunk: %w", err)
		}
		if ch.Error != nil {
			return fmt.Errorf("stream error event: %s", ch.Error.Message)
		}
		s.recordUsage(&ch)
		if ch.Metadata != nil && ch.Metadata.Performance != nil && s.Server != nil {
			s.Server.Latency = ch.Metadata.Performance.Latency
		}
		if len(ch.Choices) == 0 {
			continue
		}
		if fr := ch.Choices[0].FinishReason; fr != nil {
			s.FinishReason = *fr
		}
		if content := ch.Choices[0].Delta.Content; content != nil && *content != "" {
			if len(s.ChunkMs) == 0 {
				t := at
				s.TTFTMs = &t
			} else {
				s.GapsMs = append(s.GapsMs, at-s.ChunkMs[len(s.ChunkMs)-1])
			}
			s.ChunkMs = append(s.ChunkMs, at)
			reply.WriteString(*content)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stream: %w", err)
	}
	return errors.New("stream ended without [DONE]")
}

// get reads path from the server with a 10-second limit: the body of a
// 200 answer, or of one of the other statuses ok names.
func (c *Client) get(ctx context.Context, path string, ok ...int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && !slices.Contains(ok, resp.StatusCode) {
		return nil, fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	return b, nil
}
