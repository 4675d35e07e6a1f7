package server

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/kiln-ai/kiln/server/openai"
)

// Lingering close of a body over the limit, as nginx does: the 413 is
// written, the sending half of the connection is shut, and what the
// client still sends is read and dropped, bounded by time and not by
// amount, before the connection closes: while the client keeps sending
// (each read within lingerIdle of the last), up to lingerTime in all.
// Closing at once, with the client's bytes unread, makes the kernel answer
// them with a reset, and a client still writing its body then loses the
// 413 it has not read yet; a cap on the bytes drained (8 MiB once) did the
// same to any client whose body was larger than that.
const (
	lingerTime = 30 * time.Second
	lingerIdle = 2 * time.Second
)

// closeWriter is a connection whose sending half can be shut alone.
type closeWriter interface{ CloseWrite() error }

// lingerTooLarge answers 413 on the hijacked connection and lingers. It
// reports false, having done nothing, where the connection cannot be
// hijacked (HTTP/2); the caller then answers as usual.
func (s *Server) lingerTooLarge(w http.ResponseWriter, r *http.Request, mbe *http.MaxBytesError) bool {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	defer func() { _ = conn.Close() }()
	e := errorFor(mbe, s.cfg.RetryAfter)
	s.logError(r, e)
	body := openai.AppendError(nil, e)
	_ = conn.SetWriteDeadline(time.Now().Add(lingerIdle))
	writeRawResponse(brw.Writer, e.Status, body)
	if err := brw.Flush(); err != nil {
		return true
	}
	if cw, ok := conn.(closeWriter); ok {
		_ = cw.CloseWrite()
	}
	drainFor(conn, brw.Reader)
	return true
}

// drainFor reads and drops what the client sends while it keeps sending:
// until a read waits lingerIdle, the client closes, or lingerTime passes.
func drainFor(conn net.Conn, r *bufio.Reader) {
	end := time.Now().Add(lingerTime)
	buf := make([]byte, 64<<10)
	for {
		next := time.Now().Add(lingerIdle)
		if next.After(end) {
			next = end
		}
		_ = conn.SetReadDeadline(next)
		if _, err := r.Read(buf); err != nil {
			return
		}
	}
}

// writeRawResponse writes a whole HTTP/1.1 response that closes the
// connection.
func writeRawResponse(w *bufio.Writer, status int, body []byte) {
	_, _ = w.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	_, _ = w.WriteString("Content-Type: application/json\r\nConnection: close\r\nContent-Length: ")
	_, _ = w.WriteString(strconv.Itoa(len(body)))
	_, _ = w.WriteString("\r\n\r\n")
	_, _ = w.Write(body)
}

var _ closeWriter = (*net.TCPConn)(nil)
