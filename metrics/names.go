package metrics

// The families the library reports. The workqueue_* and rest_client_* names
// and labels are client-go's, so that existing Kubernetes dashboards chart
// them unchanged; informer_* are this library's own.

// durationBuckets are the workqueue histograms' bounds: 10ns to 10s by
// factors of ten, as client-go's.
var durationBuckets = []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10}

// Work queue families, labelled by the queue's name (workqueue.Options.Name).
var (
	WorkqueueDepth = &Desc{Name: "workqueue_depth", Kind: Gauge, Labels: []string{"name"},
		Help: "Current depth of workqueue"}
	WorkqueueAdds = &Desc{Name: "workqueue_adds_total", Kind: Counter, Labels: []string{"name"},
		Help: "Total number of adds handled by workqueue"}
	WorkqueueRetries = &Desc{Name: "workqueue_retries_total", Kind: Counter, Labels: []string{"name"},
		Help: "Total number of retries handled by workqueue"}
	WorkqueueQueueDuration = &Desc{Name: "workqueue_queue_duration_seconds", Kind: Histogram, Labels: []string{"name"},
		Buckets: durationBuckets, Help: "How long in seconds an item stays in workqueue before being requested."}
	WorkqueueWorkDuration = &Desc{Name: "workqueue_work_duration_seconds", Kind: Histogram, Labels: []string{"name"},
		Buckets: durationBuckets, Help: "How long in seconds processing an item from workqueue takes."}
	WorkqueueUnfinishedWork = &Desc{Name: "workqueue_unfinished_work_seconds", Kind: Gauge, Labels: []string{"name"},
		Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads."}
	WorkqueueLongestRunning = &Desc{Name: "workqueue_longest_running_processor_seconds", Kind: Gauge, Labels: []string{"name"},
		Help: "How many seconds has the longest running processor for workqueue been running."}
)

// REST client families, one series per API server host.
var (
	RESTClientRequests = &Desc{Name: "rest_client_requests_total", Kind: Counter, Labels: []string{"code", "method", "host"},
		Help: "Number of HTTP requests, partitioned by status code, method, and host."}
	RESTClientRequestDuration = &Desc{Name: "rest_client_request_duration_seconds", Kind: Histogram, Labels: []string{"verb", "host"},
		Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
		Help:    "Request latency in seconds, to the response headers, broken down by verb and host."}
)

// Informer families, labelled by the informer's name (informer.Options.Name;
// the factory uses the group-resource, such as "pods" or "deployments.apps").
var (
	InformerLists = &Desc{Name: "informer_lists_total", Kind: Counter, Labels: []string{"informer"},
		Help: "Complete snapshots obtained by a list or a WatchList."}
	InformerWatches = &Desc{Name: "informer_watches_total", Kind: Counter, Labels: []string{"informer"},
		Help: "Watch requests the server accepted."}
	InformerRelists = &Desc{Name: "informer_relists_total", Kind: Counter, Labels: []string{"informer"},
		Help: "Snapshots after the first: a healthy informer keeps this low."}
	InformerEvents = &Desc{Name: "informer_watch_events_total", Kind: Counter, Labels: []string{"informer", "type"},
		Help: "Watch events received, by type."}
	InformerErrors = &Desc{Name: "informer_errors_total", Kind: Counter, Labels: []string{"informer", "kind"},
		Help: "Errors the informer recovered from, by kind."}
	InformerLastSyncedRV = &Desc{Name: "informer_last_synced_resource_version", Kind: Gauge, Labels: []string{"informer"},
		Help: "The resourceVersion the cache has reached, when it is a number (etcd's revisions are); 0 otherwise."}
	InformerSynced = &Desc{Name: "informer_synced", Kind: Gauge, Labels: []string{"informer"},
		Help: "1 once the informer's cache holds a full list, else 0."}
	InformerQueueDepth = &Desc{Name: "informer_queue_depth", Kind: Gauge, Labels: []string{"informer"},
		Help: "Keys waiting in the informer's queue between the watch and the cache."}
	InformerHandlerPending = &Desc{Name: "informer_handler_pending", Kind: Gauge, Labels: []string{"informer", "handler"},
		Help: "Notifications a handler has been sent and not finished: its lag."}
	InformerHandlerDelivered = &Desc{Name: "informer_handler_delivered_total", Kind: Counter, Labels: []string{"informer", "handler"},
		Help: "Notifications a handler has finished handling."}
	InformerHandlerCoalesced = &Desc{Name: "informer_handler_coalesced_total", Kind: Counter, Labels: []string{"informer", "handler"},
		Help: "Notifications merged into a later one of the same key because the handler fell behind its backlog limit."}
	InformerHandlerPanics = &Desc{Name: "informer_handler_panics_total", Kind: Counter, Labels: []string{"informer", "handler"},
		Help: "Notifications during which the handler panicked."}
)

// Leadership families, reported by an Elector given
// leaderelection.Options.Metrics and a Coordinator given
// sharding.Options.Metrics, while they run.
var (
	LeaderStatus = &Desc{Name: "leader_election_master_status", Kind: Gauge, Labels: []string{"name"},
		Help: "1 while this process holds the lease, else 0."}
	ShardOwned = &Desc{Name: "informer_shard_owned", Kind: Gauge, Labels: []string{"shard"},
		Help: "1 while this process owns the shard, else 0."}
)
