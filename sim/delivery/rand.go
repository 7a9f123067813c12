package delivery

import "github.com/itlsim/itlsim/workloads/seed"

// streamFor starts the random stream of one mechanism for one request, so
// that turning one mechanism on or off never shifts another's draws.
// mechanism is the mixed name of the mechanism, seed.Mix(seed.Hash(name)),
// computed once per Path.
func streamFor(request, mechanism uint64) seed.Rand { return seed.New(request ^ mechanism) }
