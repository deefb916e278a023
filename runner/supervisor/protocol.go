package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// EncodeRequest encodes a trainer request for a warm supervisor's socket: its length (4 bytes, little-endian), then two lists, [path, dir,
// argv...] and the environment, each a count and then every string as its length and its bytes. The
// strings go as they are, whatever bytes they hold: no shell and no text encoding between the worker
// and the trainer. The log's descriptor goes with the first bytes.
func EncodeRequest(path, dir string, argv, env []string) []byte {
	b := make([]byte, 4, 4096)
	b = appendList(b, append([]string{path, dir}, argv...))
	b = appendList(b, env)
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func appendList(b []byte, l []string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(l)))
	for _, s := range l {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// maxRequest bounds a request's length: argv and environment together are far below it (the kernel's
// own limit on them is a quarter of the stack limit).
const maxRequest = 64 << 20

// errNoTrainer is the worker closing a warm supervisor's socket without a trainer.
var errNoTrainer = errors.New("no trainer")

type request struct {
	path, dir string
	argv, env []string
	log       int
}

// receive reads one trainer request from the socket fd.
func receive(fd int) (request, error) {
	var data, oob []byte
	buf := make([]byte, 64<<10)
	oobBuf := make([]byte, unix.CmsgSpace(4*4))
	for len(data) < 4 || len(data)-4 < int(binary.LittleEndian.Uint32(data)) {
		if len(data) >= 4 && binary.LittleEndian.Uint32(data) > maxRequest {
			return request{}, fmt.Errorf("request of %d bytes, want at most %d", binary.LittleEndian.Uint32(data), maxRequest)
		}
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oobBuf, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return request{}, err
		}
		oob = append(oob, oobBuf[:oobn]...)
		if n == 0 {
			if len(data) == 0 && len(oob) == 0 {
				return request{}, errNoTrainer
			}
			return request{}, errors.New("request cut short")
		}
		data = append(data, buf[:n]...)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if r, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, r...)
			}
		}
	}
	if len(fds) != 1 {
		for _, f := range fds {
			unix.Close(f)
		}
		return request{}, fmt.Errorf("log: got %d descriptors, want 1", len(fds))
	}
	rest := data[4:]
	first, rest, ok1 := readList(rest)
	env, rest, ok2 := readList(rest)
	if !ok1 || !ok2 || len(rest) != 0 || len(first) < 3 {
		unix.Close(fds[0])
		return request{}, errors.New("malformed request")
	}
	return request{path: first[0], dir: first[1], argv: first[2:], env: env, log: fds[0]}, nil
}

// readList reads a list appendList wrote; the list is never nil.
func readList(b []byte) ([]string, []byte, bool) {
	if len(b) < 4 {
		return nil, b, false
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(n) > uint64(len(b))/4 {
		return nil, b, false
	}
	l := make([]string, 0, n)
	for range n {
		if len(b) < 4 {
			return nil, b, false
		}
		m := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(m) > uint64(len(b)) {
			return nil, b, false
		}
		l = append(l, string(b[:m]))
		b = b[m:]
	}
	return l, b, true
}
