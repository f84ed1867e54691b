package table

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The real server's columns for the built-in kinds, with the same names,
// types, priorities and descriptions (taken, as the real server takes
// them, from the types' field documentation where a column shows one
// field). The cells follow the real printers for the states a test server
// produces; printer details that need a kubelet (restart times, init
// container progress) are simplified.

const none = "<none>"

var builtinColumns = map[schema.GroupKind]Columns{
	{Kind: "Pod"}:                                 podColumns,
	{Kind: "Namespace"}:                           namespaceColumns,
	{Kind: "Node"}:                                nodeColumns,
	{Kind: "Service"}:                             serviceColumns,
	{Kind: "Event"}:                               eventColumns,
	{Kind: "ConfigMap"}:                           configMapColumns,
	{Kind: "Secret"}:                              secretColumns,
	{Kind: "Endpoints"}:                           endpointsColumns,
	{Group: "apps", Kind: "Deployment"}:           deploymentColumns,
	{Group: "apps", Kind: "ReplicaSet"}:           replicaSetColumns,
	{Group: "apps", Kind: "StatefulSet"}:          statefulSetColumns,
	{Group: "apps", Kind: "DaemonSet"}:            daemonSetColumns,
	{Group: "coordination.k8s.io", Kind: "Lease"}: leaseColumns,
}

func str(s string) string {
	if s == "" {
		return none
	}
	return s
}

var podColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic.", 0),
		column("Status", "string", "The aggregate status of the containers in this pod.", 0),
		column("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", 0),
		column("Age", "string", ageDescription, 0),
		column("IP", "string", corev1.PodStatus{}.SwaggerDoc()["podIP"], 1),
		column("Node", "string", corev1.PodSpec{}.SwaggerDoc()["nodeName"], 1),
		column("Nominated Node", "string", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"], 1),
		column("Readiness Gates", "string", corev1.PodSpec{}.SwaggerDoc()["readinessGates"], 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		pod := obj.(*corev1.Pod)
		ready, restarts := 0, int32(0)
		for _, cs := range pod.Status.ContainerStatuses {
			restarts += cs.RestartCount
			if cs.Ready && cs.State.Running != nil {
				ready++
			}
		}
		gates := none
		if n := len(pod.Spec.ReadinessGates); n > 0 {
			gates = fmt.Sprintf("%d/%d", readinessGatesTrue(pod), n)
		}
		return []any{pod.Name, fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers)), podStatus(pod),
			strconv.Itoa(int(restarts)), age(pod.CreationTimestamp, now), str(pod.Status.PodIP),
			str(pod.Spec.NodeName), str(pod.Status.NominatedNodeName), gates}
	},
}

func readinessGatesTrue(pod *corev1.Pod) int {
	n := 0
	for _, g := range pod.Spec.ReadinessGates {
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// podStatus is the STATUS column: the phase, or the reason that says
// more (a waiting or terminated container's, the pod's own), Terminating
// for a pod being deleted.
func podStatus(pod *corev1.Pod) string {
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	running := false
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		cs := pod.Status.ContainerStatuses[i]
		switch st := cs.State; {
		case st.Waiting != nil && st.Waiting.Reason != "":
			reason = st.Waiting.Reason
		case st.Terminated != nil && st.Terminated.Reason != "":
			reason = st.Terminated.Reason
		case st.Terminated != nil && st.Terminated.Signal != 0:
			reason = fmt.Sprintf("Signal:%d", st.Terminated.Signal)
		case st.Terminated != nil:
			reason = fmt.Sprintf("ExitCode:%d", st.Terminated.ExitCode)
		case st.Running != nil && cs.Ready:
			running = true
		}
	}
	if reason == "Completed" && running {
		reason = string(corev1.PodRunning)
	}
	if pod.DeletionTimestamp != nil {
		reason = "Terminating"
	}
	return reason
}

var namespaceColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Status", "string", "The status of the namespace", 0),
		column("Age", "string", ageDescription, 0),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		ns := obj.(*corev1.Namespace)
		return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
	},
}

var nodeColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Status", "string", "The status of the node", 0),
		column("Roles", "string", "The roles of the node", 0),
		column("Age", "string", ageDescription, 0),
		column("Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"], 0),
		column("Internal-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"], 1),
		column("External-IP", "string", corev1.NodeStatus{}.SwaggerDoc()["addresses"], 1),
		column("OS-Image", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"], 1),
		column("Kernel-Version", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"], 1),
		column("Container-Runtime", "string", corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"], 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		node := obj.(*corev1.Node)
		info := node.Status.NodeInfo
		runtimeVersion := info.ContainerRuntimeVersion
		if runtimeVersion == "" {
			runtimeVersion = "<unknown>"
		}
		return []any{node.Name, nodeStatus(node), nodeRoles(node), age(node.CreationTimestamp, now),
			info.KubeletVersion, nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
			str(info.OSImage), str(info.KernelVersion), runtimeVersion}
	},
}

func nodeStatus(node *corev1.Node) string {
	status := "Unknown"
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

func nodeRoles(node *corev1.Node) string {
	var roles []string
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				roles = append(roles, role)
			}
		case k == "kubernetes.io/role" && v != "":
			roles = append(roles, v)
		}
	}
	sort.Strings(roles)
	return str(strings.Join(roles, ","))
}

func nodeAddress(node *corev1.Node, typ corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == typ {
			return a.Address
		}
	}
	return none
}

var serviceColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"], 0),
		column("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"], 0),
		column("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"], 0),
		column("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"], 0),
		column("Age", "string", ageDescription, 0),
		column("Selector", "string", corev1.ServiceSpec{}.SwaggerDoc()["selector"], 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		svc := obj.(*corev1.Service)
		var ports []string
		for _, p := range svc.Spec.Ports {
			port := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
			if p.NodePort != 0 {
				port = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
			}
			ports = append(ports, port)
		}
		return []any{svc.Name, string(svc.Spec.Type), str(svc.Spec.ClusterIP), serviceExternalIP(svc),
			str(strings.Join(ports, ",")), age(svc.CreationTimestamp, now), labels.FormatLabels(svc.Spec.Selector)}
	},
}

func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	case corev1.ServiceTypeLoadBalancer:
		var ips []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			ips = append(ips, in.IP+in.Hostname)
		}
		ips = append(ips, svc.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	}
	return str(strings.Join(svc.Spec.ExternalIPs, ","))
}

var eventColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Last Seen", "string", corev1.Event{}.SwaggerDoc()["lastTimestamp"], 0),
		column("Type", "string", corev1.Event{}.SwaggerDoc()["type"], 0),
		column("Reason", "string", corev1.Event{}.SwaggerDoc()["reason"], 0),
		column("Object", "string", "The object that this event is about.", 0),
		column("Subobject", "string", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"], 1),
		column("Source", "string", corev1.EventSource{}.SwaggerDoc()["component"], 1),
		column("Message", "string", corev1.Event{}.SwaggerDoc()["message"], 0),
		column("First Seen", "string", corev1.Event{}.SwaggerDoc()["firstTimestamp"], 1),
		column("Count", "string", corev1.Event{}.SwaggerDoc()["count"], 1),
		column("Name", "string", nameDescription, 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		ev := obj.(*corev1.Event)
		first, last := ev.FirstTimestamp, ev.LastTimestamp
		if last.IsZero() && !ev.EventTime.IsZero() {
			last = metav1.NewTime(ev.EventTime.Time)
		}
		if first.IsZero() {
			first = last
		}
		lastSeen := age(last, now)
		if ev.Series != nil {
			lastSeen = fmt.Sprintf("%s (x%d over %s)", age(metav1.NewTime(ev.Series.LastObservedTime.Time), now),
				ev.Series.Count, age(first, now))
		} else if ev.Count > 1 {
			lastSeen = fmt.Sprintf("%s (x%d over %s)", lastSeen, ev.Count, age(first, now))
		}
		source := ev.Source.Component
		if source == "" {
			source = ev.ReportingController
		}
		if ev.Source.Host != "" {
			source += ", " + ev.Source.Host
		}
		object := strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
		return []any{lastSeen, ev.Type, ev.Reason, object, ev.InvolvedObject.FieldPath, source, strings.TrimSpace(ev.Message),
			age(first, now), int64(ev.Count), ev.Name}
	},
}

var configMapColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"], 0),
		column("Age", "string", ageDescription, 0),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		cm := obj.(*corev1.ConfigMap)
		return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
	},
}

var leaseColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"], 0),
		column("Age", "string", ageDescription, 0),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		lease := obj.(*coordinationv1.Lease)
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return []any{lease.Name, holder, age(lease.CreationTimestamp, now)}
	},
}

var secretColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Type", "string", corev1.Secret{}.SwaggerDoc()["type"], 0),
		column("Data", "string", corev1.Secret{}.SwaggerDoc()["data"], 0),
		column("Age", "string", ageDescription, 0),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		s := obj.(*corev1.Secret)
		return []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp, now)}
	},
}

var endpointsColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"], 0),
		column("Age", "string", ageDescription, 0),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		ep := obj.(*corev1.Endpoints)
		var list []string
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				for _, p := range ss.Ports {
					list = append(list, fmt.Sprintf("%s:%d", a.IP, p.Port))
				}
			}
		}
		return []any{ep.Name, str(strings.Join(list, ",")), age(ep.CreationTimestamp, now)}
	},
}

// templateCells are the CONTAINERS and IMAGES columns of a workload.
func templateCells(spec corev1.PodSpec) (string, string) {
	var names, images []string
	for _, c := range spec.Containers {
		names = append(names, c.Name)
		images = append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func selectorText(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return none
	}
	return s.String()
}

func replicas(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

var deploymentColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Ready", "string", "Number of the pod with ready state", 0),
		column("Up-to-date", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"], 0),
		column("Available", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"], 0),
		column("Age", "string", ageDescription, 0),
		containersColumn,
		imagesColumn,
		column("Selector", "string", appsv1.DeploymentSpec{}.SwaggerDoc()["selector"], 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		d := obj.(*appsv1.Deployment)
		names, images := templateCells(d.Spec.Template.Spec)
		// Up-to-date and Available are numbers in a string column, as on
		// the real server.
		return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
			int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp, now),
			names, images, selectorText(d.Spec.Selector)}
	},
}

var replicaSetColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Desired", "integer", appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"], 0),
		column("Current", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"], 0),
		column("Ready", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"], 0),
		column("Age", "string", ageDescription, 0),
		containersColumn,
		imagesColumn,
		column("Selector", "string", appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"], 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		rs := obj.(*appsv1.ReplicaSet)
		names, images := templateCells(rs.Spec.Template.Spec)
		return []any{rs.Name, int64(replicas(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
			age(rs.CreationTimestamp, now), names, images, selectorText(rs.Spec.Selector)}
	},
}

var statefulSetColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Ready", "string", "Number of the pod with ready state", 0),
		column("Age", "string", ageDescription, 0),
		containersColumn,
		imagesColumn,
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		s := obj.(*appsv1.StatefulSet)
		names, images := templateCells(s.Spec.Template.Spec)
		return []any{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)),
			age(s.CreationTimestamp, now), names, images}
	},
}

var daemonSetColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		column("Desired", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"], 0),
		column("Current", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"], 0),
		column("Ready", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"], 0),
		column("Up-to-date", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"], 0),
		column("Available", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"], 0),
		column("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"], 0),
		column("Age", "string", ageDescription, 0),
		containersColumn,
		imagesColumn,
		column("Selector", "string", appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"], 1),
	},
	Cells: func(obj runtime.Object, now time.Time) []any {
		d := obj.(*appsv1.DaemonSet)
		names, images := templateCells(d.Spec.Template.Spec)
		nodeSelector := labels.FormatLabels(d.Spec.Template.Spec.NodeSelector)
		st := d.Status
		return []any{d.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
			int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), nodeSelector, age(d.CreationTimestamp, now),
			names, images, selectorText(d.Spec.Selector)}
	},
}
