package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"syscall"
	"testing"

	"github.com/seed31a95821/informer/rest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
)

// How close is the watch decoder to the cost of decoding the objects
// themselves? Each benchmark decodes one event per op from a stream of
// benchEvents distinct, realistically sized pods (~5 KiB of JSON each,
// managedFields included), and compares:
//
//	wire          this package's one-pass decoder (frame -> typed object)
//	two-pass      the generic apimachinery path client-go takes: stream
//	              decoder -> metav1.WatchEvent{Object: RawExtension} ->
//	              second decode of the raw bytes by the negotiated codec
//	rawmessage    (JSON only) the obvious hand-written alternative: decode
//	              {type, object: json.RawMessage}, then unmarshal the raw
//	              object bytes: no generic machinery, but two passes
//	bare          the floor: json.Unmarshal / (*corev1.Pod).Unmarshal of the
//	              same pod's bytes, without frames, envelopes or events
//
// Run: go test -run '^$' -bench WatchDecode -benchmem ./reflector/wire/
//
// Besides wall-clock ns/op, each benchmark reports cpu-ns/op: the CPU time
// the process spent (user+system, garbage collector included) divided by
// the events decoded. On a shared machine waiting for a core inflates
// ns/op but not cpu-ns/op, so the ratios between rows stay meaningful.

const benchEvents = 256

