package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// listenUnix listens on the Unix socket at path (GRPC_UDS). A socket file
// there that nothing listens on (a server that died left it) is removed
// first; a socket another process listens on, or a file that is not a
// socket, is an error naming GRPC_UDS, and is left as it is. The
// listener removes the socket when it is closed.
func listenUnix(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, udsError(path, err)
	}
	info, statErr := os.Lstat(path)
	if statErr != nil || info.Mode().Type() != fs.ModeSocket {
		return nil, udsError(path, errors.New("the path exists and is not a socket"))
	}
	if c, dialErr := net.Dial("unix", path); dialErr == nil {
		c.Close()
		return nil, udsError(path, errors.New("another server listens on it"))
	} else if !errors.Is(dialErr, syscall.ECONNREFUSED) {
		return nil, udsError(path, dialErr)
	}
	if err := os.Remove(path); err != nil {
		return nil, udsError(path, err)
	}
	ln, err = net.Listen("unix", path)
	return ln, udsError(path, err)
}

// udsError is err, when not nil, naming GRPC_UDS and path.
func udsError(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("GRPC_UDS %q: %w", path, err)
}
