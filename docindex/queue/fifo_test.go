package queue_test

import (
	"slices"
	"sort"
	"sync/atomic"
	"testing"
)

// A claim record places one claimed job on a logical clock shared by the goroutines of a test:
// enq is when its enqueue had committed (0 when it was there before any claim began), start
// when the claim call that took it began, end when that call had returned (committed).
type claimRec struct {
	seq, enq, start, end int64
}

type clock struct{ n atomic.Int64 }

func (c *clock) tick() int64 { return c.n.Add(1) }

// fifoViolations counts jobs claimed after a younger job although they were eligible first.
// Job A is a violation when some job B with a higher seq was claimed by a call that had
// finished before A's claim began (B.end < A.start), while A was already committed when B's
// claim began (A.enq < B.start). At that moment A was queued, visible and not locked by any
// claim (only the call that eventually took A locks it, and it had not begun), so a FIFO claim
// had to take A before B. The clock is only read around calls, so the count never blames
// claims that overlapped in time: it has no false positives, whatever the scheduling.
func fifoViolations(recs []claimRec) int {
	byEnd := slices.Clone(recs)
	sort.Slice(byEnd, func(i, j int) bool { return byEnd[i].end < byEnd[j].end })
	prefixMax := make([]int64, len(byEnd)+1) // highest seq among the first i records by end
	for i, r := range byEnd {
		prefixMax[i+1] = max(prefixMax[i], r.seq)
	}
	n := 0
	for _, a := range recs {
		k := sort.Search(len(byEnd), func(i int) bool { return byEnd[i].end >= a.start })
		if prefixMax[k] <= a.seq {
			continue // no younger job was claimed before A's claim began
		}
		for _, b := range byEnd[:k] {
			if b.seq > a.seq && b.start > a.enq {
				n++
				break
			}
		}
	}
	return n
}

// The checker must be able to fail, or the FIFO tests prove nothing.
func TestFIFOViolationsChecker(t *testing.T) {
	ok := []claimRec{
		{seq: 1, start: 1, end: 2}, {seq: 2, start: 3, end: 4},
		// Overlapping claims may finish in any order.
		{seq: 4, start: 5, end: 8}, {seq: 3, start: 6, end: 7},
		// seq 5 committed after the claim of seq 6 began: it was not eligible then.
		{seq: 6, start: 9, end: 10}, {seq: 5, enq: 9, start: 11, end: 12},
	}
	if n := fifoViolations(ok); n != 0 {
		t.Fatalf("fifoViolations(valid order) = %d, want 0", n)
	}
	bad := []claimRec{
		{seq: 2, start: 1, end: 2},
		{seq: 1, start: 3, end: 4}, // older, eligible, claimed later
		{seq: 3, start: 5, end: 6},
		{seq: 4, enq: 4, start: 9, end: 10}, // eligible before the claim of seq 5 began
		{seq: 5, start: 7, end: 8},
	}
	if n := fifoViolations(bad); n != 2 {
		t.Fatalf("fifoViolations(two inversions) = %d, want 2", n)
	}
}