// benchPod builds a pod shaped like one from a real cluster: owner
// reference, two containers with env, ports, probes and resources, a
// status with conditions, and the managedFields that dominate real pods.
func benchPod(i int) *corev1.Pod {
	name := "web-7d9f8b6c5d-" + strconv.Itoa(10000+i)
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10}
	container := func(n string) corev1.Container {
		return corev1.Container{
			Name: n, Image: "registry.example.com/team/" + n + ":v1.2.3",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}, {Name: "LOG_LEVEL", Value: "info"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts:   []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			LivenessProbe:  probe,
			ReadinessProbe: probe,
		}
	}
	ts := metav1.Unix(1700000000, 0)
	fields := []byte(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5f0c6a0e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:livenessProbe":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{}}}}}`)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: "web-7d9f8b6c5d-", Namespace: "prod", UID: types.UID("0b6e2f1c-8d7a-4c1e-9f3b-" + strconv.Itoa(100000000000+i)),
			ResourceVersion: strconv.Itoa(1000000 + i), CreationTimestamp: ts,
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d", "team": "payments"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2024-01-01T00:00:00Z", "prometheus.io/scrape": "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8b6c5d", UID: "5f0c6a0e", Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}`)}, Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("app"), container("sidecar")},
			Volumes:    []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo[int64](3607)}}}}}}},
			NodeName:   "node-" + strconv.Itoa(i%50), ServiceAccountName: "web", RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo[int64](300)}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0." + strconv.Itoa(i%250), PodIP: "10.244.1." + strconv.Itoa(i%250), StartTime: &ts, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ts}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: ts}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Ready: true, RestartCount: 0, Image: "registry.example.com/team/app:v1.2.3", ImageID: "registry.example.com/team/app@sha256:0123456789abcdef", ContainerID: "containerd://abcdef0123456789", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}},
				{Name: "sidecar", Ready: true, RestartCount: 1, Image: "registry.example.com/team/sidecar:v1.2.3", ImageID: "registry.example.com/team/sidecar@sha256:fedcba9876543210", ContainerID: "containerd://9876543210fedcba", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}},
			},
		},
	}
}

// benchData holds one media type's stream and the bare object bytes.
type benchData struct {
	stream     []byte   // benchEvents framed MODIFIED events
	objects    [][]byte // the same pods, bare (JSON; protobuf without envelope)
	frameBytes int64    // average frame size, for MB/s
}

func newBenchData(b *testing.B, mediaType string) benchData {
	b.Helper()
	enc := newWireEncoder(mediaType)
	var d benchData
	for i := range benchEvents {
		pod := benchPod(i)
		d.stream = append(d.stream, enc.frame(b, watch.Modified, pod)...)
		var bare []byte
		var err error
		if mediaType == rest.ContentTypeJSON {
			bare, err = json.Marshal(pod)
		} else {
			bare, err = pod.Marshal()
		}
		if err != nil {
			b.Fatal(err)
		}
		d.objects = append(d.objects, bare)
	}
	d.frameBytes = int64(len(d.stream) / benchEvents)
	return d
}

func BenchmarkWatchDecode(b *testing.B) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	if err != nil {
		b.Fatal(err)
	}
	for _, mt := range mediaTypes {
		name := map[string]string{rest.ContentTypeJSON: "json", rest.ContentTypeProtobuf: "protobuf"}[mt]
		data := newBenchData(b, mt)
		b.Run(name+"/wire", func(b *testing.B) { benchWire(b, mt, data, tgt) })
		b.Run(name+"/two-pass", func(b *testing.B) { benchTwoPass(b, mt, data) })
		if mt == rest.ContentTypeJSON {
			b.Run(name+"/rawmessage", func(b *testing.B) { benchRawMessage(b, data) })
		}
		b.Run(name+"/bare", func(b *testing.B) { benchBare(b, mt, data) })
	}
}

// reportCPU records the process CPU time consumed from now until the
// benchmark function returns, as cpu-ns/op. Use: defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func benchWire(b *testing.B, mediaType string, data benchData, tgt *target) {
	b.SetBytes(data.frameBytes)
	b.ReportAllocs()
	defer reportCPU(b)()
	var dec eventDecoder
	for i := 0; b.Loop(); i++ {
		if i%benchEvents == 0 {
			if mediaType == rest.ContentTypeJSON {
				dec = newJSONEventDecoder(bytes.NewReader(data.stream), rest.DefaultMaxFrameBytes, tgt)
			} else {
				dec = newProtobufEventDecoder(bytes.NewReader(data.stream), rest.DefaultMaxFrameBytes, tgt)
			}
		}
		ev, err := dec.Next()
		if err != nil || ev.Type != watch.Modified {
			b.Fatalf("event %d: %v %v", i, ev.Type, err)
		}
	}
}

// twoPassDecoder is the generic path, assembled from apimachinery the way
// client-go's REST client assembles it for a watch: a framed stream
// decoder yields metav1.WatchEvent (object kept as RawExtension bytes),
// then the negotiated object decoder decodes those bytes a second time.
type twoPassDecoder struct {
	events   streaming.Decoder
	embedded runtime.Decoder
}

func newTwoPassDecoder(tb testing.TB, mediaType string, r io.Reader) *twoPassDecoder {
	codecs := serializer.NewCodecFactory(NewScheme()).WithoutConversion()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		tb.Fatalf("no stream serializer for %s", mediaType)
	}
	frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(r))
	return &twoPassDecoder{
		events:   streaming.NewDecoder(frames, info.StreamSerializer.Serializer),
		embedded: codecs.DecoderToVersion(info.Serializer, nil),
	}
}

func (d *twoPassDecoder) next() (watch.EventType, runtime.Object, error) {
	var ev metav1.WatchEvent
	if _, _, err := d.events.Decode(nil, &ev); err != nil {
		return "", nil, err
	}
	obj, err := runtime.Decode(d.embedded, ev.Object.Raw)
	return watch.EventType(ev.Type), obj, err
}

func benchTwoPass(b *testing.B, mediaType string, data benchData) {
	b.SetBytes(data.frameBytes)
	b.ReportAllocs()
	defer reportCPU(b)()
	var dec *twoPassDecoder
	for i := 0; b.Loop(); i++ {
		if i%benchEvents == 0 {
			dec = newTwoPassDecoder(b, mediaType, bytes.NewReader(data.stream))
		}
		typ, obj, err := dec.next()
		if err != nil || typ != watch.Modified {
			b.Fatalf("event %d: %v %v", i, typ, err)
		}
		if _, ok := obj.(*corev1.Pod); !ok {
			b.Fatalf("got %T", obj)
		}
	}
}

func benchRawMessage(b *testing.B, data benchData) {
	b.SetBytes(data.frameBytes)
	b.ReportAllocs()
	defer reportCPU(b)()
	var dec *json.Decoder
	for i := 0; b.Loop(); i++ {
		if i%benchEvents == 0 {
			dec = json.NewDecoder(bytes.NewReader(data.stream))
		}
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			b.Fatal(err)
		}
		pod := &corev1.Pod{}
		if err := json.Unmarshal(ev.Object, pod); err != nil {
			b.Fatal(err)
		}
	}
}

func benchBare(b *testing.B, mediaType string, data benchData) {
	b.SetBytes(data.frameBytes)
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := 0; b.Loop(); i++ {
		pod := &corev1.Pod{}
		raw := data.objects[i%benchEvents]
		var err error
		if mediaType == rest.ContentTypeJSON {
			err = json.Unmarshal(raw, pod)
		} else {
			err = pod.Unmarshal(raw)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchDataDecodesIdentically guards the benchmark itself: all three
// paths must produce the same pods, or the comparison means nothing.
func TestBenchDataDecodesIdentically(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, mt := range mediaTypes {
		enc := newWireEncoder(mt)
		var stream []byte
		for i := range 3 {
			stream = append(stream, enc.frame(t, watch.Modified, benchPod(i))...)
		}
		var wireDec eventDecoder = newJSONEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
		if mt == rest.ContentTypeProtobuf {
			wireDec = newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
		}
		two := newTwoPassDecoder(t, mt, bytes.NewReader(stream))
		for i := range 3 {
			ev, err := wireDec.Next()
			if err != nil {
				t.Fatal(err)
			}
			_, obj, err := two.next()
			if err != nil {
				t.Fatal(err)
			}
			got, want := ev.Object.(*corev1.Pod), benchPod(i)
			ref := obj.(*corev1.Pod)
			ref.TypeMeta = want.TypeMeta // the generic path strips it; we keep it
			if !equalJSON(t, got, want) || !equalJSON(t, ref, want) {
				t.Fatalf("%s event %d differs", mt, i)
			}
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ja, jb) {
		t.Logf("got  %s\nwant %s", ja, jb)
		return false
	}
	return true
}
