package v1alpha1

import "encoding/json"

// Quantity is a Kubernetes-style resource quantity such as "500m", "2", or
// "4Gi". In YAML it may be written as a string or a bare number.
type Quantity string

// UnmarshalJSON accepts a JSON string or number.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*q = Quantity(s)
		return nil
	}
	var f json.Number
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*q = Quantity(f.String())
	return nil
}
