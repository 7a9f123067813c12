package main

import "github.com/itlsim/itlsim/reports/outfiles"

// The output files of an invocation: written all or nothing, never over an
// input (see package outfiles).
type (
	tempFiles = outfiles.Temps
	outputs   = outfiles.Outputs
	outFile   = outfiles.File
)

var errStopped = outfiles.ErrStopped

func newTempFiles() *tempFiles             { return outfiles.NewTemps() }
func newOutputs(temps *tempFiles) *outputs { return outfiles.New(temps) }
