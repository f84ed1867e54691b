package processor

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numbered is the entry for the i-th notification of a test stream.
func numbered(i int) entry {
	return entry{n: Notification{Type: Add, Key: strconv.Itoa(i), Object: pod("ns", strconv.Itoa(i))}}
}

// readAll reads from c until it catches up, in batches of at most max
// entries, and returns the keys it read.
func readAll(j *journal, c *cursor, max int) []string {
	var keys []string
	for {
		es := nextOf(j, c, max)
		if es == nil {
			return keys
		}
		for i := range es {
			keys = append(keys, es[i].n.Key)
		}
	}
}

// nextOf is cursor.next for a cursor that claims every page.
func nextOf(j *journal, c *cursor, max int) []entry {
	es, _ := c.next(j, max, new(atomic.Uint64))
	return es
}

func keysFrom(from, to int) []string {
	var keys []string
	for i := from; i < to; i++ {
		keys = append(keys, strconv.Itoa(i))
	}
	return keys
}

// fill appends the notifications numbered from to to-1.
func fill(j *journal, from, to int) {
	for i := from; i < to; i++ {
		j.append(numbered(i))
	}
}

// made is how many pages j has allocated so far, the first one included.
func (j *journal) made() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.allocated
}

func TestJournalReadsInOrderAcrossPages(t *testing.T) {
	j := newJournal()
	c, plain := j.join()
	require.Zero(t, plain)
	const n = 5*pageLen + 7
	fill(j, 0, n)
	assert.Equal(t, keysFrom(0, n), readAll(j, &c, batchLen))
	assert.Nil(t, nextOf(j, &c, batchLen), "caught up")
	assert.False(t, c.ready())
	fill(j, n, n+1)
	assert.True(t, c.ready())
	assert.Equal(t, keysFrom(n, n+1), readAll(j, &c, batchLen))
	assert.Equal(t, uint64(n+1), j.plain.Load())
}

func TestJournalJoinStartsAtTheEnd(t *testing.T) {
	j := newJournal()
	early, _ := j.join()
	fill(j, 0, pageLen+3)
	late, plain := j.join()
	assert.Equal(t, uint64(pageLen+3), plain, "the count at the join point")
	j.append(numbered(pageLen + 3))
	assert.Equal(t, keysFrom(pageLen+3, pageLen+4), readAll(j, &late, 5), "only what came after the join")
	assert.Equal(t, keysFrom(0, pageLen+4), readAll(j, &early, 5))
}

// TestJournalReusesPagesOnceEveryReaderPassed follows the reference counts:
// a page goes back to the spares when the last reader leaves it, emptied,
// and not before.
func TestJournalReusesPagesOnceEveryReaderPassed(t *testing.T) {
	j := newJournal()
	fast, _ := j.join()
	slow, _ := j.join()
	fill(j, 0, 3*pageLen+1) // a fourth page: the third is full and left by the writer
	first := slow.page
	require.Len(t, readAll(j, &fast, pageLen), 3*pageLen+1)
	assert.Empty(t, j.spare, "the slow reader still needs the first three pages")
	assert.Equal(t, int32(1), first.refs.Load(), "only the slow reader's claim is left")

	require.Len(t, readAll(j, &slow, pageLen), 3*pageLen+1)
	require.Len(t, j.spare, 3, "both readers and the writer left the first three pages")
	for _, p := range j.spare {
		assert.Equal(t, [pageLen]entry{}, p.entries, "a spare page keeps no object alive")
		assert.Zero(t, p.written.Load())
		assert.Nil(t, p.next.Load())
	}

	made := j.made()
	fill(j, 0, 3*pageLen)
	assert.Equal(t, made, j.made(), "the spares were used instead of new pages")
	assert.Equal(t, keysFrom(0, 3*pageLen), readAll(j, &fast, 7))
}

func TestJournalKeepsAtMostSpareLenPages(t *testing.T) {
	j := newJournal()
	c, _ := j.join()
	burst := (spareLen + 10) * pageLen
	fill(j, 0, burst+1)
	require.Len(t, readAll(j, &c, pageLen), burst+1)
	assert.Len(t, j.spare, spareLen, "the rest went to the garbage collector")
}

// TestJournalDetachedCursorStopsClaiming is a removed handler stuck in
// Handle: it keeps what it had, not what comes after, so the other readers'
// pages are reused while it is stuck, and its own claims come back when it
// leaves.
func TestJournalDetachedCursorStopsClaiming(t *testing.T) {
	j := newJournal()
	stuck, _ := j.join()
	live, _ := j.join()
	fill(j, 0, 2*pageLen)
	j.detach(&stuck)
	j.detach(&stuck) // idempotent: the reader count drops once
	made := j.made()
	for i := range 40 * pageLen {
		j.append(numbered(i))
		if i%pageLen == 0 {
			readAll(j, &live, pageLen)
		}
	}
	readAll(j, &live, pageLen)
	assert.LessOrEqual(t, j.made()-made, 4, "pages after the detach were reused, not kept for the stuck reader")

	claimed := stuck.page
	j.leave(&stuck)
	assert.Nil(t, stuck.page)
	assert.Zero(t, claimed.refs.Load(), "its claims came back when it left")
	j.leave(&stuck) // a left cursor has nothing more to give back
	j.mu.Lock()
	assert.Equal(t, int32(1), j.readers)
	j.mu.Unlock()
}

func TestJournalLeaveGivesBackEveryClaim(t *testing.T) {
	j := newJournal()
	idle, _ := j.join()
	fill(j, 0, 3*pageLen+1)
	pages := []*page{idle.page, idle.page.next.Load(), idle.page.next.Load().next.Load()}
	j.leave(&idle)
	for i, p := range pages {
		assert.Zero(t, p.refs.Load(), "page %d", i)
	}
	assert.Equal(t, int32(1), j.tail.Load().refs.Load(), "the tail keeps the writer's claim")
}

// TestJournalConcurrentReaders runs one writer against readers that come
// and go, each reading in batches of random size: every reader must see
// exactly the stream from its join point on, in order, however the pages
// were reused under it. Run it with -race.
func TestJournalConcurrentReaders(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	j := newJournal()
	const total = 60 * pageLen
	var (
		wg     sync.WaitGroup
		stop   = make(chan struct{})
		failed = make(chan string, 16)
	)
	reader := func(seed uint64) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 1))
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, plain := j.join()
			want := int(plain) // the next number this reader must see
			for range rng.IntN(4 * pageLen) {
				es := nextOf(j, &c, rng.IntN(batchLen)+1)
				for i := range es {
					if got := es[i].n.Key; got != strconv.Itoa(want) {
						failed <- "read " + got + ", want " + strconv.Itoa(want)
						j.leave(&c)
						return
					}
					want++
				}
			}
			if rng.IntN(2) == 0 {
				j.detach(&c)
			}
			j.leave(&c)
		}
	}
	for i := range 4 {
		wg.Add(1)
		go reader(rng.Uint64() + uint64(i))
	}
	fill(j, 0, total)
	close(stop)
	wg.Wait()
	close(failed)
	for msg := range failed {
		t.Error(msg)
	}
}
