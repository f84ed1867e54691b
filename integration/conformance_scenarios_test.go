package integration

import (
	"maps"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
)

// scenarios are the rows of the conformance table, in order. Each runs in
// its own namespace, once per encoding, against each server.
var scenarios = []scenario{
	{id: "1", name: "list-then-watch: a factory of 4 types and a namespace+label-scoped pod informer sync", run: scenarioSync},
	{id: "2", name: "convergence after creates, updates, deletes and label moves in and out of scope", run: scenarioConverge},
	{id: "3", name: "dropped connection: resume from the last RV, no relist", run: scenarioDrop},
	{id: "4", name: "410 after compaction while the watch is down: relist, tombstone delete delivered", history: true, run: scenarioExpired},
	{id: "5", name: "bookmarks arrive and advance the RV of a quiet watch", run: scenarioBookmarks},
	{id: "6", name: "WatchList reaches its initial-events-end bookmark", run: scenarioWatchList},
	{id: "8", name: "metadata-only informer: PartialObjectMetadata with labels", run: scenarioMetadata},
	{id: "9", name: "StripManagedFields: the server sends managedFields, the cache holds none", run: scenarioStrip},
}

// ---------------------------------------------------------------- 1

// scenarioSync: a factory of four types and a scoped pod informer list, then
// watch, and hold exactly what the server lists.
func scenarioSync(e *env) {
	e.step("seed pods, a service, config maps and a deployment")
	e.seedPods()
	create(e.t, e.client, testService(e.ns, "front"))
	create(e.t, e.client, testConfigMap(e.ns, "settings", "1"))
	create(e.t, e.client, testConfigMap(e.ns, "flags", "on"))
	create(e.t, e.client, testDeployment(e.ns, "api", 2))

	e.step("start a factory of four types and a scoped factory")
	all := e.factory(informer.FactoryOptions{})
	pods := mustFor[*corev1.Pod](e, all)
	services := mustFor[*corev1.Service](e, all)
	configMaps := mustFor[*corev1.ConfigMap](e, all)
	deployments := mustFor[*appsv1.Deployment](e, all)
	scoped := e.factory(informer.FactoryOptions{LabelSelector: "app=web"})
	webPods := mustFor[*corev1.Pod](e, scoped)
	e.start(all, scoped)

	e.step("compare every cache with the server")
	requireConverges(e, pods, e.path(podsPath), "")
	requireConverges(e, services, e.path(servicesPath), "")
	requireConverges(e, configMaps, e.path(configMapsPath), "")
	requireConverges(e, deployments, e.path(deploymentsPath), "")
	requireConverges(e, webPods, e.path(podsPath), "app=web")
	require.Len(e.t, cacheState(webPods), 2, "the scoped informer holds the two app=web pods only")

	e.step("check the initial state came from a List and a watch followed")
	requireWatching(e, pods)
	s := pods.Stats()
	require.GreaterOrEqual(e.t, s.Lists, int64(1))
	require.Zero(e.t, s.WatchListSyncs)
	e.note("%d objects in 5 caches", len(cacheState(pods))+len(cacheState(services))+
		len(cacheState(configMaps))+len(cacheState(deployments))+len(cacheState(webPods)))
}

// ---------------------------------------------------------------- 2

