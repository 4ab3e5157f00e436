package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

var _ backend.Networker = (*Backend)(nil)

// Network implements backend.Networker. Every node of a local job is this
// machine, reached on the loopback address. Ports are picked free by the
// kernel and written to the attempt's ports.json, so asking again gives
// the same ports and two jobs never share one.
func (b *Backend) Network(_ context.Context, id job.AttemptID, nodes, n int) (job.Network, error) {
	if err := checkID(id.String()); err != nil {
		return job.Network{}, err
	}
	netw := job.Network{Hosts: make([]string, nodes)}
	for i := range netw.Hosts {
		netw.Hosts[i] = "127.0.0.1"
	}
	dir := AttemptDir(b.cfg.Home, id)
	path := filepath.Join(dir, "ports.json")
	found, err := readJSON(path, &netw.Ports)
	if err != nil || (found && len(netw.Ports) == n) {
		return netw, err
	}
	if netw.Ports, err = freePorts(n); err != nil {
		return netw, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return netw, err
	}
	return netw, writeJSON(path, netw.Ports)
}

// freePorts asks the kernel for n distinct free TCP ports on loopback.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserving a port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
