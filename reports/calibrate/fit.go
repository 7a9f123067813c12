package calibrate

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/itlsim/itlsim/sim/cost"
)

// FitQuality says how well a model reproduces step timings.
type FitQuality struct {
	R2   float64 // coefficient of determination over the step times
	MAPE float64 // mean |predicted/measured − 1|
	// Worst are the rows of largest relative error, worst first.
	Worst []FitRow
}

// FitRow is one step predicted against measured.
type FitRow struct {
	Line        int
	PredictedMS float64
	MeasuredMS  float64
	Error       float64 // predicted/measured − 1
}

// Quality evaluates m on steps, keeping the worst rows.
func Quality(m cost.Model, steps []Step, worst int) FitQuality {
	var mean float64
	for _, s := range steps {
		mean += s.MS
	}
	mean /= float64(len(steps))
	var ssRes, ssTot, ape float64
	rows := make([]FitRow, len(steps))
	for i, s := range steps {
		b := s.Batch
		p := float64(m.StepNS(&b)) / 1e6
		ssRes += (p - s.MS) * (p - s.MS)
		ssTot += (s.MS - mean) * (s.MS - mean)
		rows[i] = FitRow{Line: s.Line, PredictedMS: p, MeasuredMS: s.MS, Error: p/s.MS - 1}
		ape += math.Abs(rows[i].Error)
	}
	q := FitQuality{MAPE: ape / float64(len(steps)), R2: 1 - ssRes/ssTot}
	if ssTot == 0 {
		q.R2 = math.NaN()
	}
	slices.SortStableFunc(rows, func(a, b FitRow) int {
		return -cmp.Compare(math.Abs(a.Error), math.Abs(b.Error))
	})
	q.Worst = rows[:min(worst, len(rows))]
	return q
}

// linearFeatures are a step's terms of the linear model, in coefficient
// order c0 … c4.
func linearFeatures(b *cost.Batch) [5]float64 {
	return [5]float64{1, float64(b.PrefillTokens + b.DecodeExtraTokens), float64(b.DecodeSeqs),
		float64(b.DecodeContext), float64(b.PrefillTokCtx)}
}