// scenarioConverge: writes of every kind, including label changes that move
// pods into and out of the scoped informer's selector, reach every cache and
// the scoped informer's handler.
func scenarioConverge(e *env) {
	e.step("seed and start")
	e.seedPods()
	settings := create(e.t, e.client, testConfigMap(e.ns, "settings", "1"))
	front := create(e.t, e.client, testService(e.ns, "front"))
	api := create(e.t, e.client, testDeployment(e.ns, "api", 1))
	all := e.factory(informer.FactoryOptions{})
	pods := mustFor[*corev1.Pod](e, all)
	configMaps := mustFor[*corev1.ConfigMap](e, all)
	services := mustFor[*corev1.Service](e, all)
	deployments := mustFor[*appsv1.Deployment](e, all)
	scoped := e.factory(informer.FactoryOptions{LabelSelector: "app=web"})
	webPods := mustFor[*corev1.Pod](e, scoped)
	log := newEventLog()
	_, err := webPods.AddEventHandler(log.handler(), informer.HandlerOptions{Name: "log"})
	require.NoError(e.t, err)
	e.start(all, scoped)
	requireWatching(e, webPods)

	e.step("create, update, delete, and move labels in and out of app=web")
	create(e.t, e.client, testPod(e.ns, "web-new", web))
	create(e.t, e.client, testPod(e.ns, "db-new", db))
	p := get(e.t, e.client, testPod(e.ns, "web-0", nil))
	p.Annotations = map[string]string{"touched": "yes"}
	update(e.t, e.client, p)
	p = get(e.t, e.client, testPod(e.ns, "web-1", nil))
	p.Labels = db // moves out of scope
	update(e.t, e.client, p)
	p = get(e.t, e.client, testPod(e.ns, "db-0", nil))
	p.Labels = web // moves into scope
	update(e.t, e.client, p)
	remove(e.t, e.client, testPod(e.ns, "web-0", nil))
	remove(e.t, e.client, testPod(e.ns, "db-new", nil))
	settings.Data["k"] = "2"
	update(e.t, e.client, settings)
	create(e.t, e.client, testConfigMap(e.ns, "extra", "x"))
	remove(e.t, e.client, front)
	api.Spec.Replicas = new(int32(3))
	update(e.t, e.client, api)

	e.step("wait for every cache to converge")
	requireConverges(e, pods, e.path(podsPath), "")
	requireConverges(e, webPods, e.path(podsPath), "app=web")
	requireConverges(e, configMaps, e.path(configMapsPath), "")
	requireConverges(e, services, e.path(servicesPath), "")
	requireConverges(e, deployments, e.path(deploymentsPath), "")

	e.step("check the scoped handler's view")
	var state map[string]string
	var adds map[string]int
	var deletes map[string][]bool
	require.True(e.t, waitUntil(convergeWithin, func() bool {
		state, adds, deletes = log.snapshot()
		return maps.Equal(state, cacheState(webPods))
	}), "handler view %v != cache %v", state, cacheState(webPods))
	require.Equal(e.t, []bool{false}, deletes[e.ns+"/web-1"], "moving out of the selector is a delete, seen by the watch")
	require.Equal(e.t, 1, adds[e.ns+"/db-0"], "moving into the selector is an add")
	require.Equal(e.t, []bool{false}, deletes[e.ns+"/web-0"])
	require.Zero(e.t, webPods.Stats().Relists)
}

// ---------------------------------------------------------------- 3

// scenarioDrop: the proxy cuts every connection; the reflector watches again
// from its last resourceVersion (not the list's: the server then sends
// nothing twice) and catches up on what it missed without listing again.
func scenarioDrop(e *env) {
	e.step("seed and start")
	e.seedPods()
	f := e.factory(informer.FactoryOptions{})
	pods := mustFor[*corev1.Pod](e, f)
	e.start(f)
	requireWatching(e, pods)

	e.step("write once through the watch, so that its last RV is past the list's")
	first := create(e.t, e.client, testPod(e.ns, "before-drop", db))
	requireConverges(e, pods, e.path(podsPath), "")
	// The reflector counts an event and sets the RV it reports in one step:
	// wait for this write's RV, or before could miss its ADDED and the count
	// below see two.
	written := rvNumber(e, first.ResourceVersion)
	before := requireStats(e, pods, "the reflector never reached "+first.ResourceVersion, func(s reflector.Stats) bool {
		return rvNumber(e, s.LastSyncResourceVersion) >= written
	})

	e.step("cut every connection, then write while the watch is gone")
	e.proxy.DropAll()
	create(e.t, e.client, testPod(e.ns, "after-drop", web))
	p := get(e.t, e.client, testPod(e.ns, "web-0", nil))
	p.Labels = db
	update(e.t, e.client, p)
	remove(e.t, e.client, testPod(e.ns, "db-0", nil))

	e.step("wait for the resumed watch to deliver the writes")
	requireConverges(e, pods, e.path(podsPath), "")
	after := requireStats(e, pods, "no new watch", func(s reflector.Stats) bool { return s.Watches > before.Watches })
	require.Equal(e.t, before.Relists, after.Relists, "a dropped connection must not cause a relist")
	require.Equal(e.t, before.Lists, after.Lists)
	// Convergence alone would not show a watch resumed from the list's RV:
	// the server replays what the cache already has, which changes nothing.
	// The last write is a delete, so once the cache shows it every ADDED
	// before it has been counted.
	require.Equal(e.t, before.Events[watch.Added]+1, after.Events[watch.Added],
		"the resumed watch adds after-drop and nothing it had delivered before the drop")
	e.note("watches %d→%d, relists %d→%d, network errors %d", before.Watches, after.Watches,
		before.Relists, after.Relists, after.Errors[reflector.KindNetwork])
}

