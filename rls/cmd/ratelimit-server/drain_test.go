package main_test

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMDrains sends SIGTERM while two /json calls are in flight,
// their bodies half sent: the one whose body is then completed is
// answered, and the server exits although the other never completes.
func TestSIGTERMDrains(t *testing.T) {
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT=")
	body := `{"domain":"example","descriptors":[{"entries":[{"key":"remote_address","value":"10.0.0.7"}]}]}`
	// half starts a call and sends half its body once the handler reads
	// it (the server's 100 Continue): the call is then surely in flight.
	half := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.http)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		head := "POST /json HTTP/1.1\r\nHost: rls\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if _, err := c.Write([]byte(head)); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		if res, err := http.ReadResponse(r, nil); err != nil || res.StatusCode != http.StatusContinue {
			t.Fatalf("no 100 Continue: %v %v", res, err)
		}
		if _, err := c.Write([]byte(body[:10])); err != nil {
			t.Fatal(err)
		}
		return c, r
	}
	finished, answer := half()
	half() // never completes
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The server has begun to stop once it accepts no new connection.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", p.http)
		if err != nil {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections after SIGTERM")
		}
	}
	if _, err := finished.Write([]byte(body[10:])); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(answer, nil)
	if err != nil {
		t.Fatalf("the call in flight was not answered: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the call in flight: %d, want 200", res.StatusCode)
	}
	exited := make(chan error, 1)
	go func() {
		<-rest // to the end before Wait closes the pipe
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second): // bounds the test only; the drain's bound is 5 s
		t.Fatal("the server did not exit with a call stuck in flight")
	}
}
