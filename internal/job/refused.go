package job

// RefusedError is returned by a backend's Launch when it knows the attempt
// can never start, however often it is launched again: the cluster refused
// one of its objects as invalid, say. The engine records it as the
// attempt's permanent end instead of retrying the launch.
type RefusedError struct {
	// Code is the KLN code of the refusal.
	Code string
	// Message says what was refused, in the backend's (or the cluster's)
	// own words.
	Message string
}

// Error returns the refusal's message.
func (e *RefusedError) Error() string { return e.Message }

// Status is the status of an attempt that ended refused: exited without
// starting, failed permanently with the refusal's code and message.
func (e *RefusedError) Status() Status {
	return Status{State: StateExited, ExitCode: -1, Code: e.Code, Message: e.Message, Permanent: true}
}
