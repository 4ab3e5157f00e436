package kube

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

var (
	unstructuredInt    = unstructured.NestedInt64
	unstructuredString = unstructured.NestedString
)
