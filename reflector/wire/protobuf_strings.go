package wire

// A pod's repeated strings taken from the strings table while decoding:
// an optimisation of the protobuf parts path (protobuf_parts.go). Delete
// this file and its hooks (decodeStatus's lists, the strings split off
// with the metadata's and the spec's parts, decodeStringMap in
// decodePart) and the package is still correct, only more wasteful.
//
// Why it pays: the generated Unmarshal makes a new string of every string
// field it reads, and the interning that runs on each decoded object
// (finishEventObject: share.Table.Strings) then puts the table's copy in
// its place, so that for a condition's type, an image, a namespace, a
// manager's name, an annotation's key, the string just made is garbage at
// once. Here the fields whose values repeat across pods are split off the
// message (protobuf_split.go) and set to the table's copy, looked up by
// their bytes (share.Table.StringOf), which allocates nothing when the
// table keeps the string. The rest of each message is decoded by its
// generated Unmarshal, as before. A managedFields entry's document
// (fieldsV1), equal in the pods of one ReplicaSet for the controller's
// entry, is taken alike from the share table (PodParts.FindBytes) when
// kept there, instead of a copy that Share would replace by it.
//
// Why it is correct: a string field is set to the last of its
// occurrences, as the generated code leaves it, and the table's copy of
// a string equals the bytes it was found by. A repeated message field is
// decoded element by element into a slice sized first
// (protobuf_presize.go), as the generated code appends them. Anything
// else (a string field of another wire type, an element that does not
// decode) returns false, and the whole pod is decoded afresh by the
// generated Unmarshal, which reports the error.
//
// Why it is safe: a string cannot be modified. A fieldsV1 document taken
// from the share table is shared with the pods that hold it already; the
// parts path runs only for callers that never modify a decoded object
// (Options.ShareParts), as for the parts it shares (protobuf_parts.go,
// "Why it is safe"). What is not found is copied out of the frame, which
// the decoder reuses for the next one.

