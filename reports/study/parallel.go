package study

import (
	"runtime"
	"sync"
)

// Progress is told, after each finished item, how many of total are done.
// Map calls it from one goroutine at a time.
type Progress func(done, total int)

// Workers is the worker count to use for j: j itself when positive, else
// every core (GOMAXPROCS).
func Workers(j int) int {
	if j > 0 {
		return j
	}
	return runtime.GOMAXPROCS(0)
}

// Map calls fn(i) for every i in [0, n) on up to workers goroutines and
// returns the results in index order. The items must be independent: the
// results then do not depend on workers or on the interleaving. When
// items fail, Map returns the error of the lowest failing index (the same
// error whatever the interleaving) and stops handing out new items.
func Map[T any](n, workers int, fn func(i int) (T, error), progress Progress) ([]T, error) {
	out := make([]T, n)
	errs := make([]error, n)
	if workers < 1 {
		workers = 1
	}
	workers = min(workers, n)
	var (
		mu     sync.Mutex
		next   int
		done   int
		failed bool
		wg     sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= n || failed {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				v, err := fn(i)
				mu.Lock()
				out[i], errs[i] = v, err
				if err != nil {
					failed = true
				}
				done++
				if progress != nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
