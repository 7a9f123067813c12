//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package progress

import "golang.org/x/sys/unix"

// termWidth is the width in columns of the terminal at fd; 0 when unknown.
func termWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
