package processor

// The coalescing rules: what a handler past its backlog limit is told when
// a newer notification of an object meets one still pending. mergeRules is
// the one statement of them: merge follows it, and the table in
// docs/reliability.md ("Coalescing rules") is rendered from it
// (TestReliabilityDocCoalescingTable; go test -run that -rewrite updates
// the doc).

// mergeAction is what a pending notification and a newer one become.
type mergeAction int

const (
	// newerObject: the pending notification stays, of its type (and with
	// the Old the handler saw last), carrying the newer object.
	newerObject mergeAction = iota
	// newer: the newer notification replaces the pending one.
	newer
	// cancel: the two cancel out; the handler hears of neither.
	cancel
	// both: the newer is queued after the pending one; both are news.
	both
)

// mergeRule is one row: pending met by newer becomes then, and the
// handler is told what told says (the doc table's third column).
type mergeRule struct {
	pending, newer EventType
	then           mergeAction
	told           string
}

// mergeRules are the rows, oldest state first: every pair of types the
// informer's stream can bring together. A resync is an Update: it merges
// like one. A Delete is never merged away.
var mergeRules = []mergeRule{
	{Add, Update, newerObject, "Add (of the newer object)"},
	{Add, Delete, cancel, "nothing"},
	{Update, Update, newerObject, "Update (from the old object it saw last to the newer)"},
	{Update, Delete, newer, "Delete"},
	{Delete, Delete, newer, "Delete (of the newer object)"},
	{Delete, Add, both, "Delete, Add"},
}

// mergeActionOf returns the rule for a pending p met by a newer n. A pair
// the informer does not produce (an Add after an Update, an Update after
// a Delete) keeps a pending Delete, and otherwise keeps the pending type
// with the newer object.
func mergeActionOf(p, n EventType) mergeAction {
	for _, r := range mergeRules {
		if r.pending == p && r.newer == n {
			return r.then
		}
	}
	if p == Delete {
		return both
	}
	return newerObject
}

// merge decides what one pending notification p and a newer one n of the
// same key become, by mergeRules. It returns the merged notification, or
// nil if n must be queued after p, and keep false if the two cancel out.
func merge(p, n Notification) (merged *Notification, keep bool) {
	switch mergeActionOf(p.Type, n.Type) {
	case cancel:
		return nil, false
	case both:
		return nil, true
	case newer:
		return &n, true
	}
	p.Object = n.Object
	return &p, true
}