// ---------------------------------------------------------------- 4

// scenarioExpired: while the informer cannot reach the server, a pod is
// deleted and the history compacted. The watch resumed afterwards gets 410
// Expired; the informer relists, and the deletion it never saw reaches the
// handler as a delete with finalStateUnknown.
func scenarioExpired(e *env) {
	e.step("seed and start")
	e.seedPods()
	f := e.factory(informer.FactoryOptions{})
	pods := mustFor[*corev1.Pod](e, f)
	log := newEventLog()
	_, err := pods.AddEventHandler(log.handler(), informer.HandlerOptions{Name: "log"})
	require.NoError(e.t, err)
	e.start(f)
	requireWatching(e, pods)

	e.step("break the network and wait for the reflector to notice")
	before := pods.Stats()
	e.proxy.Pause()
	e.proxy.DropAll()
	requireStats(e, pods, "the reflector never retried", func(s reflector.Stats) bool { return s.Backoffs > before.Backoffs })

	e.step("delete a pod, create one, compact the history")
	remove(e.t, e.client, testPod(e.ns, "web-1", nil))
	create(e.t, e.client, testPod(e.ns, "while-down", web))
	e.srv.compact(e.t)
	e.proxy.Resume()

	e.step("wait for the 410, the relist and convergence")
	requireConverges(e, pods, e.path(podsPath), "")
	var deletes map[string][]bool
	require.True(e.t, waitUntil(convergeWithin, func() bool {
		_, _, deletes = log.snapshot()
		return len(deletes[e.ns+"/web-1"]) > 0
	}), "the handler never heard of the missed delete")
	require.Equal(e.t, []bool{true}, deletes[e.ns+"/web-1"], "a delete learned from a relist has finalStateUnknown")
	// The handler can hear of the delete before the relist is counted.
	s := requireStats(e, pods, "a 410 must lead to a relist", func(s reflector.Stats) bool { return s.Relists > 0 })
	require.Positive(e.t, s.Errors[reflector.KindExpired], "the resumed watch must have been told 410")
	e.note("expired %d, relists %d", s.Errors[reflector.KindExpired], s.Relists)
}

// ---------------------------------------------------------------- 5

// scenarioBookmarks: a watch on a namespace where nothing changes gets a
// bookmark carrying a newer resourceVersion (made by a write elsewhere), so
// the informer's resume point moves without any event.
//
// The real server sends bookmarks from its watch cache 2s before the watch's
// timeout and then about every minute, and only once the cache has seen a
// resourceVersion newer than the watch's start. A 5s minimum watch timeout
// (timeoutSeconds in [5, 10)) makes one arrive within seconds.
func scenarioBookmarks(e *env) {
	e.step("seed and start with a short watch timeout")
	create(e.t, e.client, testPod(e.ns, "quiet", web))
	opts := reflectorOptions(reflector.WatchListOff)
	opts.MinWatchTimeout = 5 * time.Second
	f := e.factory(informer.FactoryOptions{Informer: informer.Options{Reflector: opts}})
	pods := mustFor[*corev1.Pod](e, f)
	e.start(f)
	requireWatching(e, pods)
	watchStart := time.Now()
	rv0 := rvNumber(e, pods.LastSyncResourceVersion())

	e.step("write a pod in another namespace, which this informer does not watch")
	other := e.ns + "-other"
	e.namespace(other)
	elsewhere := create(e.t, e.client, testPod(other, "elsewhere", nil))
	target := rvNumber(e, elsewhere.ResourceVersion)
	wrote := time.Now()

	e.step("wait for a bookmark that moves the informer past that write")
	var firstBookmark time.Duration
	// Every watch lasts less than 10s and gets its bookmark 2s before it
	// ends, so 20s covers two watches, the second of which certainly
	// started after the write.
	const bookmarkWithin = 20 * time.Second
	e.requireOrGap(waitUntil(bookmarkWithin, func() bool {
		s := pods.Stats()
		if firstBookmark == 0 && s.Events[watch.Bookmark] > 0 {
			firstBookmark = time.Since(watchStart)
		}
		return s.Events[watch.Bookmark] > 0 && rvNumber(e, pods.LastSyncResourceVersion()) >= target
	}), "no bookmark advanced the RV past %d within %v: RV %s, stats %+v",
		target, bookmarkWithin, pods.LastSyncResourceVersion(), pods.Stats())
	s := pods.Stats()
	require.Zero(e.t, s.Events[watch.Added]+s.Events[watch.Modified]+s.Events[watch.Deleted],
		"the informer saw no change, only bookmarks")
	e.note("first bookmark %.1fs after the watch began; RV %d→%s %.1fs after the write; %d bookmarks, %d watches",
		firstBookmark.Seconds(), rv0, pods.LastSyncResourceVersion(), time.Since(wrote).Seconds(),
		s.Events[watch.Bookmark], s.Watches)
}

