package kube

import (
	"context"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// coreClient reaches the core/v1 objects kiln uses (pods, services,
// config maps, secrets) through a REST client whose scheme knows core/v1
// alone. client-go's Clientset would do the same work but registers every
// API group of Kubernetes when the binary starts, which every kiln command
// would pay for.
type coreClient struct {
	rest   rest.Interface
	ns     string
	params runtime.ParameterCodec
}

func newCoreClient(rc *rest.Config, ns string) (*coreClient, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	cfg := rest.CopyConfig(rc)
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc2, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &coreClient{rest: rc2, ns: ns, params: runtime.NewParameterCodec(scheme)}, nil
}

// create creates obj, a core/v1 object of the given resource ("pods").
func (c *coreClient) create(ctx context.Context, resource string, obj runtime.Object) error {
	return c.rest.Post().Namespace(c.ns).Resource(resource).Body(obj).Do(ctx).Error()
}

func (c *coreClient) delete(ctx context.Context, resource, name string, opts metav1.DeleteOptions) error {
	return c.rest.Delete().Namespace(c.ns).Resource(resource).Name(name).Body(&opts).Do(ctx).Error()
}

// deleteCollection deletes the objects of resource that selector selects.
func (c *coreClient) deleteCollection(ctx context.Context, resource string, opts metav1.DeleteOptions, selector string) error {
	list := metav1.ListOptions{LabelSelector: selector}
	return c.rest.Delete().Namespace(c.ns).Resource(resource).VersionedParams(&list, c.params).Body(&opts).Do(ctx).Error()
}

func (c *coreClient) get(ctx context.Context, resource, name string, into runtime.Object) error {
	return c.rest.Get().Namespace(c.ns).Resource(resource).Name(name).Do(ctx).Into(into)
}

func (c *coreClient) list(ctx context.Context, resource string, opts metav1.ListOptions, into runtime.Object) error {
	return c.rest.Get().Namespace(c.ns).Resource(resource).VersionedParams(&opts, c.params).Do(ctx).Into(into)
}

func (c *coreClient) watch(ctx context.Context, resource string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rest.Get().Namespace(c.ns).Resource(resource).VersionedParams(&opts, c.params).Watch(ctx)
}

// mergePatch applies a JSON merge patch to one object.
func (c *coreClient) mergePatch(ctx context.Context, resource, name string, patch []byte) error {
	return c.rest.Patch(types.MergePatchType).Namespace(c.ns).Resource(resource).Name(name).Body(patch).Do(ctx).Error()
}

// logs streams a container's log.
func (c *coreClient) logs(ctx context.Context, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return c.rest.Get().Namespace(c.ns).Resource("pods").Name(pod).SubResource("log").VersionedParams(opts, c.params).Stream(ctx)
}

// informer watches the objects of resource that selector selects.
func (c *coreClient) informer(resource, selector string, example runtime.Object, list func() runtime.Object,
	resync time.Duration, indexers cache.Indexers,
) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			into := list()
			return into, c.list(ctx, resource, o, into)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return c.watch(ctx, resource, o)
		},
	}
	return cache.NewSharedIndexInformer(lw, example, resync, indexers)
}

// dynamicInformer is an informer of the objects of r that match selector,
// indexed by namespace, as client-go's dynamicinformer makes it. That
// package is not used: it imports client-go's typed informers of every
// API group, and with them every group's clientset and scheme, whose
// package initialisation was most of every kiln process's start-up.
func dynamicInformer(r dynamic.ResourceInterface, selector string, resync time.Duration) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return r.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return r.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}
