package local

import "time"

// runtimeGosched yields briefly while a test polls for a condition with a deadline.
func runtimeGosched() {
	<-time.After(5 * time.Millisecond)
}
