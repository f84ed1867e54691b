// Command compare measures what a user of an informer feels, ours and
// client-go's side by side, end to end over real HTTP, and prints one
// markdown table: a row per figure with ours, client-go's, the ratio and
// which direction is better.
//
//	go run ./cmd/compare -quick                       # 10k pods, two rounds: a few minutes on 2 cores
//	go run ./cmd/compare -json out.json -svg ../docs/img  # the full run docs/benchmarks.md shows
//	go run ./cmd/compare -quick -heap                 # only the heap per cached pod rows, churns included
//
// The command (the parent process) runs one fakeapi server, seeds it with
// realistic pods (internal/realpod: about 7 KB of JSON each, managedFields
// included) and then runs every informer in a child process of its own, a
// re-execution of this binary with -side, so that each memory figure is one
// informer's process and nothing else. Children talk to the parent over
// their standard input and output, one JSON line per step. Every mode runs
// at least two rounds, and rounds alternate which side goes first (the
// component benchmarks too, one side at a time); each figure is the median
// of its rounds, printed with the smallest and largest round beside it, and
// the ratio with the range of the ratios round by round.
// Both sides set the wire format explicitly.
//
// Scenarios (scenario.go): cold sync of 10k and 100k pods, JSON and
// protobuf, with and without StripManagedFields (time to synced, peak heap,
// retained heap per cached pod after a collection); a relist forced by a
// compaction (time, peak heap against the steady state, notifications for
// unchanged pods); a burst of updates and a pre-built backlog (events/s
// from the first write, or the backlog's release, to the last event
// handled; the informer's CPU per event; write-to-handler latency p50 and
// p99; the informer's heap objects allocated per event, end to end,
// decoding included); a burst with 100 handlers, one of them slow; the
// informer's CPU per update while every pod is updated once in random
// order with a kubelet's status change (JSON and protobuf), and the heap
// per cached pod after that, and on a second server whose pods have a
// template of their own three times in ten, synced and after such a churn
// (population.go, internal/realpod); and the
// component benchmarks of this module (components.go): the pipeline from
// decoded objects (decoding excluded), writes and read p99 with paced
// readers, the selector against a full scan and with an index on both
// sides, the label index's build time and heap, the write client, the
// work queue's bytes per backlog item, and the heap per cached ConfigMap,
// Secret, Deployment, ReplicaSet and Node, synced and after a churn.
//
// The backlog is held by the server encoded and ready (fakeapi's
// HoldWatches) and released at once, so that its drain is the informer's
// reading, decoding and handling, not the server's encoding.
//
// The server's history keeps as many writes as one step makes while an
// informer watches (plan.window: a churn of every pod), and is compacted
// whenever a child starts (cluster.spawn), when no informer needs it: each
// write keeps two versions of a pod, and a history of every write of the
// 100k plan outgrew a 24 GiB machine.
//
// -profile DIR writes, for every step, the informer's CPU profile and heap
// profile, the server's CPU profile and, for a relist, the heap profile at
// its peak (profile.go): the evidence docs/benchmarks.md quotes.
//
// Peak heap is sampled every 2 ms from runtime/metrics, two ways: "live" is
// the heap the garbage collector found reachable at the end of each cycle
// (/gc/heap/live:bytes), "in use" is every heap object not yet swept,
// garbage included (/memory/classes/heap/objects:bytes). The second follows
// GOGC's pacing, the first only what the program holds.
package main
