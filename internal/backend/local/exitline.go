package local

import (
	"slices"
	"strconv"
	"time"
)

// plainExit reports whether the end r of attempt id is of the kind
// exitLine writes: exit codes, a signal, the process that failed, the
// stopped and system flags and the times, with strings that JSON writes
// as they are.
func plainExit(id string, r *statusRecord) bool {
	if len(r.StoppedProcesses) > 0 || len(r.LeftRunning) > 0 || len(r.Dropped) > 0 || r.Running ||
		r.StartError != "" || r.NotFound || len(r.OOMKilled) > 0 || r.MemoryLimit != 0 || len(r.LogsLost) > 0 {
		return false
	}
	if !plainString(id) || !plainString(r.Signal) || !plainString(r.Failed) {
		return false
	}
	for name := range r.Processes {
		if !plainString(name) {
			return false
		}
	}
	return true
}

// plainString reports whether json.Marshal writes s between quotes as it
// is: printable ASCII, none of the characters it escapes.
func plainString(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// exitLine is the journal line of attempt id's end r, of the kind
// plainExit accepts, byte for byte as json.Marshal writes it.
func exitLine(id string, r *statusRecord) ([]byte, error) {
	b := make([]byte, 0, 192)
	b = append(append(append(b, `{"id":"`...), id...), `","exit":{"exitCode":`...)
	b = strconv.AppendInt(b, int64(r.ExitCode), 10)
	b = appendStringField(b, "signal", r.Signal)
	b = appendStringField(b, "failed", r.Failed)
	if len(r.Processes) > 0 {
		b = append(b, `,"processes":{`...)
		names := make([]string, 0, len(r.Processes))
		for name := range r.Processes {
			names = append(names, name)
		}
		slices.Sort(names)
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), name...), `":`...)
			b = strconv.AppendInt(b, int64(r.Processes[name]), 10)
		}
		b = append(b, '}')
	}
	if r.Stopped {
		b = append(b, `,"stopped":true`...)
	}
	if r.System {
		b = append(b, `,"system":true`...)
	}
	var err error
	if b, err = appendTimeField(b, "startedAt", r.StartedAt); err != nil {
		return nil, err
	}
	if b, err = appendTimeField(b, "finishedAt", r.FinishedAt); err != nil {
		return nil, err
	}
	return append(b, "}}\n"...), nil
}

// appendStringField appends ,"name":"s" if s is set (omitempty).
func appendStringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return append(append(append(append(append(b, `,"`...), name...), `":"`...), s...), '"')
}

// appendTimeField appends ,"name": and t as time.Time writes itself.
func appendTimeField(b []byte, name string, t time.Time) ([]byte, error) {
	v, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(append(append(append(b, `,"`...), name...), `":`...), v...), nil
}