// ---------------------------------------------------------------- 6

// scenarioWatchList: the initial state streamed over a watch, ended by the
// bookmark annotated k8s.io/initial-events-end, and the same watch carries
// on.
func scenarioWatchList(e *env) {
	e.step("seed and start with WatchList on")
	e.seedPods()
	f := e.factory(informer.FactoryOptions{Informer: informer.Options{Reflector: reflectorOptions(reflector.WatchListOn)}})
	pods := mustFor[*corev1.Pod](e, f)
	e.start(f)

	e.step("check the state came from a WatchList")
	requireConverges(e, pods, e.path(podsPath), "")
	s := requireStats(e, pods, "no WatchList sync", func(s reflector.Stats) bool { return s.WatchListSyncs >= 1 })
	require.Zero(e.t, s.Lists, "no List was needed")

	e.step("write and wait for the same watch to deliver it")
	create(e.t, e.client, testPod(e.ns, "later", web))
	requireConverges(e, pods, e.path(podsPath), "")
	after := pods.Stats()
	require.Equal(e.t, s.Watches, after.Watches, "the WatchList stream carries on as the watch")
	e.note("%d initial events, %d bookmark(s)", s.Events[watch.Added], s.Events[watch.Bookmark])
}

// ---------------------------------------------------------------- 8

// scenarioMetadata: a metadata-only informer caches PartialObjectMetadata,
// labels included, and follows label changes.
func scenarioMetadata(e *env) {
	e.step("seed and start a metadata-only informer")
	e.seedPods()
	f := e.factory(informer.FactoryOptions{Informer: informer.Options{Reflector: reflectorOptions(reflector.WatchListAuto)}})
	metas, err := informer.ForMetadata(f, corev1.SchemeGroupVersion.WithResource("pods"), false)
	require.NoError(e.t, err)
	e.start(f)
	requireConverges(e, metas, e.path(podsPath), "")

	e.step("change a label and check kinds and labels in the cache")
	p := get(e.t, e.client, testPod(e.ns, "db-0", nil))
	p.Labels = map[string]string{"app": "db", "tier": "back"}
	update(e.t, e.client, p)
	requireConverges(e, metas, e.path(podsPath), "")
	for _, obj := range metas.Indexer().List() {
		m := obj.(*metav1.PartialObjectMetadata)
		require.Equal(e.t, "PartialObjectMetadata", m.Kind)
		require.Equal(e.t, "meta.k8s.io/v1", m.APIVersion)
		want := get(e.t, e.client, testPod(e.ns, m.Name, nil)).Labels
		require.Equal(e.t, want, m.Labels, "labels of %s", m.Name)
	}
}

// ---------------------------------------------------------------- 9

// scenarioStrip: the real server records managedFields on every write; the
// StripManagedFields transform keeps them out of the cache.
func scenarioStrip(e *env) {
	e.step("seed and check the server sends managedFields")
	e.seedPods()
	sent := get(e.t, e.client, testPod(e.ns, "web-0", nil))
	e.requireOrGap(len(sent.ManagedFields) > 0, "the server must populate managedFields on create for this scenario to mean anything")

	e.step("start with StripManagedFields")
	f := e.factory(informer.FactoryOptions{Informer: informer.Options{
		Transform: informer.StripManagedFields(), Reflector: reflectorOptions(reflector.WatchListAuto)}})
	pods := mustFor[*corev1.Pod](e, f)
	e.start(f)
	requireConverges(e, pods, e.path(podsPath), "")

	e.step("update a pod and check no cached object has managedFields")
	sent.Labels = map[string]string{"app": "web", "v": "2"}
	update(e.t, e.client, sent)
	requireConverges(e, pods, e.path(podsPath), "")
	for _, obj := range pods.Indexer().List() {
		m, err := meta.Accessor(obj)
		require.NoError(e.t, err)
		require.Empty(e.t, m.GetManagedFields(), "cached %s still has managedFields", m.GetName())
		require.NotEmpty(e.t, m.GetLabels(), "the transform must keep everything else")
	}
	e.note("server sent %d managedFields entries per pod", len(sent.ManagedFields))
}
