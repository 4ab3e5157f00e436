// Package resource sizes what tasks take from a machine and keeps the pool
// they take it from, so tasks queue instead of oversubscribing the machine.
package resource

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Request is an amount of each resource. The zero Request takes nothing.
type Request struct {
	// MilliCPU is thousandths of a core.
	MilliCPU int64 `json:"milliCPU"`
	// Memory is bytes.
	Memory int64 `json:"memory"`
	// GPU is whole devices.
	GPU int64 `json:"gpu"`
}

// Fits reports whether r fits in free.
func (r Request) Fits(free Request) bool {
	return r.MilliCPU <= free.MilliCPU && r.Memory <= free.Memory && r.GPU <= free.GPU
}

// Add returns r plus o.
func (r Request) Add(o Request) Request {
	return Request{r.MilliCPU + o.MilliCPU, r.Memory + o.Memory, r.GPU + o.GPU}
}

// Sub returns r minus o.
func (r Request) Sub(o Request) Request {
	return Request{r.MilliCPU - o.MilliCPU, r.Memory - o.Memory, r.GPU - o.GPU}
}

// String formats r for people: "cpu 1500m, memory 2Gi, gpu 0".
func (r Request) String() string {
	return fmt.Sprintf("cpu %s, memory %s, gpu %d",
		resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
		resource.NewQuantity(r.Memory, resource.BinarySI), r.GPU)
}

// ParseCPU parses a CPU quantity ("2", "500m") into millicores, from 0
// to MaxMilliCPU. Its errors are *apiv1.Error: KLN-1010 for a malformed
// quantity, KLN-1023 for one out of range; the caller names the field.
func ParseCPU(s string) (int64, error) {
	q, err := bounded(s, *resource.NewMilliQuantity(MaxMilliCPU, resource.DecimalSI), "CPUs", "100000 (100000000m)")
	if err != nil {
		return 0, err
	}
	return q.MilliValue(), nil
}

// ParseBytes parses a memory quantity ("512Mi", "2G") into bytes, from 0
// to MaxMemory, with ParseCPU's errors.
func ParseBytes(s string) (int64, error) {
	q, err := bounded(s, *resource.NewQuantity(MaxMemory, resource.BinarySI), "amounts of memory", "1Ei (2^60 bytes)")
	if err != nil {
		return 0, err
	}
	return q.Value(), nil
}

// FormatBytes writes n bytes as a memory quantity, as ParseBytes reads
// them ("64Mi").
func FormatBytes(n int64) string {
	return resource.NewQuantity(n, resource.BinarySI).String()
}

// ParseCount parses a whole number of devices, from 0 to MaxGPU, with
// ParseCPU's errors.
func ParseCount(s string) (int64, error) {
	q, err := bounded(s, *resource.NewQuantity(MaxGPU, resource.DecimalSI), "counts of GPUs", "100000")
	if err != nil {
		return 0, err
	}
	n, ok := q.AsInt64()
	if !ok || q.MilliValue() != n*1000 {
		return 0, apiv1.Errorf(apiv1.CodeQuantity, Quote(s)+" is not a whole number")
	}
	return n, nil
}