// FitLinear fits the linear model's five coefficients (µs) to steps by
// non-negative least squares on relative errors (each row divided by its
// measured time, so short and long steps weigh alike). Terms that no row
// exercises come out 0.
func FitLinear(steps []Step) (cost.LinearConfig, error) {
	if len(steps) == 0 {
		return cost.LinearConfig{}, errors.New("no steps to fit")
	}
	a := mat.NewDense(len(steps), 5, nil)
	y := mat.NewVecDense(len(steps), nil)
	for i, s := range steps {
		f := linearFeatures(&s.Batch)
		for j, v := range f {
			a.Set(i, j, v/s.MS) // features in µs-per-unit over ms: scaled below
		}
		y.SetVec(i, 1000) // the measured time over itself, in µs/ms
	}
	x, err := nnls(a, y)
	if err != nil {
		return cost.LinearConfig{}, err
	}
	c := cost.LinearConfig{C0US: x[0], C1USPerPrefillToken: x[1], C2USPerDecodeSeq: x[2],
		C3USPerDecodeContextToken: x[3], C4USPerPrefillTokenContext: x[4]}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// nnls solves min ‖A·x − y‖ subject to x ≥ 0 by Lawson and Hanson's
// active-set method ("Solving Least Squares Problems", 1974, ch. 23), each
// unconstrained sub-problem solved by gonum's QR least squares.
func nnls(a *mat.Dense, y *mat.VecDense) ([]float64, error) {
	_, n := a.Dims()
	// Scale columns to unit norm: the features span many orders of magnitude.
	scale := make([]float64, n)
	as := mat.DenseCopyOf(a)
	for j := range n {
		scale[j] = mat.Norm(as.ColView(j), 2)
		if scale[j] == 0 {
			scale[j] = 1
		}
		for i := range as.RawMatrix().Rows {
			as.Set(i, j, as.At(i, j)/scale[j])
		}
	}
	x := make([]float64, n)
	passive := make([]bool, n)
	grad := func() []float64 { // Aᵀ(y − A x)
		var ax mat.VecDense
		ax.MulVec(as, mat.NewVecDense(n, x))
		var r mat.VecDense
		r.SubVec(y, &ax)
		var g mat.VecDense
		g.MulVec(as.T(), &r)
		return g.RawVector().Data
	}
	solve := func() ([]float64, error) { // least squares on the passive set
		var cols []int
		for j := range n {
			if passive[j] {
				cols = append(cols, j)
			}
		}
		m, _ := as.Dims()
		sub := mat.NewDense(m, len(cols), nil)
		for k, j := range cols {
			for i := range m {
				sub.Set(i, k, as.At(i, j))
			}
		}
		var z mat.VecDense
		if err := z.SolveVec(sub, y); err != nil {
			return nil, err
		}
		out := make([]float64, n)
		for k, j := range cols {
			out[j] = z.AtVec(k)
		}
		return out, nil
	}
	const tol = 1e-10
	for iter := 0; iter < 3*n+10; iter++ {
		g := grad()
		best, at := tol, -1
		for j := range n {
			if !passive[j] && g[j] > best {
				best, at = g[j], j
			}
		}
		if at < 0 {
			break
		}
		passive[at] = true
		for inner := 0; inner < 3*n+10; inner++ {
			z, err := solve()
			if err != nil {
				return nil, err
			}
			ok := true
			for j := range n {
				if passive[j] && z[j] <= 0 {
					ok = false
				}
			}
			if ok {
				copy(x, z)
				break
			}
			alpha := math.Inf(1)
			for j := range n {
				if passive[j] && z[j] <= 0 {
					alpha = min(alpha, x[j]/(x[j]-z[j]))
				}
			}
			for j := range n {
				if passive[j] {
					x[j] += alpha * (z[j] - x[j])
					if x[j] <= tol {
						x[j], passive[j] = 0, false
					}
				}
			}
		}
	}
	for j := range n {
		x[j] /= scale[j]
	}
	return x, nil
}

// FitRoofline fits the roofline's efficiencies and overheads to steps,
// minimising the mean squared log error (Nelder–Mead over logistic maps of
// each field onto its range), starting from start. With CUDA-graph capture
// sizes (graphs non-empty: the steps were timed on a server replaying
// graphs) the steps are priced under graphs and the graph's kernel floor
// (graph_kernel_overhead_us) is fitted beside the eager one.
func FitRoofline(model cost.ModelSpec, gpu cost.GPUSpec, tp int, start cost.RooflineConfig, graphs []int, steps []Step) (cost.RooflineConfig, error) {
	cfg := start
	fields := []fitField{{&cfg.ComputeEfficiency, 0.1, 1}, {&cfg.MemoryEfficiency, 0.1, 1},
		{&cfg.OverheadUS, 0, 50000}, {&cfg.SeqOverheadUS, 0, 1000}, {&cfg.KernelOverheadUS, 0, 100}}
	if len(graphs) > 0 {
		fields = append(fields, fitField{&cfg.GraphKernelOverheadUS, 0, 100})
	}
	err := minimizeFields(fields, 4000, func() (float64, error) {
		r, err := cost.NewRoofline(model, gpu, tp, cfg)
		if err == nil {
			r, err = r.WithCUDAGraphs(graphs)
		}
		if err != nil {
			return 0, err
		}
		var s float64
		for _, st := range steps {
			b := st.Batch
			d := math.Log(float64(r.StepNS(&b)) / 1e6 / st.MS)
			s += d * d
		}
		return s / float64(len(steps)), nil
	})
	if err != nil {
		return start, err
	}
	return cfg, cfg.Validate()
}

// fitField is one number a fit moves, within [lo, hi].
type fitField struct {
	p      *float64
	lo, hi float64
}

// minimizeFields moves fields to minimise loss, which reads them through
// their pointers: Nelder–Mead over logistic maps of each field onto its
// range, starting from the fields' values (nudged inside the range), for
// at most evals evaluations. It leaves the fields at the best point found.
// An error from loss stops the search and is returned.
func minimizeFields(fields []fitField, evals int, loss func() (float64, error)) error {
	x0 := make([]float64, len(fields))
	for i, f := range fields {
		v := min(max(*f.p, f.lo+1e-3*(f.hi-f.lo)), f.hi-1e-3*(f.hi-f.lo))
		x0[i] = logit((v - f.lo) / (f.hi - f.lo))
	}
	set := func(x []float64) {
		for i, f := range fields {
			*f.p = f.lo + (f.hi-f.lo)*sigmoid(x[i])
		}
	}
	var lossErr error
	problem := optimize.Problem{Func: func(x []float64) float64 {
		set(x)
		l, err := loss()
		if err != nil {
			lossErr = err
			return math.Inf(1)
		}
		return l
	}}
	res, err := optimize.Minimize(problem, x0, &optimize.Settings{FuncEvaluations: evals}, &optimize.NelderMead{})
	if lossErr != nil {
		return lossErr
	}
	if err != nil && res == nil {
		return err
	}
	set(res.X)
	return nil
}
