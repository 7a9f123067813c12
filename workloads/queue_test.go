package workloads

import "testing"

func TestQueueYieldsPushedRequestsInOrder(t *testing.T) {
	var q Queue
	if _, ok := q.NextAt(); ok {
		t.Fatal("empty queue has a request due")
	}
	q.Push(Request{ID: 0, Arrival: 5})
	q.Push(Request{ID: 1, Arrival: 7})
	if at, ok := q.NextAt(); !ok || at != 5 {
		t.Fatalf("NextAt = %d, %v; want 5, true", at, ok)
	}
	var r Request
	if !q.Next(&r) || r.ID != 0 || !q.Next(&r) || r.ID != 1 || q.Next(&r) {
		t.Fatalf("Next did not yield 0, 1, then nothing (last %+v)", r)
	}
	q.Push(Request{ID: 2, Arrival: 9}) // reuses the drained buffer
	if q.Len() != 1 || q.Exhausted() {
		t.Fatalf("Len = %d, Exhausted = %v after one more push", q.Len(), q.Exhausted())
	}
	q.Next(&r)
	q.Close()
	if !q.Exhausted() || r.ID != 2 {
		t.Fatalf("closed and drained queue: Exhausted = %v, last id %d", q.Exhausted(), r.ID)
	}
}