import (
	"github.com/seed31a95821/informer/internal/share"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastString returns the value of the last of raw's occurrences of a
// string field: the one the generated decoder leaves. false: one of them
// is not length-delimited, which the generated decoder refuses.
func lastString(raw []byte) (val []byte, ok bool) {
	for off := 0; off < len(raw); {
		_, n, ok := nextField(raw[off:])
		if !ok || raw[off]&7 != 2 { // a field key's low bits are its wire type
			return nil, false
		}
		if val, ok = singleMessage(raw[off : off+n]); !ok {
			return nil, false
		}
		off += n
	}
	return val, true
}

// decodeWithStrings decodes msg into into, except its string fields
// nums, whose values it hands to set (set(i, v) for nums[i], when
// present). At most 8 fields.
func decodeWithStrings(into protoUnmarshaler, msg []byte, nums []int32, set func(i int, v []byte)) bool {
	var spans [8]span
	return splitMessage(into, msg, nums, 0, spans[:len(nums)]) && spanStrings(msg, spans[:len(nums)], set)
}

// spanStrings calls set with the bytes of each string field of msg that
// spans locate (i its index in spans; the last occurrence, as the
// generated decoder keeps), skipping fields not sent. false: one is not a
// string.
func spanStrings(msg []byte, spans []span, set func(i int, v []byte)) bool {
	for i, s := range spans {
		if s.end == 0 {
			continue
		}
		v, ok := lastString(s.of(msg))
		if !ok {
			return false
		}
		set(i, v)
	}
	return true
}

// elements calls f with the value of each of raw's occurrences of a
// message field, in order. false: one is not length-delimited, or f
// returned false.
func elements(raw []byte, f func(val []byte) bool) bool {
	for off := 0; off < len(raw); {
		_, n, ok := nextField(raw[off:])
		if !ok || raw[off]&7 != 2 {
			return false
		}
		val, ok := singleMessage(raw[off : off+n])
		if !ok || !f(val) {
			return false
		}
		off += n
	}
	return true
}

// The fields of PodStatus split off by decodeStatus: its strings that
// repeat (phase, reason, hostIP, qosClass, nominatedNodeName), then its
// lists (conditions, containerStatuses, initContainerStatuses, podIPs,
// hostIPs: presizeStatus's order).
var statusSplit = []int32{1, 4, 5, 9, 11, 2, 8, 10, 12, 16}

// decodeStatus decodes raw, the occurrences of the Pod's status field,
// into p.Status, its lists sized first (protobuf_presize.go) and its
// repeated strings taken from strs. false: raw does not decode here.
func decodeStatus(p *corev1.Pod, raw []byte, strs *share.Table) bool {
	if len(raw) == 0 {
		return true
	}
	msg, ok := singleMessage(raw)
	if !ok { // sent twice: merged by the generated decoder
		return p.Unmarshal(raw) == nil
	}
	s := &p.Status
	var spans [10]span
	if !splitMessage(s, msg, statusSplit, 0, spans[:]) {
		return false
	}
	presizeStatus(s, spans[5:])
	return spanStrings(msg, spans[:5], func(i int, v []byte) {
		str := strs.StringOf(v)
		switch i {
		case 0:
			s.Phase = corev1.PodPhase(str)
		case 1:
			s.Reason = str
		case 2:
			s.HostIP = str
		case 3:
			s.QOSClass = corev1.PodQOSClass(str)
		case 4:
			s.NominatedNodeName = str
		}
	}) && elements(spans[5].of(msg), func(v []byte) bool {
		s.Conditions = append(s.Conditions, corev1.PodCondition{})
		c := &s.Conditions[len(s.Conditions)-1]
		return decodeWithStrings(c, v, conditionStrings, func(i int, v []byte) {
			str := strs.StringOf(v)
			switch i {
			case 0:
				c.Type = corev1.PodConditionType(str)
			case 1:
				c.Status = corev1.ConditionStatus(str)
			case 2:
				c.Reason = str
			case 3:
				c.Message = str
			}
		})
	}) && containerStatuses(&s.ContainerStatuses, spans[6].of(msg), strs) &&
		containerStatuses(&s.InitContainerStatuses, spans[7].of(msg), strs) &&
		elements(spans[8].of(msg), func(v []byte) bool {
			s.PodIPs = append(s.PodIPs, corev1.PodIP{})
			ip := &s.PodIPs[len(s.PodIPs)-1]
			return decodeWithStrings(ip, v, ipString, func(_ int, v []byte) {
				// The pod's own IP, in podIP and in podIPs: one string
				// (not kept in the table, where it would never meet a
				// twin).
				if string(v) == s.PodIP {
					ip.IP = s.PodIP
				} else {
					ip.IP = string(v)
				}
			})
		}) &&
		elements(spans[9].of(msg), func(v []byte) bool {
			s.HostIPs = append(s.HostIPs, corev1.HostIP{})
			ip := &s.HostIPs[len(s.HostIPs)-1]
			return decodeWithStrings(ip, v, ipString, func(_ int, v []byte) { ip.IP = strs.StringOf(v) })
		})
}

var (
	conditionStrings = []int32{1, 2, 5, 6}             // PodCondition: type, status, reason, message
	statusStrings    = []int32{1, 6, 7}                // ContainerStatus: name, image, imageID
	ipString         = []int32{1}                      // PodIP, HostIP: ip
	entrySplit       = []int32{1, 2, 3, 6, 8, 7}       // ManagedFieldsEntry: manager, operation, apiVersion, fieldsType, subresource; fieldsV1
	metaStrings      = []int32{2, 3}                   // ObjectMeta: generateName, namespace
	specStrings      = []int32{3, 6, 8, 9, 10, 19, 24} // PodSpec: restartPolicy, dnsPolicy, serviceAccountName, serviceAccount, nodeName, schedulerName, priorityClassName
)

// containerStatuses appends to *dst the container statuses whose
// occurrences are raw.
func containerStatuses(dst *[]corev1.ContainerStatus, raw []byte, strs *share.Table) bool {
	return elements(raw, func(v []byte) bool {
		*dst = append(*dst, corev1.ContainerStatus{})
		c := &(*dst)[len(*dst)-1]
		return decodeWithStrings(c, v, statusStrings, func(i int, v []byte) {
			str := strs.StringOf(v)
			switch i {
			case 0:
				c.Name = str
			case 1:
				c.Image = str
			case 2:
				c.ImageID = str
			}
		})
	})
}

// managedFieldsEntries appends to m.ManagedFields the entries whose
// occurrences are raw. An entry's fieldsV1 is found in table when kept
// there (the controller's entry, equal in the pods of one ReplicaSet),
// else copied, as the generated decoder does (entryFields).
func managedFieldsEntries(m *metav1.ObjectMeta, raw []byte, strs *share.Table, table PodParts) bool {
	return elements(raw, func(v []byte) bool {
		m.ManagedFields = append(m.ManagedFields, metav1.ManagedFieldsEntry{})
		e := &m.ManagedFields[len(m.ManagedFields)-1]
		var spans [6]span
		if !splitMessage(e, v, entrySplit, 0, spans[:]) {
			return false
		}
		return spanStrings(v, spans[:5], func(i int, b []byte) {
			str := strs.StringOf(b)
			switch i {
			case 0:
				e.Manager = str
			case 1:
				e.Operation = metav1.ManagedFieldsOperationType(str)
			case 2:
				e.APIVersion = str
			case 3:
				e.FieldsType = str
			case 4:
				e.Subresource = str
			}
		}) && (spans[5].end == 0 || entryFields(e, spans[5].of(v), table))
	})
}

// entryFields sets e.FieldsV1 from raw, the occurrences of its field: a
// FieldsV1 message, which holds one field, raw bytes (field 1), taken
// from table when kept there, else copied. A FieldsV1 of another shape
// (sent twice, empty, or its field sent twice) is decoded by the generated
// Unmarshal, which merges them. false: it does not decode.
func entryFields(e *metav1.ManagedFieldsEntry, raw []byte, table PodParts) bool {
	msg, ok := singleMessage(raw)
	var b []byte
	if ok && len(msg) > 0 && msg[0] == 1<<3|2 {
		b, ok = singleMessage(msg)
	}
	if !ok || b == nil {
		return e.Unmarshal(raw) == nil
	}
	var kept []byte
	if table != nil {
		kept = table.FindBytes(b)
	}
	if kept == nil {
		kept = append([]byte{}, b...) // never nil, as the generated decoder leaves it
	}
	e.FieldsV1 = &metav1.FieldsV1{Raw: kept}
	return true
}

// metaString sets p's metadata string i (metaStrings) to v.
func metaString(p *corev1.Pod, i int, v string) {
	switch i {
	case 0:
		p.GenerateName = v
	case 1:
		p.Namespace = v
	}
}

// specString sets p's spec string i (specStrings) to v.
func specString(p *corev1.Pod, i int, v string) {
	s := &p.Spec
	switch i {
	case 0:
		s.RestartPolicy = corev1.RestartPolicy(v)
	case 1:
		s.DNSPolicy = corev1.DNSPolicy(v)
	case 2:
		s.ServiceAccountName = v
	case 3:
		s.DeprecatedServiceAccount = v
	case 4:
		s.NodeName = v
	case 5:
		s.SchedulerName = v
	case 6:
		s.PriorityClassName = v
	}
}

// decodeStringMap decodes raw, the occurrences of a map<string, string>
// field, as the generated decoder does, each key and value taken from
// strs. false when an entry is not exactly its key then its value (the
// generated decoder then decides: it also reads entries with a field
// missing, or with unknown fields).
func decodeStringMap(raw []byte, strs *share.Table) (map[string]string, bool) {
	n := 0
	if !elements(raw, func([]byte) bool { n++; return true }) {
		return nil, false
	}
	m := make(map[string]string, min(n, presizeMax)) // n counts entries, not keys (protobuf_presize.go)
	ok := elements(raw, func(entry []byte) bool {
		if len(entry) == 0 || entry[0] != 1<<3|2 {
			return false
		}
		_, kn, ok := nextField(entry)
		if !ok {
			return false
		}
		k, _ := singleMessage(entry[:kn])
		rest := entry[kn:]
		if len(rest) == 0 || rest[0] != 2<<3|2 {
			return false
		}
		v, ok := singleMessage(rest) // the value, and nothing after it
		if !ok {
			return false
		}
		m[strs.StringOf(k)] = strs.StringOf(v)
		return true
	})
	return m, ok
}
